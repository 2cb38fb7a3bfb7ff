import ArgumentParser
import Courier
import Foundation
import UnixSignals

/// Where the CLI writes, and how it turns failures into one line and an exit code.
enum Output {
    static func stdout(_ data: Data) { FileHandle.standardOutput.write(data) }

    static func stdout(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    /// Text on stdout as it is, with no newline added (`-w`).
    static func stdoutText(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    static func stderr(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

    /// Runs `body`; any error but an exit code becomes one line on stderr (a ``CourierError`` prints as
    /// `code: message`) and the exit code ``ExitStatus`` gives it. With `cancelsOnSignal`, SIGINT and SIGTERM
    /// cancel `body`, which cleans up as a cancelled task does, and the command ends with 130.
    static func exitOnFailure(
        cancelsOnSignal: Bool = true,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        let interrupted = Locked(false)
        // The handlers are in place before the work starts (the same mechanism as `CommandServices`).
        let signals = cancelsOnSignal ? await UnixSignalsSequence(trapping: .sigint, .sigterm) : nil
        let work = Task { try await CommandScope.run(body) }
        let watcher = signals.map { signals in
            Task {
                for await _ in signals {
                    interrupted.withLock { $0 = true }
                    work.cancel()
                }
            }
        }
        defer { watcher?.cancel() }
        do {
            try await work.value
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let failure: any Error = error is Interrupted || !interrupted.withLock({ $0 }) ? error : Interrupted()
            stderr("courier: \(failure)")
            throw ExitStatus.of(failure).exitCode
        }
    }
}
