import Courier
import Foundation

/// One contender in a file transfer scenario: something that fetches the whole file into the given path.
struct TransferContender: Sendable {
    var name: String
    var fetch: @Sendable (URL) async throws -> Void
}

enum Transfers {
    /// A new directory under the system's temporary directory (the same filesystem as the part files).
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-bench-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes `bytes` bytes of a repeating, not very compressible pattern to `url`, 1 MiB at a time.
    static func writeFile(_ url: URL, bytes: Int) throws {
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt32 = 2_463_534_242
        for index in block.indices {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            block[index] = UInt8(truncatingIfNeeded: state)
        }
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchError.unexpected("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0
        while written < bytes {
            let count = min(block.count, bytes - written)
            try handle.write(contentsOf: block[0..<count])
            written += count
        }
    }

    /// Lets every contender fetch the file `rounds` times, taking turns (order reversed every other round);
    /// checks each file's size, removes it, flushes the disk (untimed), and reports each contender's median rate
    /// in MB/s.
    static func compare(
        _ contenders: [TransferContender],
        bytes: Int,
        rounds: Int,
        in directory: URL
    ) async throws -> [String: Double] {
        var samples: [String: [Double]] = [:]
        for round in 0..<rounds {
            for contender in round % 2 == 0 ? contenders : contenders.reversed() {
                let file = directory.appendingPathComponent("\(contender.name)-\(round).bin")
                let start = ContinuousClock.now
                try await contender.fetch(file)
                let elapsed = start.duration(to: .now).seconds
                let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
                try? FileManager.default.removeItem(at: file)
                sync()  // untimed: the next run does not pay for writing this one's pages out (curl leaves them dirty)
                guard size == bytes else {
                    throw BenchError.unexpected("\(contender.name) wrote \(size) of \(bytes) bytes")
                }
                samples[contender.name, default: []].append(Double(bytes) / 1e6 / elapsed)
            }
        }
        return samples.mapValues(Throughput.median)
    }
}

/// The largest peak resident memory over several runs, each measured by ``MemoryUse`` from a reset before it.
final class PeakRSS: Sendable {
    private let peak = Locked<Double>(0)

    func reset() { MemoryUse.resetPeak() }

    func sample() {
        guard let mib = MemoryUse.peakMiB() else { return }
        peak.withLock { $0 = max($0, mib) }
    }

    var peakMiB: Double { peak.withLock { $0 } }

    /// The figure and the issues' target, for a scenario's notes.
    var note: String { String(format: "courier peak RSS %.0f MiB (target <= 64, whole process)", peakMiB) }
}

/// External tools (curl, aria2c): found on the PATH, run to completion.
enum Tools {
    /// `name` on the PATH; when it is missing, says in `notes` that the contender was left out.
    static func find(_ name: String, noting notes: inout String) -> URL? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        let tool = paths.map { URL(filePath: String($0)).appendingPathComponent(name) }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
        if tool == nil { notes += "\(name) is not installed, so it was left out; " }
        return tool
    }

    /// Flushes `file` to the disk, as a download that promises a durable file does before it reports done.
    static func fsync(_ file: URL) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// This executable, for the scenarios that measure a contender alone in a child process.
    static var benchmark: URL { URL(filePath: "/proc/self/exe").resolvingSymlinksInPath() }

    /// Runs `tool`, waits for it to exit 0, and returns what it wrote to stdout (through a file, so a long output
    /// cannot fill a pipe nobody reads yet).
    static func output(_ tool: URL, _ arguments: [String]) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BenchError.unexpected("cannot create \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        try await run(tool, arguments, standardOutput: handle)
        try handle.close()
        return String(decoding: try Data(contentsOf: file), as: UTF8.self)
    }

    /// Runs `tool` and waits (without blocking a thread) for it to exit 0.
    static func run(_ tool: URL, _ arguments: [String], standardOutput: FileHandle = .nullDevice) async throws {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = standardOutput
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else { throw BenchError.unexpected("\(tool.lastPathComponent) exited with \(status)") }
    }
}
