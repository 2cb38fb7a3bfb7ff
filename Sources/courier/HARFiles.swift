import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The HAR files `--har FILE` asks for, one ``HARRecorder`` per file however many sessions the command makes,
/// completed when the command ends (``Output/exitOnFailure(cancelsOnSignal:reportsErrors:_:)``), whether it
/// succeeded or not: a failed request is an entry too.
enum HARFiles {
    private static let recorders = Locked<[String: HARRecorder]>([:])

    /// The recorder writing to `path`, started the first time it is asked for.
    static func recorder(for path: String) throws -> HARRecorder {
        try recorders.withLock { recorders in
            if let recorder = recorders[path] { return recorder }
            let recorder = try HARRecorder(url: URL(filePath: path))
            recorders[path] = recorder
            return recorder
        }
    }

    /// Completes every file started; throws the first failure, after trying them all.
    static func finishAll() throws {
        let started = recorders.withLock { recorders in
            defer { recorders = [:] }
            return Array(recorders.values)
        }
        var failure: (any Error)?
        for recorder in started {
            do { try recorder.finish() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}
