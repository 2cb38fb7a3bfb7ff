import Foundation
import HTTPTypes
import NIOCore

/// Reads a response body into memory within the limits, decompressing as it goes: one chunk at a time, from
/// wherever the chunks arrive (AsyncHTTPClient's event loop, or a transport's body stream).
struct BodyAccumulator {
    private let limits: ResponseLimits
    private let decompressor: BodyDecompressor?
    private let isHead: Bool
    private(set) var data = Data()

    /// Checks the head: the coding is one Courier decodes, and a declared length within the limit.
    init(headers: HTTPFields, method: HTTPRequest.Method, limits: ResponseLimits, decompresses: Bool) throws {
        let encoding = decompresses ? headers.value(of: .contentEncoding) : nil
        decompressor = try BodyDecompressor(contentEncoding: encoding, limits: limits)
        self.limits = limits
        isHead = method == .head
        let declared = headers.value(of: .contentLength).flatMap(Int.init)
        if decompressor == nil, let declared, declared > limits.maxBodyBytes {
            throw CourierError(code: .bodyTooLarge, message: "the body of \(declared) bytes exceeds the limit of \(limits.maxBodyBytes) bytes")
        }
        if decompressor == nil, let declared, !isHead { data.reserveCapacity(declared) }
    }

    /// Adds the next chunk; throws once the body passes a limit.
    mutating func append(_ chunk: ByteBuffer) throws {
        if let decompressor {
            let output = try decompressor.decompress(chunk)
            data.append(contentsOf: output.readableBytesView)
        } else {
            guard data.count + chunk.readableBytes <= limits.maxBodyBytes else {
                throw CourierError(code: .bodyTooLarge, message: "the body exceeds the limit of \(limits.maxBodyBytes) bytes")
            }
            data.append(contentsOf: chunk.readableBytesView)
        }
    }

    /// The whole body; throws when a compressed body ended early.
    consuming func finish() throws -> Data {
        if !isHead { try decompressor?.finish() }
        return data
    }
}

/// Reads a transport's response body into memory within the limits, decompressing as it goes.
struct BodyCollector: Sendable {
    let limits: ResponseLimits
    let decompresses: Bool

    nonisolated(nonsending) func collect(_ response: TransportResponse, method: HTTPRequest.Method) async throws -> Data {
        var body = try BodyAccumulator(headers: response.headers, method: method, limits: limits,
                                       decompresses: decompresses && !response.isContentDecoded)
        for try await chunk in response.body { try body.append(chunk) }
        return try body.finish()
    }
}
