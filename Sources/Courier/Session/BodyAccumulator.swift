import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a response body into memory within the limits, decompressing as it goes: one chunk at a time, from
/// wherever the chunks arrive (AsyncHTTPClient's event loop, or a transport's body stream).
///
/// The body is kept in a `ByteBuffer` and becomes `Data` once, at the end: a body that arrives in one chunk (most
/// small responses) is copied once, and a large one is handed over without a copy.
struct BodyAccumulator {
    private let limits: ResponseLimits
    private let decompressor: BodyDecompressor?
    private let isHead: Bool
    /// The length the head declared, when the body arrives as sent; room for it is made once.
    private let declaredLength: Int?
    private var body: ByteBuffer?
    /// Counts the bytes as they arrive, for a call that reports its progress.
    private let meter: ProgressMeter?

    /// Checks the head: the coding is one Courier decodes, and a declared length within the limit.
    init(
        headers: HTTPFields,
        method: HTTPRequest.Method,
        limits: ResponseLimits,
        decompresses: Bool,
        meter: ProgressMeter? = nil
    ) throws {
        try self.init(
            contentEncoding: headers.value(of: .contentEncoding),
            contentLength: headers.value(of: .contentLength),
            method: method,
            limits: limits,
            decompresses: decompresses,
            meter: meter
        )
    }

    /// Checks the head's `Content-Encoding` and `Content-Length` values: the coding is one Courier decodes, and a
    /// declared length within the limit.
    init(
        contentEncoding: String?,
        contentLength: String?,
        method: HTTPRequest.Method,
        limits: ResponseLimits,
        decompresses: Bool,
        meter: ProgressMeter? = nil
    ) throws {
        // Asked only when there is a coding: a failable class initializer allocates before it can fail.
        decompressor =
            if decompresses, let contentEncoding {
                try BodyDecompressor(contentEncoding: contentEncoding, limits: limits)
            } else { nil }
        self.limits = limits
        isHead = method == .head
        let declared = contentLength.flatMap(Int.init)
        if decompressor == nil, let declared, declared > limits.maxBodyBytes {
            throw CourierError(
                code: .bodyTooLarge,
                message: "the body of \(declared) bytes exceeds the limit of \(limits.maxBodyBytes) bytes"
            )
        }
        declaredLength = decompressor == nil && !isHead ? declared : nil
        self.meter = meter
        meter?.start(total: isHead ? 0 : declared.map(Int64.init))
    }

    /// Adds the next chunk; throws once the body passes a limit.
    mutating func append(_ chunk: ByteBuffer) throws {
        meter?.add(chunk.readableBytes)
        if let decompressor {
            try decompressor.decompress(chunk) { keep($0) }
            return
        }
        guard (body?.readableBytes ?? 0) + chunk.readableBytes <= limits.maxBodyBytes else {
            throw CourierError(
                code: .bodyTooLarge,
                message: "the body exceeds the limit of \(limits.maxBodyBytes) bytes"
            )
        }
        keep(chunk)
    }

    private mutating func keep(_ chunk: ByteBuffer) {
        var chunk = chunk
        guard body != nil else {
            if let declaredLength, chunk.readableBytes < declaredLength {
                var first = ByteBufferAllocator().buffer(capacity: declaredLength)
                first.writeBuffer(&chunk)
                body = first
            } else {
                body = chunk
            }
            return
        }
        body?.writeBuffer(&chunk)
    }

    /// The whole body; throws when a compressed body ended early.
    consuming func finish() throws -> Data {
        Self.data(try finishBuffer())
    }

    /// The whole body as it was kept, `nil` when there was none; throws when a compressed body ended early.
    consuming func finishBuffer() throws -> ByteBuffer? {
        if !isHead { try decompressor?.finish() }
        return body
    }

    /// A body ``finishBuffer()`` gave, as `Data`.
    static func data(_ buffer: ByteBuffer?) -> Data {
        buffer.map { Data(buffer: $0) } ?? Data()
    }
}

/// Reads a transport's response body into memory within the limits, decompressing as it goes: how the session reads
/// a body whole from a transport that does not collect it itself.
struct BodyCollector: Sendable {
    let reading: BodyReading
    /// The request's call, whose suspension holds the reading between parts.
    let suspension: Call

    /// `response` with its whole body.
    nonisolated(nonsending) func collect(
        _ response: TransportResponse,
        method: HTTPRequest.Method
    ) async throws -> ResponseBody {
        var body = try BodyAccumulator(
            headers: response.headers,
            method: method,
            limits: reading.limits,
            decompresses: reading.decompresses && !response.isContentDecoded,
            meter: reading.meter
        )
        for try await chunk in response.body {
            try body.append(chunk)
            await suspension.waitWhileSuspended()
        }
        return ResponseBody(status: response.status, headers: response.headers, data: try body.finish())
    }
}

/// How a body read whole is read: within which limits, whether it is decompressed on the way, and what counts
/// its bytes for ``Session/transfer(_:)``'s download progress (`nil`, and nothing counted, for any other call).
struct BodyReading: Sendable {
    var limits: ResponseLimits
    var decompresses: Bool
    var meter: ProgressMeter? = nil
}
