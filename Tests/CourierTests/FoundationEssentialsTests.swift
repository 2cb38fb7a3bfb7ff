import CourierTesting
import Foundation
import NIOCore
import Testing

@testable import Courier

/// What Courier does itself since it builds on FoundationEssentials, checked against full Foundation's answers
/// where Foundation has one (this test target links it; the library does not).
@Suite("Text and parsing without Foundation")
struct FoundationEssentialsTests {
    @Test func percentEncodingMatchesFoundation() {
        let samples = ["", "plain", "a b&c=d/é?#%", "100%", "😀 \u{0}\r\n", "~-._", "%zz", "%4", "%C3%A9", "%FF"]
        for text in samples {
            #expect(PercentEncoding.decode(text) == text.removingPercentEncoding, "decode \(text)")
            let unreserved = CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
            )
            #expect(
                PercentEncoding.encode(text, keeping: PercentEncoding.isUnreserved)
                    == text.addingPercentEncoding(withAllowedCharacters: unreserved),
                "encode \(text)"
            )
            #expect(
                PercentEncoding.encode(text, keeping: PercentEncoding.isPathAllowed)
                    == text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed),
                "path \(text)"
            )
        }
        #expect(
            PercentEncoding.encode(bytes: [0x20, 0x2B, 0xFF], keeping: { _ in false }, spaceAsPlus: true) == "+%2B%FF"
        )
    }

    @Test func trimmingMatchesFoundation() {
        for text in ["", "  ", " a b ", "\t\u{00A0}x\u{2003} ", "\r\n a \n", "a", " \r\nb\r\n "] {
            #expect(
                text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces),
                "spaces \(text.debugDescription)"
            )
            #expect(
                text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "whitespace \(text.debugDescription)"
            )
        }
        #expect(" \t a\t b \t".trimmingOWS() == "a\t b")
        #expect("\u{00A0}a".trimmingOWS() == "\u{00A0}a", "HTTP's OWS is a space or a tab only")
    }

    @Test func decimalTextMatchesPrintf() {
        let values: [Double] = [
            0, 1, -1, 0.5, 1.25, 2.675, 9.995, 12.345, 123.456, 999.5, 1234.5, 0.000123, 1e-7, -3.14159, 1e300,
        ]
        for value in values {
            for digits in [0, 1, 2, 3, 6] {
                #expect(value.fixedText(digits) == String(format: "%.\(digits)f", value), "%.\(digits)f of \(value)")
            }
            for digits in [1, 3, 6] {
                #expect(
                    value.significantText(digits) == String(format: "%.\(digits)g", value),
                    "%.\(digits)g of \(value)"
                )
            }
        }
    }

    @Test func aFormIsNamedAsMultipartKitNamesIt() throws {
        struct Address: Encodable {
            var city = "Paris"
            var zip: String? = nil
        }
        struct Profile: Encodable {
            var name = "Ada"
            var age = 36
            var tags = ["math", "code"]
            var address = Address()
            var photo = Data([0, 1, 2])
            var ratio = 1.5
            var active = true
        }
        let fields = try FormFieldsEncoder().fields(of: Profile())
        #expect(
            fields.map(\.name) == ["name", "age", "tags[0]", "tags[1]", "address[city]", "photo", "ratio", "active"]
        )
        #expect(
            fields.map { String(decoding: $0.content, as: UTF8.self) }.prefix(5) == [
                "Ada", "36", "math", "code", "Paris",
            ]
        )
        #expect(fields[5].content == Data([0, 1, 2]))
        #expect(throws: EncodingError.self) { try FormFieldsEncoder().fields(of: "a bare string") }
    }

    @Test func theMultipartParserFindsEveryPartAtEverySplit() throws {
        let body = Array(
            ("preamble\r\n--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\none\r\n-b0undary\r\n"
                + "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.bin\"\r\nContent-Type: "
                + "application/octet-stream\r\n\r\n\r\n--b0undar\r\r\n--b0undary--\r\nepilogue").utf8
        )
        for split in 0...body.count {
            let parser = MultipartStreamParser(boundary: "b0undary")
            var parts: [(headers: [String], content: [UInt8])] = []
            var headers: [String] = []
            var content: [UInt8] = []
            parser.onHeader = { headers.append("\($0): \($1)") }
            parser.onBody = { content += Array($0.readableBytesView) }
            parser.onPartComplete = {
                parts.append((headers, content))
                headers = []
                content = []
            }
            try parser.execute(ByteBuffer(bytes: body[..<split]))
            try parser.execute(ByteBuffer(bytes: body[split...]))
            #expect(parts.count == 2, "split at \(split)")
            #expect(parts.first?.headers == ["Content-Disposition: form-data; name=\"a\""])
            #expect(parts.first.map { String(decoding: $0.content, as: UTF8.self) } == "one\r\n-b0undary")
            #expect(parts.last?.headers.count == 2)
            #expect(parts.last.map { String(decoding: $0.content, as: UTF8.self) } == "\r\n--b0undar\r")
        }
        #expect(throws: MultipartStreamParser.Malformed.self) {
            try MultipartStreamParser(boundary: "b").execute(ByteBuffer(string: "--b\r\nno colon here\r\n\r\n"))
        }
    }

    @Test func systemErrorsAreToldInTheSystemsWords() {
        #expect(SystemErrorText.text(of: ENOENT) == "No such file or directory")
        let missing = URL(filePath: "/nonexistent-\(UUID().uuidString)/x")
        do {
            _ = try FileManager.default.contentsOfDirectory(atPath: missing.path)
            Issue.record("listed a folder that does not exist")
        } catch {
            #expect(SystemErrorText.describe(error) == "No such file or directory")
        }
        #expect(throws: FileReading.Failure.self) { try FileReading.chunks(ofFileAt: missing.path) { _ in } }
    }
}
