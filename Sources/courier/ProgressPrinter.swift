import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Shows download or upload progress on stderr: a bar redrawn in place on a terminal, otherwise a plain line at most
/// once a second (for logs and pipes).
final class ProgressPrinter: Sendable {
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let lastLine = Locked<(time: ContinuousClock.Instant?, drawn: Bool)>((nil, false))

    /// Shows one event: progress as the bar or a line, restarts and retries as their own lines.
    func show(_ event: DownloadEvent) {
        switch event {
        case .progress(let progress): show(progress)
        case .resumed, .restarted, .retrying: line(event.description)
        default: break
        }
    }

    /// Prints a line of its own, below the bar.
    func line(_ text: String) {
        clearBar()
        Output.stderr(text)
    }

    /// Ends the bar line.
    func end() { clearBar() }

    /// Shows one progress value.
    func show(_ progress: TransferProgress) {
        guard progress.completedBytes > 0 else { return }  // nothing moved yet: a failure to start says so itself
        let now = ContinuousClock.now
        let due = lastLine.withLock { state -> Bool in
            guard isTerminal || state.time.map({ $0.duration(to: now) >= .seconds(1) }) ?? true else { return false }
            state.time = now
            state.drawn = isTerminal
            return true
        }
        guard due else { return }
        guard isTerminal else {
            Output.stderr(progress.description)
            return
        }
        let width = 24
        let filled = Int((progress.fraction ?? 0) * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        Output.stderrText("\r[\(bar)] \(progress)\u{1B}[K")
    }

    private func clearBar() {
        let drawn = lastLine.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { Output.stderrText("\r\u{1B}[K") }
    }
}
