import Courier
import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Writes one response body as it arrives: decoded (gzip, deflate), checked against `--max-filesize`, re-indented
/// and coloured when it is JSON and the style asks for it, with a progress bar for `-o` on a terminal.
struct BodyWriter {
    let destination: BodyDestination
    /// The body bytes received, as they came over the wire (curl's `size_download`).
    private(set) var receivedBytes: Int64 = 0
    private var writtenBytes: Int64 = 0
    private let limit: Int?
    private var formatter: JSONFormatter?
    private let decompressor: BodyDecompressor?
    private let progress: ProgressPrinter?
    private let expectedBytes: Int64?
    private let start = ContinuousClock.now
    private var lastByte: UInt8?

    /// A writer for an answer with `headers`; `decodes` is false when the body arrives decoded already (from the
    /// session's whole-body path). Throws ``CourierError/Code/bodyTooLarge`` at once when the announced length
    /// passes `limit`.
    init(
        destination: BodyDestination,
        headers: HTTPFields,
        decodes: Bool,
        limit: Int?,
        style: OutputStyle,
        showsProgress: Bool
    ) throws {
        self.destination = destination
        self.limit = limit
        let encoding = decodes ? headers[.contentEncoding] : nil
        self.decompressor = try BodyDecompressor(
            contentEncoding: encoding,
            limits: ResponseLimits(maxBodyBytes: .max, maxDecompressionRatio: .max)
        )
        let length = headers[.contentLength].flatMap { Int64($0) }
        if let limit, let length, length > limit, encoding == nil {
            throw Self.tooLarge(limit)
        }
        self.expectedBytes = length
        let contentType = headers[.contentType]?.lowercased() ?? ""
        let isJSON = contentType.hasPrefix("application/json") || contentType.contains("+json")
        self.formatter = style.formats && isJSON ? JSONFormatter(colours: style.colours) : nil
        self.progress = showsProgress ? ProgressPrinter() : nil
    }

    /// Writes the next chunk.
    mutating func write(_ chunk: ByteBuffer) throws {
        receivedBytes += Int64(chunk.readableBytes)
        if let decompressor {
            try decompressor.decompress(chunk) { try writeDecoded($0) }
        } else {
            try writeDecoded(chunk)
        }
        if let progress {
            let seconds = max(start.duration(to: .now).seconds, 0.001)
            progress.show(
                TransferProgress(
                    completedBytes: receivedBytes,
                    totalBytes: expectedBytes,
                    bytesPerSecond: Double(receivedBytes) / seconds
                )
            )
        }
    }

    /// Writes a piece of the body as it reads once decoded: checked against the limit, formatted when it is JSON.
    private mutating func writeDecoded(_ decoded: ByteBuffer) throws {
        writtenBytes += Int64(decoded.readableBytes)
        if let limit, writtenBytes > limit { throw Self.tooLarge(limit) }
        if var json = formatter {
            defer { formatter = json }
            try decoded.withUnsafeReadableBytes { bytes in
                try json.format(bytes) { piece in try piece.withUnsafeBytes { try destination.write($0) } }
            }
        } else {
            try destination.write(decoded)
        }
        if let last = decoded.readableBytesView.last { lastByte = last }
    }

    /// Ends the body: the decoder must have reached its end, and a body shown on a terminal ends its line, so the
    /// status line on stderr starts one of its own.
    mutating func finish() throws {
        try decompressor?.finish()
        progress?.end()
        if var formatter, writtenBytes > 0 {
            try formatter.finish().withUnsafeBytes { try destination.write($0) }
        } else if destination.isTerminal, let lastByte, lastByte != UInt8(ascii: "\n") {
            try destination.write("\n")
        }
    }

    private static func tooLarge(_ limit: Int) -> CourierError {
        CourierError(
            code: .bodyTooLarge,
            message: "the body is larger than --max-filesize (\(ByteCount.format(limit)))"
        )
    }
}
