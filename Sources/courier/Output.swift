import ArgumentParser
import Courier
import UnixSignals

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI writes, and how it turns failures into one line and an exit code.
///
/// A write to stdout that fails throws ``OutputFailure`` (exit 23; a closed pipe ends quietly); a write to stderr
/// that fails is dropped, since there is nowhere left to say so. Neither traps, as `FileHandle.write` would.
enum Output {
    static func stdout(_ data: Data) throws {
        let failure = data.withUnsafeBytes { DescriptorWrite.all($0, to: STDOUT_FILENO) }
        if let failure { throw OutputFailure.standardOutput(errno: failure) }
    }

    static func stdout(_ line: String) throws { try stdoutText(line + "\n") }

    /// Text on stdout as it is, with no newline added (`-w`).
    static func stdoutText(_ text: String) throws {
        if let failure = DescriptorWrite.all(text, to: STDOUT_FILENO) {
            throw OutputFailure.standardOutput(errno: failure)
        }
    }

    static func stderr(_ line: String) { stderrText(line + "\n") }

    /// Text on stderr as it is (a progress bar's carriage return); a failed write is dropped.
    static func stderrText(_ text: String) { _ = DescriptorWrite.all(text, to: STDERR_FILENO) }

    /// Makes a closed pipe a write error (EPIPE) rather than a signal that ends the process mid-write, as curl
    /// does: called once, when the CLI starts.
    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    /// Runs `body`; any error but an exit code becomes one line on stderr (a ``CourierError`` prints as
    /// `code: message`; none under `-s` without `-S`, `reportsErrors` false, except a usage error) and the exit code ``ExitStatus`` gives
    /// it. With `cancelsOnSignal`, SIGINT and SIGTERM
    /// cancel `body`, which cleans up as a cancelled task does, and the command ends with 130.
    static func exitOnFailure(
        cancelsOnSignal: Bool = true,
        reportsErrors: Bool = true,
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
            do { try await work.value } catch {
                try? HARFiles.finishAll()  // a failed request is an entry too; the command's own error is told
                throw error
            }
            try HARFiles.finishAll()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let failure: any Error = error is Interrupted || !interrupted.withLock({ $0 }) ? error : Interrupted()
            let status = ExitStatus.of(failure)
            // A usage error is told even under -s, as an unknown option is: it is the caller's to fix, not the
            // transfer's.
            if reportsErrors || status == .usage, (failure as? OutputFailure)?.isClosedPipe != true {
                stderr("courier: \(failure)")
            }
            throw status.exitCode
        }
    }
}
