import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One segment of a download, fetched to its end: each attempt asks for the bytes the segment still misses, the
/// answer is judged by its range, the body is written in place, and the call machine decides the retries.
extension DownloadTransfer {
    /// Fetches segment `index` to its end. Each attempt asks for the bytes the segment still misses; the call
    /// machine decides after each failure, asking the download's rule (``DownloadRetryRule``) with the attempts
    /// since the segment last kept bytes, whether and when the next one starts.
    func fetchSegment(_ index: Int, _ part: PartFile) async throws {
        let rule = DownloadRetryRule(options)
        let asked = PreparedRequest(method: .get, url: url)
        var machine = CallStateMachine(continuing: asked)
        var action = machine.start()
        var failure = CourierError.cancelled()  // what ended the last attempt, for the retrying event
        while true {
            switch action {
            case .exchange, .resend:
                action = try await attempt(index, part, &machine)
            case .askRetryRule(let error):
                failure = error
                action = machine.asking(rule, about: asked, action)
            case .wait(let delay):
                notify(.retrying(attempt: machine.attemptsInARow, error: failure))
                try await Task.sleep(for: delay)
                if !options.resumable, live.segment(index).written > 0 {
                    try startOver(part)
                    notify(.restarted(reason: "the download is not resumable, so the retry starts from the first byte"))
                }
                action = machine.slept()
            case .done:
                return
            case .fail(let error):
                throw error
            case .deliver, .refresh:
                // A range answer is reported with reading(), and a download carries no credential to refresh.
                throw CourierError(code: .invalidState, message: "the segment's machine met \(action) out of turn")
            }
        }
    }

    /// One attempt for what segment `index` still misses, reported to `machine`: the range answer, then how the
    /// body ended. A reason to start over is thrown rather than reported: it is the transfer's, not a retry.
    private func attempt(
        _ index: Int,
        _ part: PartFile,
        _ machine: inout CallStateMachine
    ) async throws -> CallStateMachine.Action {
        let before = live.segment(index).written
        let writer = SegmentWriter(self, segment: index, part: part)
        var failure: CourierError?
        do { try await fetch(writer) } catch is SegmentWriter.Whole {
            // every byte asked for is written; the rest was not
        } catch let error as CourierError {
            failure = error
        }
        guard writer.isReading else { return machine.failed(failure ?? CourierError.noResponse()) }
        _ = machine.reading()
        // A segment whose bytes are all written is whole, whatever the rest of its answer met.
        if live.segment(index).isDone { return machine.bodyEnded() }
        if let failure = failure ?? unfinished(index) {
            // Progress resets the count only when the next attempt keeps it.
            if options.resumable, live.segment(index).written > before { machine.progressed() }
            return machine.bodyFailed(failure)
        }
        return machine.bodyEnded()
    }

    /// Sends `writer`'s request and hands it the answer: the head, then each chunk once the bandwidth limits let
    /// it through.
    private func fetch(_ writer: SegmentWriter) async throws {
        let response = try await session.streamAsSent(writer.request)
        try writer.head(response)
        for try await chunk in response.body {
            for limit in limits { try await limit.take(chunk.readableBytes) }
            try writer.write(chunk)
        }
    }

    /// Why segment `index`, not whole, fell short when its body ended; `nil` for a body without a length, which ends
    /// the segment when the server says so.
    private func unfinished(_ index: Int) -> CourierError? {
        let segment = live.segment(index)
        if segment.end == nil {
            live.finishOpenEnded(index)
            return nil
        }
        return CourierError(
            code: .connectionClosed,
            message: "the body ended at byte \(segment.next) of \(segment.end ?? 0)"
        )
    }
}
