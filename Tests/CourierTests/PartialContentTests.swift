import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Partial content in the cache (RFC 9111 §3.3–3.4, RFC 9110 §14), rule by rule.
@Suite("The cache's partial content")
struct PartialContentTests {
    let bytes = Data((0..<100).map { UInt8($0) })

    func entry(status: Int, body: Data, range: String? = nil, etag: String? = "\"v1\"") -> CacheEntry {
        var headers = HTTPFields()
        if let range { headers[.contentRange] = range }
        if let etag { headers[.eTag] = etag }
        return CacheEntry(
            key: "k",
            method: "GET",
            url: "u",
            status: status,
            headers: headers,
            storedAt: Date(),
            body: body
        )
    }

    @Test func oneByteRangeIsReadAndResolvedAgainstTheLength() {
        #expect(PartialContent.spec("bytes=0-99") == .from(0, through: 99))
        #expect(PartialContent.spec("bytes=10-") == .from(10, through: nil))
        #expect(PartialContent.spec("bytes=-5") == .suffix(5))
        for refused in ["bytes=0-1,5-6", "items=0-1", "bytes=9-1", "bytes=-", "bytes=a-b", "bytes=1"] {
            #expect(PartialContent.spec(refused) == nil, "\(refused)")
        }
        #expect(PartialContent.Spec.from(90, through: 500).resolved(length: 100) == 90...99)
        #expect(PartialContent.Spec.suffix(500).resolved(length: 100) == 0...99)
        #expect(PartialContent.Spec.from(100, through: nil).resolved(length: 100) == nil)
        #expect(PartialContent.Spec.suffix(0).resolved(length: 100) == nil)
    }

    @Test func aCompleteEntryAnswersAnyRangeWithinIt() throws {
        let answer = try #require(PartialContent.answer(.from(10, through: 19), from: entry(status: 200, body: bytes)))
        #expect(answer.body == bytes[10...19] && answer.headers[.contentRange] == "bytes 10-19/100")
        #expect(answer.headers[.contentLength] == "10")
        let suffix = try #require(PartialContent.answer(.suffix(3), from: entry(status: 200, body: bytes)))
        #expect(suffix.body == Data([97, 98, 99]))
    }

    @Test func aPartialEntryAnswersOnlyRangesItHolds() {
        let part = entry(status: 206, body: bytes[20...39], range: "bytes 20-39/100")
        #expect(PartialContent.answer(.from(25, through: 30), from: part)?.body == bytes[25...30])
        #expect(PartialContent.answer(.from(15, through: 30), from: part) == nil)
        #expect(PartialContent.answer(.from(35, through: nil), from: part) == nil)
        // A body that does not match its Content-Range answers nothing.
        #expect(
            PartialContent.answer(
                .from(20, through: 21),
                from: entry(status: 206, body: bytes[20...29], range: "bytes 20-39/100")
            ) == nil
        )
    }

    @Test func onlyAPartWithOneRangeALengthAndAStrongTagIsStored() {
        let fields = { (range: String, etag: String?) -> HTTPFields in
            var fields = HTTPFields()
            fields[.contentRange] = range
            if let etag { fields[.eTag] = etag }
            return fields
        }
        #expect(PartialContent.isStorable(status: 206, headers: fields("bytes 0-9/100", "\"v\""), bodyCount: 10))
        #expect(!PartialContent.isStorable(status: 206, headers: fields("bytes 0-9/100", "W/\"v\""), bodyCount: 10))
        #expect(!PartialContent.isStorable(status: 206, headers: fields("bytes 0-9/100", nil), bodyCount: 10))
        #expect(!PartialContent.isStorable(status: 206, headers: fields("bytes 0-9/*", "\"v\""), bodyCount: 10))
        #expect(!PartialContent.isStorable(status: 206, headers: fields("bytes 0-9/100", "\"v\""), bodyCount: 9))
    }

    @Test func partsOfOneVersionCombineAndBecomeWholeWhenEveryByteIsThere() throws {
        let first = entry(status: 206, body: bytes[0...49], range: "bytes 0-49/100")
        let overlapping = entry(status: 206, body: bytes[40...69], range: "bytes 40-69/100")
        let grown = PartialContent.combine(first, with: overlapping)
        #expect(grown.status == 206 && grown.headers[.contentRange] == "bytes 0-69/100" && grown.body == bytes[0...69])
        let touching = entry(status: 206, body: bytes[70...99], range: "bytes 70-99/100")
        let whole = PartialContent.combine(grown, with: touching)
        #expect(whole.status == 200 && whole.headers[.contentRange] == nil && whole.body == bytes)
        #expect(whole.headers[.contentLength] == "100")
        // a part that ends where the stored one starts joins it too, on its left
        let right = entry(status: 206, body: bytes[50...99], range: "bytes 50-99/100")
        let left = entry(status: 206, body: bytes[0...49], range: "bytes 0-49/100")
        let joined = PartialContent.combine(right, with: left)
        #expect(joined.status == 200 && joined.body == bytes)
        let shortOfIt = entry(status: 206, body: bytes[0...48], range: "bytes 0-48/100")
        #expect(PartialContent.combine(right, with: shortOfIt) == shortOfIt)  // a gap: they cannot combine
    }

    @Test func partsThatCannotCombineLeaveTheNewOne() {
        let stored = entry(status: 206, body: bytes[0...9], range: "bytes 0-9/100")
        let apart = entry(status: 206, body: bytes[50...59], range: "bytes 50-59/100")
        #expect(PartialContent.combine(stored, with: apart) == apart)
        let otherVersion = entry(status: 206, body: bytes[10...19], range: "bytes 10-19/100", etag: "\"v2\"")
        #expect(PartialContent.combine(stored, with: otherVersion) == otherVersion)
        let weak = entry(status: 206, body: bytes[10...19], range: "bytes 10-19/100", etag: "W/\"v1\"")
        #expect(PartialContent.combine(stored, with: weak) == weak)
        // The complete answer of the same version stays; a part never replaces it.
        let complete = entry(status: 200, body: bytes)
        #expect(PartialContent.combine(complete, with: apart) == complete)
    }
}
