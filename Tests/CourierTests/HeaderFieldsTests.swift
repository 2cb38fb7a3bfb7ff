import HTTPTypes
import NIOHTTP1
import Testing
@testable import Courier

@Suite("Response header fields")
struct HeaderFieldsTests {
    @Test func anAsyncHTTPClientHeadKeepsEveryFieldInOrder() {
        let head = HTTPHeaders([("Server", "nginx"), ("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2; Path=/"),
                                 ("Cookie", "x=1; y=2"), ("Vary", "accept"), ("Bad Name", "dropped"), ("vary", "origin")])
        let fields = AsyncHTTPClientTransport.fields(head)
        #expect(fields.map(\.name.rawName) == ["Server", "Set-Cookie", "Content-Type", "set-cookie", "Cookie", "Vary", "vary"])
        #expect(fields.map(\.value) == ["nginx", "a=1", "text/plain", "b=2; Path=/", "x=1; y=2", "accept", "origin"])
        #expect(fields[values: .setCookie] == ["a=1", "b=2; Path=/"])
        #expect(fields[.vary] == "accept, origin")
    }

    @Test func fieldsAppendedInOrderMatchOneByOne() {
        let list = [HTTPField(name: .contentType, value: "a"), HTTPField(name: .contentType, value: "b"), HTTPField(name: .eTag, value: "\"e\""),
                    HTTPField(name: .cookie, value: "x=1; y=2")]
        var appended = HTTPFields()
        for field in list { appended.append(field) }
        let inOrder = HTTPFields(inOrder: list)
        #expect(inOrder == appended)
        #expect(inOrder.map(\.value) == ["a", "b", "\"e\"", "x=1; y=2"], "a Cookie value is not split")
    }
}
