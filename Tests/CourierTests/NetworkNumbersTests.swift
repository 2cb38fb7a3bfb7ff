import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Numbers a server or a file controls, at the edges of their types: every one is a typed answer, never a trap.
/// Each property runs over the edges and a seeded spread of values in between.
@Suite("Numbers from the network: ports, Content-Range, resume records")
struct NetworkNumbersTests {
    static let edges: [Int64] = [
        0, 1, 2, 499, 500, 1000, Int64(Int32.max), Int64(UInt32.max), .max - 2, .max - 1, .max,
    ]

    // MARK: Ports

    @Test func portsOutside1To65535AreRefusedWithTheirReason() throws {
        for text in [
            "http://127.0.0.1:65536/", "http://[::1]:70000/", "http://h:0/", "http://h:99999999999999999999999/",
            "https://user:pw@h:123456789012345678901/x?y", "http://[::1]:99999999999999999999/",
        ] {
            let url = try #require(URL(string: text), "\(text)")
            #expect(url.portProblem != nil, "\(text)")
            #expect(URLBuilder.absoluteURL(text) == nil, "\(text)")
            let error = #expect(throws: CourierError.self) { try URLBuilder.validate(url) }
            #expect(error?.code == .invalidURL && error?.message.contains("port") == true, "\(text)")
        }
        for text in [
            "http://h/", "http://h:/", "http://h:1/", "http://h:65535/x", "http://[::1]/", "http://[::1]:8080/",
            "http://u:p@h:80/", "http://h/a:b", "http://h?x=:99999", "http://h#:99999",
        ] {
            #expect(try #require(URL(string: text)).portProblem == nil, "\(text)")
        }
    }

    @Test func aPortTooLongForAnIntIsNotTakenForNoPort() throws {
        // Foundation reads it as no port at all, which would connect to port 80 instead.
        let url = try #require(URL(string: "http://127.0.0.1:99999999999999999999999/"))
        #expect(url.port == nil)
        #expect(url.portProblem?.contains("99999999999999999999999") == true)
    }

    @Test func anErrorAboutAURLHidesItsPassword() {
        let error = CourierError.invalidURL("http://ada:hunter2@127.0.0.1:70000/")
        #expect(!error.message.contains("hunter2") && error.message.contains("port"))
    }

    @Test func aRedirectToAPortOutOfRangeIsRefused() throws {
        let start = try #require(URL(string: "http://a.example.com/start"))
        for location in [
            "http://127.0.0.1:99999/", "//a.example.com:65536/x", "http://h:0/", "http://h:99999999999999999999999/",
        ] {
            var state = RedirectState(policy: RedirectPolicy(), initial: .get, url: start)
            let error = #expect(throws: CourierError.self) {
                try state.next(method: .get, url: start, status: .found, location: location, bodyIsReplayable: true)
            }
            #expect(error?.code == .invalidURL && error?.message.contains("port") == true, "\(location)")
        }
    }

    // MARK: Content-Range

    @Test func aLastByteWhoseSuccessorOverflowsIsNotARange() {
        #expect(ContentRange("bytes 0-9223372036854775807/*") == nil)
        #expect(ContentRange("bytes 9223372036854775807-9223372036854775807/*") == nil)
        #expect(ContentRange("bytes 0-99999999999999999999/*") == nil)
        let widest = ContentRange("bytes 0-9223372036854775806/*")
        #expect(widest?.end == .max && widest?.length == .max)
    }

    @Test func everyContentRangeThatParsesHasAnEndAndALengthThatFit() {
        var random = SeededGenerator(seed: 41)
        var values = Self.edges
        for _ in 0..<200 { values.append(Int64.random(in: 0...Int64.max, using: &random)) }
        for first in values {
            for last in values.shuffled(using: &random).prefix(12) {
                for total in ["*", String(last), String(Int64.max), "1000"] {
                    guard let range = ContentRange("bytes \(first)-\(last)/\(total)") else { continue }
                    let (end, length) = (range.end, range.length)
                    #expect(end != nil && length != nil && end! > first && length! > 0)
                    if let complete = range.completeLength { #expect(end! <= complete) }
                }
            }
        }
    }

    @Test func theResumeRulesAnswerEveryHostileContentRangeWithoutATrap() {
        var random = SeededGenerator(seed: 42)
        var values = Self.edges
        for _ in 0..<60 { values.append(Int64.random(in: 0...Int64.max, using: &random)) }
        for start in values.prefix(20) {
            for last in values.shuffled(using: &random).prefix(8) {
                for declared in ["", "0", String(last), "9223372036854775807", "-1"] {
                    var fields: HTTPFields = [.contentRange: "bytes \(start)-\(last)/*"]
                    if !declared.isEmpty { fields[.contentLength] = declared }
                    for end in [nil, start &+ 1, Int64.max] as [Int64?] {
                        let request = ByteRangeRequest(start: start, end: end.map { max($0, start) })
                        let answer = RangeAnswer.decide(
                            request: request,
                            status: .partialContent,
                            headers: fields,
                            known: nil,
                            knownLength: nil,
                            localLength: start
                        )
                        if case .write(let offset, _) = answer { #expect(offset == start) }
                    }
                }
            }
        }
    }

    @Test func theOverflowingRangeOfTheIssueIsARangeMismatch() {
        let answer = RangeAnswer.decide(
            request: ByteRangeRequest(start: 500, end: nil),
            status: .partialContent,
            headers: [.contentRange: "bytes 500-9223372036854775807/*"],
            known: nil,
            knownLength: nil,
            localLength: 500
        )
        guard case .fail(let error) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(error.code == .rangeMismatch)
    }

    // MARK: Resume records

    @Test func aRecordWhoseNumbersOverflowIsInconsistentNotATrap() throws {
        var record = ResumeRecord.fresh(url: "http://h/f")
        for (start, written) in [(Int64.max, Int64(1)), (1, Int64.max), (Int64.max - 1, Int64.max)] {
            record.segments = [ResumeRecord.Segment(start: start, end: nil, written: written)]
            #expect(!record.isConsistent)
            #expect(ResumeRecord.decode(try record.encoded()) == nil)
        }
        record.segments = [ResumeRecord.Segment(start: 0, end: .max, written: .max)]
        #expect(record.isConsistent && record.segments[0].isDone)
    }
}

/// The numbers of the cache and the retry rules: delta-seconds, `Age`, dates; none traps, whatever a server sends.
@Suite("Numbers from the network: delta-seconds, Age, dates")
struct CacheNumbersTests {
    @Test func deltaSecondsAreDigitsOnlyAndSaturateAt2To31() {
        #expect(DeltaSeconds.parse("0") == 0 && DeltaSeconds.parse("3600") == 3600)
        #expect(DeltaSeconds.parse("2147483648") == DeltaSeconds.limit)
        #expect(DeltaSeconds.parse(String(repeating: "9", count: 400)) == DeltaSeconds.limit)
        for bad in ["", "+5", "-5", "7200.0", "1e3", "inf", "nan", " 5", "5 ", "0x10", "٣"] {
            #expect(DeltaSeconds.parse(bad) == nil, "\(bad)")
        }
        #expect(CacheControl([.cacheControl: "max-age=99999999999999999999999"]).maxAge == DeltaSeconds.limit)
        #expect(CacheControl([.cacheControl: "max-age=-5"]).maxAge == 0)  // invalid: stale (§4.2.1)
    }

    @Test func theFirstValidAgeCountsAndAHostileOneIsIgnored() {
        func age(_ values: [String]) -> Int {
            var fields = HTTPFields()
            for value in values { fields.append(HTTPField(name: .age, value: value)) }
            return HTTPFreshness.ageValue(fields)
        }
        #expect(age(["10"]) == 10)
        #expect(age(["7200.0"]) == 0)
        #expect(age(["7200.0", "30"]) == 30)
        #expect(age(["abc, 20, 40"]) == 20)
        #expect(age(["50", "60"]) == 50)
        #expect(age(["inf"]) == 0 && age(["1e300"]) == 0 && age(["nan"]) == 0 && age(["-1"]) == 0)
        #expect(age(["99999999999999999999999999"]) == DeltaSeconds.limit)
        let now = Date()
        let initial = HTTPFreshness.initialAge(
            headers: [.age: "99999999999999999999999999"],
            requestTime: now,
            responseTime: now
        )
        #expect(initial == .seconds(DeltaSeconds.limit))
    }

    @Test func datesWithHostileYearsNeverTrap() {
        for text in [
            "Sun, 06 Nov 9223372036854775807 08:49:37 GMT", "Sun, 06 Nov 99999 08:49:37 GMT",
            "06 Nov 9223372036854775807 08:49:37",
            "Sun Nov  6 08:49:37 9223372036854775807", "Sunday, 06-Nov-9223372036854775807 08:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
            #expect(HTTPDate.parseCookieDate(text) == nil, "\(text)")
        }
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 9223372036854775807 08:49:37 GMT") == nil)
        #expect(RetryPolicy.parseRetryAfter("99999999999999999999999") == .seconds(DeltaSeconds.limit))
        let now = Date(timeIntervalSince1970: 784_111_777)
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
    }

    @Test func aCookieDateIsReadAsBrowsersReadIt() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "6 Nov 1994 8:49:37",
            "Sun, 06-Nov-1994 08:49:37 GMT",
        ] {
            #expect(HTTPDate.parseCookieDate(text) == date, "\(text)")
        }
        #expect(HTTPDate.parseCookieDate("Sun, 06 Nov 1500 08:49:37 GMT") == nil)
    }
}
