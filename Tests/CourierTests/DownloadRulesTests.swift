import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Download rules: Content-Range, the resume answers, records, file names, the state machine, the queue")
struct DownloadRulesTests {
    // MARK: Content-Range

    @Test func contentRangeParsesTheThreeForms() {
        #expect(
            ContentRange("bytes 0-499/1234")?.range == 0...499
                && ContentRange("bytes 0-499/1234")?.completeLength == 1234
        )
        #expect(ContentRange("bytes 10-19/*")?.completeLength == nil)
        #expect(ContentRange("bytes */1234")?.range == nil && ContentRange("bytes */1234")?.completeLength == 1234)
        for bad in [
            "bytes 5-4/10", "bytes 0-10/10", "bytes */*", "items 0-1/2", "bytes -1-2/3", "bytes 0-1", "bytes a-b/c",
            "bytes 0-+1/5",
        ] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    // MARK: Resume answers

    func headers(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    let known = EntityValidator(etag: "\"v1\"", lastModified: "Sat, 21 Nov 2026 12:00:00 GMT")

    func decide(
        _ request: ByteRangeRequest,
        _ status: Int,
        _ pairs: [(String, String)],
        local: Int64 = 0
    ) -> RangeAnswer {
        RangeAnswer.decide(
            request: request,
            status: HTTPResponse.Status(code: status),
            headers: headers(pairs),
            known: known,
            knownLength: 1000,
            localLength: local
        )
    }

    @Test func aMatching206Appends() {
        let resume = ByteRangeRequest(start: 400, end: nil)
        #expect(
            decide(
                resume,
                206,
                [("Content-Range", "bytes 400-999/1000"), ("ETag", "\"v1\""), ("Content-Length", "600")]
            )
                == .write(offset: 400, completeLength: 1000)
        )
        let segment = ByteRangeRequest(start: 250, end: 500)
        #expect(
            decide(segment, 206, [("Content-Range", "bytes 250-499/1000")]) == .write(offset: 250, completeLength: 1000)
        )
    }

    @Test func aMismatched206FailsAndAChangedValidatorRestarts() {
        let resume = ByteRangeRequest(start: 400, end: nil)
        for range in ["bytes 401-999/1000", "bytes 400-998/1000", "bytes 400-1199/1200", "nonsense"] {
            guard case .fail(let error) = decide(resume, 206, [("Content-Range", range)]) else {
                Issue.record("\(range) was accepted")
                continue
            }
            #expect(error.code == .rangeMismatch)
        }
        guard
            case .fail(let short) = decide(
                resume,
                206,
                [("Content-Range", "bytes 400-999/1000"), ("Content-Length", "599")]
            )
        else {
            Issue.record("a short Content-Length was accepted")
            return
        }
        #expect(short.code == .rangeMismatch)
        #expect(decide(resume, 206, [("Content-Range", "bytes 400-999/1000"), ("ETag", "\"v2\"")]) == .restart)
    }

    @Test func a200ReplacesAnd416CompletesOnlyAtTheLocalLength() {
        #expect(
            decide(ByteRangeRequest(start: 400, end: nil), 200, [("Content-Length", "1000")])
                == .replace(completeLength: 1000)
        )
        #expect(
            decide(ByteRangeRequest(start: 0, end: nil), 200, [("Content-Length", "1000")])
                == .write(offset: 0, completeLength: 1000)
        )
        #expect(
            decide(ByteRangeRequest(start: 1000, end: nil), 416, [("Content-Range", "bytes */1000")], local: 1000)
                == .complete(length: 1000)
        )
        #expect(
            decide(ByteRangeRequest(start: 1200, end: nil), 416, [("Content-Range", "bytes */1000")], local: 1200)
                == .restart
        )
        #expect(decide(ByteRangeRequest(start: 1000, end: nil), 416, [], local: 1000) == .restart)
        guard case .fail(let error) = decide(ByteRangeRequest(start: 0, end: nil), 404, []) else {
            Issue.record("404 was accepted")
            return
        }
        #expect(error.code == .httpStatus)
    }

    @Test func ifRangePrefersAStrongTag() {
        #expect(known.ifRange == "\"v1\"")
        #expect(EntityValidator(etag: "W/\"weak\"", lastModified: "date").ifRange == "date")
        #expect(EntityValidator().ifRange == nil)
        #expect(
            ByteRangeRequest(start: 5, end: 10).header == "bytes=5-9"
                && ByteRangeRequest(start: 5, end: nil).header == "bytes=5-"
        )
    }

    // MARK: Records

    @Test func aRecordRoundTripsAndEveryTruncationIsAbsent() throws {
        var record = ResumeRecord.fresh(url: "http://127.0.0.1:1/file/100")
        record.validator = known
        record.totalLength = 100
        record.segments = ResumeRecord.segments(totalLength: 100, connections: 4, minimumBytes: 10)
        record.segments[1].written = 7
        let data = try record.encoded()
        #expect(ResumeRecord.decode(data) == record)
        for length in 0..<data.count {
            #expect(ResumeRecord.decode(data.prefix(length)) == nil, "prefix \(length)")
        }
        var flipped = data
        flipped[flipped.count - 3] ^= 1
        #expect(ResumeRecord.decode(flipped) == nil)
    }

    @Test func segmentsCoverTheFileWithoutGaps() {
        let segments = ResumeRecord.segments(totalLength: 1003, connections: 4, minimumBytes: 100)
        #expect(segments.count == 4 && segments.first?.start == 0 && segments.last?.end == 1003)
        for (left, right) in zip(segments, segments.dropFirst()) { #expect(left.end == right.start) }
        #expect(ResumeRecord.segments(totalLength: 150, connections: 4, minimumBytes: 100).count == 1)
        var inconsistent = ResumeRecord.fresh(url: "x")
        inconsistent.totalLength = 10
        inconsistent.segments = [.init(start: 0, end: 20, written: 0)]
        #expect(!inconsistent.isConsistent)
    }

    // MARK: File names

    @Test func hostileNamesStayInsideTheDirectory() throws {
        let directory = URL(filePath: "/tmp/downloads")
        let hostile = [
            "../../etc/passwd", "..", ".", "/abs/path.txt", "a\\b\\..\\c.txt", "evil\u{0}name", "line\r\nbreak.txt",
            ".hidden", "   ", "", String(repeating: "é", count: 300),
        ]
        for name in hostile {
            let safe = DownloadFileName.sanitize(name)
            #expect(
                !safe.contains("/") && !safe.contains("\\") && !safe.hasPrefix(".") && !safe.isEmpty
                    && safe.utf8.count <= 255
            )
            #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            let file = try DownloadFileName.destination(for: name, in: directory)
            #expect(file.deletingLastPathComponent().path == "/tmp/downloads")
        }
        #expect(DownloadFileName.sanitize("../../etc/passwd") == "passwd")
    }

    @Test func contentDispositionNamesWinOverTheURL() {
        let url = URL(string: "http://h/files/report%20final.pdf?x=1")!
        #expect(DownloadFileName.suggested(contentDisposition: nil, url: url) == "report final.pdf")
        #expect(
            DownloadFileName.suggested(contentDisposition: "attachment; filename=\"a \\\"quoted\\\".txt\"", url: url)
                == "a \"quoted\".txt"
        )
        #expect(
            DownloadFileName.suggested(
                contentDisposition: "attachment; filename=plain.bin; filename*=UTF-8''na%C3%AFve.txt",
                url: url
            )
                == "naïve.txt"
        )
        #expect(
            DownloadFileName.suggested(contentDisposition: "attachment; filename=\"../../x/.bashrc\"", url: url)
                == "bashrc"
        )
        #expect(DownloadFileName.suggested(contentDisposition: "inline", url: URL(string: "http://h/")!) == "download")
    }

    // MARK: State machine

    @Test func theTransitionTableIsWhatTheDocsSay() {
        var machine = DownloadStateMachine()
        #expect(machine.handle(.start) == .enqueue && machine.state == .waiting)
        #expect(machine.handle(.slotGranted) == .beginTransfer && machine.state == .running)
        #expect(machine.handle(.pause) == .stopTransfer && machine.state == .paused)
        #expect(machine.handle(.start) == .enqueue && machine.state == .waiting)
        #expect(machine.handle(.slotGranted) == .beginTransfer)
        #expect(machine.handle(.failed) == .report && machine.state == .failed)
        #expect(machine.handle(.restart) == .discardAndEnqueue && machine.state == .waiting)
        #expect(machine.handle(.pause) == .report && machine.state == .paused)
        #expect(machine.handle(.cancel) == .stopAndDiscard && machine.state == .cancelled)
        #expect(!machine.canHandle(.pause) && !machine.canHandle(.start) && machine.canHandle(.restart))

        // Every state/event pair is either in the table or refused; final states accept only restart (and
        // failed also start and cancel).
        for state in DownloadState.allCases {
            let allowed = Set(DownloadStateMachine.transitions[state]?.keys.map(\.rawValue) ?? [])
            for event in DownloadStateMachine.Event.allCases {
                #expect(DownloadStateMachine(state: state).canHandle(event) == allowed.contains(event.rawValue))
            }
        }
        #expect(Set(DownloadStateMachine.transitions[.completed]!.keys) == [.restart])
        #expect(!DownloadStateMachine(state: .running).canHandle(.start))
        #expect(!DownloadStateMachine(state: .idle).canHandle(.finished))
    }

    // MARK: Queue

    @Test func theQueueRespectsTheLimitAndPriorities() {
        let ids = (0..<5).map { DownloadID(destination: URL(filePath: "/tmp/\($0)")) }
        var queue = DownloadScheduler(limit: 2)
        queue.enqueue(ids[0], priority: .low)
        queue.enqueue(ids[1], priority: .normal)
        queue.enqueue(ids[2], priority: .high)
        queue.enqueue(ids[3], priority: .normal)
        queue.enqueue(ids[3], priority: .normal)
        #expect(queue.waitingInOrder == [ids[2], ids[1], ids[3], ids[0]])
        #expect(queue.next() == ids[2] && queue.next() == ids[1] && queue.next() == nil)
        queue.removeWaiting(ids[3])
        queue.slotFreed(ids[2])
        #expect(queue.next() == ids[0] && queue.running == [ids[1], ids[0]])
        // Queued again before its slot is freed (resumed the moment it failed): it waits for the slot, then runs.
        queue.enqueue(ids[1], priority: .normal)
        #expect(queue.next() == nil && queue.waitingInOrder == [ids[1]])
        queue.slotFreed(ids[1])
        #expect(queue.next() == ids[1] && queue.running == [ids[1], ids[0]] && queue.waitingInOrder.isEmpty)
    }

    // MARK: Progress and limits

    @Test func progressComputesFractionRateAndETA() {
        var meter = RateMeter()
        let start = ContinuousClock.now
        _ = meter.record(0, at: start)
        let rate = meter.record(1000, at: start + .seconds(1))
        #expect(abs(rate - 1000) < 1)
        let progress = DownloadProgress(completedBytes: 250, totalBytes: 1000, bytesPerSecond: 250)
        #expect(progress.fraction == 0.25 && progress.estimatedTimeRemaining == .seconds(3))
        #expect(progress.description == "250 B of 1000 B (25%), 250 B/s, 3 s left")
        #expect(DownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: 0).fraction == 1)
    }

    /// A transfer done before a second sample still has a rate: it counts from the transfer's start (the CLI's
    /// progress line said `0 B/s` for a fast download).
    @Test func theFirstSampleHasARateFromTheStart() {
        let start = ContinuousClock.now
        var meter = RateMeter(from: 0, at: start)
        #expect(abs(meter.record(500, at: start + .milliseconds(250)) - 2000) < 1)
        meter.reset(from: 4000)
        #expect(meter.record(4000) == 0)
    }

    @Test func checksumsRejectWhatIsNotADigest() throws {
        #expect(throws: CourierError.self) { try DownloadChecksum.sha256("abc") }
        #expect(throws: CourierError.self) { try DownloadChecksum(.md5, hex: String(repeating: "z", count: 32)) }
        let checksum = try DownloadChecksum(.sha1, hex: String(repeating: "A", count: 40))
        #expect(checksum.hex == String(repeating: "a", count: 40) && checksum.description.hasPrefix("sha1:"))
    }

    /// The download's rule is a ``RequestRetrier`` like the session's: transient failures only, up to `retries` in
    /// a row, the delay doubling from `retryDelay` up to 8 s.
    @Test func theDownloadsRetryRuleRetriesTransientFailuresWithADoublingDelay() {
        let rule = DownloadRetryRule(DownloadOptions(retries: 3, retryDelay: .milliseconds(250)))
        let request = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/f")!)
        let reset = CourierError(code: .connectionReset, message: "reset")
        #expect(rule.retry(request, failedWith: reset, attempt: 1) == .retry(after: .milliseconds(250)))
        #expect(rule.retry(request, failedWith: reset, attempt: 3) == .retry(after: .seconds(1)))
        guard case .doNotRetry = rule.retry(request, failedWith: reset, attempt: 4) else {
            Issue.record("a fourth retry")
            return
        }
        let missing = CourierError.httpStatus(.notFound, bodyPreview: nil)
        guard case .doNotRetry = rule.retry(request, failedWith: missing, attempt: 1) else {
            Issue.record("a 404 retried")
            return
        }
        #expect(
            rule.retry(request, failedWith: .httpStatus(.serviceUnavailable, bodyPreview: nil), attempt: 1)
                == .retry(after: .milliseconds(250))
        )
        let long = DownloadRetryRule(DownloadOptions(retries: 20, retryDelay: .seconds(1)))
        #expect(long.retry(request, failedWith: reset, attempt: 12) == .retry(after: .seconds(8)))
    }

    /// The rule's other half: what a queued job is never tried again for.
    @Test func aQueuedDownloadFailsForGoodOnlyWhenNoLaterAttemptCanMendIt() {
        let permanent: [CourierError] = [
            .httpStatus(.notFound, bodyPreview: nil), .httpStatus(.forbidden, bodyPreview: nil),
            CourierError(code: .integrity, message: "checksum"), CourierError(code: .fileAccess, message: "disk"),
        ]
        let later: [CourierError] = [
            .httpStatus(.tooManyRequests, bodyPreview: nil), .httpStatus(.requestTimeout, bodyPreview: nil),
            .httpStatus(.serviceUnavailable, bodyPreview: nil), CourierError(code: .connectionReset, message: "reset"),
            .timeout(.total, after: .seconds(1), url: "https://h.example.com/f"),
        ]
        #expect(permanent.filter { !$0.isPermanentForDownloads }.isEmpty)
        #expect(later.filter(\.isPermanentForDownloads).isEmpty)
    }
}
