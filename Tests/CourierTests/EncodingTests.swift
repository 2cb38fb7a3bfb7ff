import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Parameters, headers and errors")
struct EncodingTests {
    @Test func formEncodingIsSortedNestedAndEscaped() {
        let text = FormEncoding.encode(["b": [1, 2], "a": ["y": true, "x": "1&2=3"], "c": nil, "d": 1.5])
        #expect(text == "a%5Bx%5D=1%262%3D3&a%5By%5D=true&b%5B%5D=1&b%5B%5D=2&c=&d=1.5")
    }

    @Test func parameterValuesRoundTripThroughJSON() throws {
        let value: ParameterValue = ["n": 1, "s": "x", "b": false, "a": [1.5, nil], "o": ["k": "v"]]
        let data = try JSONEncoder.sorted.encode(value)
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":[1.5,null],"b":false,"n":1,"o":{"k":"v"},"s":"x"}"#)
        #expect(try JSONDecoder().decode(ParameterValue.self, from: data) == value)
    }

    @Test(arguments: [
        ("X-A", "a\rb", "CR"), ("X-A", "a\nb", "LF"), ("X-A", "a\u{0}b", "NUL"),
        ("X-A", "a\u{1}b", "a control character"),
        ("X-A", "a\u{7F}b", "a control character"),
    ])
    func headerValuesThatCouldSplitTheRequestAreRejected(name: String, value: String, what: String) {
        let error = #expect(throws: CourierError.self) { try HeaderValidation.field(name: name, value: value) }
        #expect(error?.code == .invalidHeader)
        #expect(error?.message == "header \"X-A\" has a value containing \(what)")
    }

    @Test(arguments: ["Bad Name", "X-A\r\n", "", "X:Y", "Ä"])
    func badHeaderNamesAreRejected(_ name: String) {
        let error = #expect(throws: CourierError.self) { try HeaderValidation.field(name: name, value: "v") }
        #expect(error?.code == .invalidHeader)
        #expect(error?.message.contains("\r") == false)
    }

    @Test func tabsAndOrdinaryTextAreFine() throws {
        let field = try HeaderValidation.field(name: "X-Trace", value: "a\tb c")
        #expect(field.value == "a\tb c")
    }

    @Test func errorDescriptionsAreOneLineWithTheCode() {
        let error = CourierError.invalidURL("bad\nurl")
        #expect(error.description == #"invalidURL: not a valid http(s) URL: "bad\x0Aurl""#)
        #expect(
            CourierError.timeout(.readIdle, after: .milliseconds(250)).description
                == "timeout: readIdle timeout of 250 ms elapsed"
        )
        #expect(CourierError.Code.httpStatus.rawValue == "httpStatus")
    }
}
