import CourierTesting
import Foundation
import HTTPTypes
import NIOHTTP1
import Testing

@testable import Courier

@Suite("Response header fields")
struct HeaderFieldsTests {
    @Test func anAsyncHTTPClientHeadKeepsEveryFieldInOrder() {
        let head = HTTPHeaders([
            ("Server", "nginx"), ("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2; Path=/"),
            ("Cookie", "x=1; y=2"), ("Vary", "accept"), ("Bad Name", "dropped"), ("vary", "origin"),
        ])
        let fields = ResponseFields.fields(head)
        #expect(
            fields.map(\.name.rawName) == [
                "Server", "Set-Cookie", "Content-Type", "set-cookie", "Cookie", "Vary", "vary",
            ]
        )
        #expect(fields.map(\.value) == ["nginx", "a=1", "text/plain", "b=2; Path=/", "x=1; y=2", "accept", "origin"])
        #expect(fields[values: .setCookie] == ["a=1", "b=2; Path=/"])
        #expect(fields[.vary] == "accept, origin")
    }

    @Test func fieldsAppendedInOrderMatchOneByOne() {
        let list = [
            HTTPField(name: .contentType, value: "a"), HTTPField(name: .contentType, value: "b"),
            HTTPField(name: .eTag, value: "\"e\""),
            HTTPField(name: .cookie, value: "x=1; y=2"),
        ]
        var appended = HTTPFields()
        for field in list { appended.append(field) }
        let inOrder = HTTPFields(inOrder: list)
        #expect(inOrder == appended)
        #expect(inOrder.map(\.value) == ["a", "b", "\"e\"", "x=1; y=2"], "a Cookie value is not split")
    }

    @Test func aFieldReadFromTheArrivedHeadMatchesTheConvertedOne() {
        let head = HTTPHeaders([
            ("Location", "/next"), ("Cookie", "x=1"), ("cookie", "y=2"), ("Vary", "accept"), ("vary", "origin"),
            ("Retry-After", "5"),
        ])
        let converted = ResponseFields.fields(head)
        for name in [HTTPField.Name.location, .cookie, .vary, .retryAfter, .eTag] {
            let arrived = ResponseFields(arrived: head)
            #expect(arrived.value(name) == converted[name], "\(name) read in place")
            #expect(!arrived.isConverted, "reading one field converts none")
            #expect(arrived.fields == converted)
            #expect(arrived.value(name) == converted[name], "\(name) read once converted")
        }
        #expect(ResponseFields(converted).value(.vary) == "accept, origin")
    }

    @Test func tasksReadingOneArrivedHeadAtOnceAllSeeOneConversion() async {
        let fields = ResponseFields(arrived: HTTPHeaders([("Content-Type", "text/plain"), ("ETag", "\"e\"")]))
        let seen = await withTaskGroup(of: HTTPFields.self) { group in
            for _ in 0..<8 { group.addTask { fields.fields } }
            return await group.reduce(into: [HTTPFields]()) { $0.append($1) }
        }
        #expect(seen.count == 8)
        #expect(seen.allSatisfy { $0 == seen[0] && $0[.eTag] == "\"e\"" })
    }

    @Test func aBodyKeepsHeadersSetOnIt() {
        var body = ResponseBody(
            status: .ok,
            fields: ResponseFields(arrived: HTTPHeaders([("ETag", "\"a\"")])),
            data: Data()
        )
        #expect(body.value(of: .eTag) == "\"a\"")
        body.headers[.eTag] = "\"b\""
        #expect(body.headers[.eTag] == "\"b\"")
        #expect(body.value(of: .eTag) == "\"b\"")
    }

    @Test func theCollectingDelegateFindsLengthAndEncodingsInOnePass() {
        let head = HTTPHeaders([
            ("Server", "x"), ("CONTENT-ENCODING", "gzip"), ("Content-Length", "12"), ("content-encoding", "br"),
            ("Content-Lengths", "9"), ("Content-Encodin", "no"),
        ])
        let framing = CollectingDelegate.framing(head)
        #expect(framing.length == "12")
        #expect(framing.encoding == "gzip, br")
        #expect(framing.encoding == ResponseFields(arrived: head).value(.contentEncoding))
        #expect(CollectingDelegate.framing(HTTPHeaders([("Date", "now")])) == (nil, nil))
        #expect("Content-Type".equalsASCIICaseInsensitive("content-type"))
        #expect(!"Content-Type[".equalsASCIICaseInsensitive("content-type"))
        #expect(!"Content-Typ".equalsASCIICaseInsensitive("content-type"))
        #expect(!"Content-Typf".equalsASCIICaseInsensitive("content-type"))
    }

    @Test func aResponseFromTheNetworkConvertsItsHeadOnlyWhenItsHeadersAreRead() async throws {
        try await withTestServer { server in
            try await withSession { session in
                let response = try await session.send(Request<Data>.get(server.url("/users/1").absoluteString))
                #expect(!response.storage.fields.isConverted)
                #expect(response.headers[.contentType] != nil)
                #expect(response.storage.fields.isConverted)
            }
        }
    }
}
