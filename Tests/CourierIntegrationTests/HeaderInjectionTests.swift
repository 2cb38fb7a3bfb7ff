import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Issue 9's header-injection campaign: every C0 control byte and DEL, in a header's name and in its value, on a
/// request and on a multipart part header, and in a multipart field or file name, is refused with ``CourierError/Code/invalidHeader`` before a byte
/// leaves. Horizontal tab is the one control RFC 9110 allows inside a value (it is whitespace there), so it alone
/// is accepted in values.
@Suite("Header injection is refused before sending", .timeLimit(.minutes(1)))
struct HeaderInjectionTests {
    /// 0x00–0x1F and 0x7F.
    static let controls: [UInt8] = Array(0x00...0x1F) + [0x7F]

    static func text(_ byte: UInt8) -> String { String(UnicodeScalar(byte)) }

    @Test func everyControlByteInANameOrValueIsRefused() async throws {
        try await withServerSession { session, server in
            for byte in Self.controls {
                let inName = await courierError {
                    _ = try await session.send(Request<Data>.get("/echo").header("X-A\(Self.text(byte))B", "v"))
                }
                #expect(inName?.code == .invalidHeader, "byte \(byte) in a name")
                guard byte != 0x09 else { continue }
                let inValue = await courierError {
                    _ = try await session.send(Request<Data>.get("/echo").header("X-Evil", "a\(Self.text(byte))b"))
                }
                #expect(inValue?.code == .invalidHeader, "byte \(byte) in a value")
                #expect(
                    inValue?.description.unicodeScalars.contains { $0.value == UInt32(byte) } == false,
                    "the error repeats byte \(byte)"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.totalHits == 0)
            ReliabilityFigures.record(
                "bad-inputs",
                [
                    "campaign": "request header names and values", "inputs": Self.controls.count * 2 - 1,
                    "sent": server.totalHits,
                ]
            )
        }
    }

    @Test func headerValuesGivenAsStringsToAdaptersAndDefaultsAreRefusedNotAltered() async throws {
        var configuration = Configuration()
        let refused = #expect(throws: CourierError.self) {
            try configuration.setDefaultHeader("X-Default", "a\r\nInjected: 1")
        }
        #expect(refused?.code == .invalidHeader)
        try configuration.setDefaultHeader("X-Default", "fine")
        #expect(configuration.defaultHeaders[HTTPField.Name("X-Default")!] == "fine")

        let adapter = HeaderAdapter(HTTPField.Name("X-Token")!) { "a\r\nInjected: 1" }
        try await withServerSession({ $0.adapters = [adapter] }) { session, server in
            let error = await courierError { _ = try await session.send(Request<Data>.get("/echo")) }
            #expect(error?.code == .invalidHeader, "the adapter's value went out as \"a  Injected: 1\" before")
            #expect(server.totalHits == 0)
        }
    }

    @Test func aTabInsideAValueIsSentAsIs() async throws {
        try await withServerSession { session, _ in
            let response = try await session.send(Request<Data>.get("/echo").header("X-Tabbed", "a\tb"))
            #expect(String(decoding: response.body, as: UTF8.self).contains("a\\tb"))
        }
    }

    @Test func everyControlByteInAPartHeaderOrContentTypeIsRefused() throws {
        for byte in Self.controls {
            var form = MultipartFormData()
            let inName = #expect(throws: CourierError.self) {
                try form.append(data: Data(), name: "f", headers: [("X-A\(Self.text(byte))B", "v")])
            }
            #expect(inName?.code == .invalidHeader, "byte \(byte) in a part header name")
            guard byte != 0x09 else { continue }
            let inValue = #expect(throws: CourierError.self) {
                try form.append(data: Data(), name: "f", headers: [("X-Meta", "a\(Self.text(byte))b")])
            }
            #expect(inValue?.code == .invalidHeader, "byte \(byte) in a part header value")
            let inType = #expect(throws: CourierError.self) {
                try form.append(data: Data(), name: "f", contentType: "text/plain\(Self.text(byte))x")
            }
            #expect(inType?.code == .invalidHeader, "byte \(byte) in a part's content type")
            #expect(form.parts.isEmpty)
        }
        // Refused while the form is built: no request exists, so there is no count of what reached a server.
        ReliabilityFigures.record(
            "bad-inputs",
            ["campaign": "multipart part headers and content types", "inputs": Self.controls.count * 3 - 2]
        )
    }

    @Test func everyControlByteInAMultipartNameIsRefused() throws {
        for byte in Self.controls where byte != 0x09 {
            var form = MultipartFormData()
            let field = #expect(throws: CourierError.self) {
                try form.append(field: "a\(Self.text(byte))b", value: "v")
            }
            #expect(field?.code == .invalidHeader, "byte \(byte) in a field name")
            let file = #expect(throws: CourierError.self) {
                try form.append(data: Data(), name: "f", fileName: "a\(Self.text(byte)).txt")
            }
            #expect(file?.code == .invalidHeader, "byte \(byte) in a file name")
            #expect(
                file?.description.unicodeScalars.contains { $0.value == UInt32(byte) } == false,
                "the error repeats byte \(byte)"
            )
            #expect(form.parts.isEmpty)
        }
        var form = MultipartFormData()
        try form.append(field: "a\tb", value: "v")  // tab, as in a header value
        ReliabilityFigures.record(
            "bad-inputs",
            ["campaign": "multipart field and file names", "inputs": (Self.controls.count - 1) * 2]
        )
    }
}
