import Foundation
import HTTPTypes
import NIOCore

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
        let body: (bytes: ByteStream, offset: Int64)?
        do { body = try await askForMissing(index, part) } catch let error as CourierError {
            return machine.failed(error)
        }
        _ = machine.reading()
        do {
            if let body { try await write(body.bytes, segment: index, from: body.offset, part) }
            let segment = live.segment(index)
            if segment.isDone { return machine.bodyEnded() }
            if segment.end == nil {
                live.finishOpenEnded(index)  // a body without a length ends when the server says so
                return machine.bodyEnded()
            }
            throw CourierError(
                code: .connectionClosed,
                message: "the body ended at byte \(segment.next) of \(segment.end ?? 0)"
            )
        } catch let error as CourierError {
            // Progress resets the count only when the next attempt keeps it.
            if options.resumable, live.segment(index).written > before { machine.progressed() }
            return machine.bodyFailed(error)
        }
    }

    /// Asks for what segment `index` still misses and judges the answer by its range: the body to write from the
    /// byte it starts at, or `nil` when nothing is missing after all.
    private func askForMissing(_ index: Int, _ part: PartFile) async throws -> (bytes: ByteStream, offset: Int64)? {
        let record = live.snapshot()
        let segment = record.segments[index]
        let range = segment.missing
        var request = options.request(.get, url)
        if range.isPartial {
            request = request.header("Range", range.header)
            if let ifRange = record.validator.ifRange { request = request.header("If-Range", ifRange) }
        }
        let response = try await session.stream(request)
        let isKnown = record.totalLength != nil || record.validator != EntityValidator()
        let answer = RangeAnswer.decide(
            request: range,
            status: response.status,
            headers: response.headers,
            known: isKnown ? record.validator : nil,
            knownLength: record.totalLength,
            localLength: segment.next
        )
        switch answer {
        case .write(let offset, let length):
            if !isKnown { live.adopt(validator: EntityValidator(response.headers), totalLength: length) }
            return (response.body, offset)
        case .replace(let length):
            guard record.segments.count == 1 else {
                throw RestartSignal(
                    reason: "the server sent the whole file to a segment request; going on with one connection",
                    dropsSegments: true
                )
            }
            try startOver(part)
            live.adopt(validator: EntityValidator(response.headers), totalLength: length)
            notify(.restarted(reason: "the server answered the resume request with the whole file (HTTP 200)"))
            return (response.body, 0)
        case .restart:
            throw RestartSignal(
                reason: "the server's answer (HTTP \(response.status.code)) does not continue the partial file"
            )
        case .complete(let length):
            live.complete(index, length: length)
            return nil
        case .fail(let error) where error.code == .httpStatus:
            // Said with the URL that answered (redacted), so a failed download names what it asked for.
            throw CourierError.httpStatus(
                response.status,
                bodyPreview: nil,
                url: Redactor.standard.redact(url: response.url)
            )
        case .fail(let error):
            throw error
        }
    }

    /// Writes `body` at `offset` onwards, never past the segment's end, counting every byte written.
    private func write(_ body: ByteStream, segment index: Int, from offset: Int64, _ part: PartFile) async throws {
        let metrics = CourierMetrics(factory: session.currentConfiguration.metricsFactory)
        var position = offset
        let end = live.segment(index).end
        var chunks = body.makeAsyncIterator()
        while var chunk = try await chunks.next() {
            if let end, position + Int64(chunk.readableBytes) > end {
                chunk = chunk.getSlice(at: chunk.readerIndex, length: Int(end - position)) ?? chunk
            }
            let count = chunk.readableBytes
            for limit in limits { try await limit.take(count) }
            try part.write(chunk, at: position)
            position += Int64(count)
            live.advance(index, by: Int64(count))
            metrics.downloaded(count)
            if let end, position >= end {
                // The segment is whole. Its answer ends here too when the server sent what was asked, and reading
                // that end lets the exchange end as read, not as a body dropped (which the monitors, the metrics and
                // the span heard as a cancel); a server that sends more is stopped here. The bytes are written, so
                // whatever this read meets cannot fail the segment.
                _ = try? await chunks.next()
                break
            }
        }
    }
}
