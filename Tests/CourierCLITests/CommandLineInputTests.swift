import Courier
import Testing

@testable import courier

@Suite("The CLI's parsers: byte counts in one convention (powers of 1024), reachability targets")
struct CommandLineInputTests {
    @Test func formatsInBinaryUnits() {
        #expect(ByteCount.format(512) == "512 B")
        #expect(ByteCount.format(1_023) == "1023 B")
        #expect(ByteCount.format(1_536) == "1.5 KiB")
        #expect(ByteCount.format(1_048_500) == "1023.9 KiB")
        #expect(ByteCount.format(1_048_560) == "1.0 MiB")
        #expect(ByteCount.format(13_002_342) == "12.4 MiB")
        #expect(ByteCount.format(3 << 30) == "3.0 GiB")
    }

    @Test func readsSizesAndRatesInTheSameUnits() throws {
        #expect(try CommandLineInput.byteSize("1000") == 1000)
        #expect(try CommandLineInput.byteSize("64K") == 64 << 10)
        #expect(try CommandLineInput.byteSize("1.5k") == 1536)
        #expect(try CommandLineInput.byteSize("2MiB") == 2 << 20)
        #expect(try CommandLineInput.byteSize("2MB") == 2 << 20)
        #expect(try CommandLineInput.byteRate("500K/s") == 500 << 10)
        #expect(try CommandLineInput.byteRate("1GiB") == 1 << 30)
    }

    @Test func whatIsReadComesOutUnderTheSameName() throws {
        for text in ["20M", "512K", "3G"] {
            #expect(ByteCount.format(try CommandLineInput.byteSize(text)) == "\(text.dropLast()).0 \(text.last!)iB")
        }
    }

    @Test func badSizesAreRefused() {
        for text in ["", "M", "-1M", "1X", "2MiBs", "0", "1e20"] {
            #expect(throws: CourierError.self) { try CommandLineInput.byteSize(text) }
        }
    }

    /// `courier reachability`'s target: a host, a host and port, or a URL.
    @Test func targetsFromTheCommandLine() throws {
        let plain = try CommandLineInput.reachabilityTarget("example.com")
        #expect(plain.host == "example.com" && plain.port == 80)
        let secure = try CommandLineInput.reachabilityTarget("https://example.com/path")
        #expect(secure.port == 443)
        let v6 = try CommandLineInput.reachabilityTarget("[::1]:8080")
        #expect(v6.host == "::1" && v6.port == 8080)
        for bad in ["", "host:0", "host:x", "host/path", "user@host"] {
            #expect(throws: CourierError.self) { try CommandLineInput.reachabilityTarget(bad) }
        }
    }
}

@Suite("The JSON formatter: linear output for any nesting, handed on in bounded pieces")
struct JSONFormatterTests {
    @Test func indentationStopsAtTheCapAndTheRestIsCompact() {
        var formatter = JSONFormatter(colours: false)
        let depth = 10_000
        let input = Array(String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)).map {
            UInt8(ascii: $0.unicodeScalars.first!)
        }
        var pieces: [Int] = []
        var output: [UInt8] = []
        formatter.format(input) { piece in
            pieces.append(piece.count)
            output += piece
        }
        output += formatter.finish()
        // 32 indented levels on the way in and out, each at most 2 + 64 bytes; the rest one byte each.
        #expect(output.count < 2 * depth + 2 * 32 * 66 + 2, "\(output.count) bytes")
        #expect(pieces.allSatisfy { $0 <= JSONFormatter.outputPieceBytes + 256 })
        #expect(output.filter { $0 == UInt8(ascii: "[") }.count == depth)
    }

    @Test func shallowDocumentsAreIndentedAsBefore() {
        var formatter = JSONFormatter(colours: false)
        let text = formatter.format(Array(#"{"a":[1,{"b":true}],"c":{}}"#.utf8)) + formatter.finish()
        #expect(
            String(decoding: text, as: UTF8.self)
                == "{\n  \"a\": [\n    1,\n    {\n      \"b\": true\n    }\n  ],\n  \"c\": {}\n}\n"
        )
    }
}
