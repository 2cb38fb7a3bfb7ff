import HTTPTypes
import NIOCore

/// What ``PayloadCompression`` chose for one body, and why.
public struct CompressionDecision: Sendable, Hashable, CustomStringConvertible {
    /// The setting the body is compressed with; `nil` when it is sent as it is.
    public let setting: ZlibSetting?
    /// Why, in a few words (`"image/jpeg is compressed already"`).
    public let reason: String

    /// `gzip level 6 (adaptive: 420 KiB)` or `sent as is (shorter than 150 KiB)`.
    public var description: String {
        setting.map { "compressed with \($0) (\(reason))" } ?? "sent as is (\(reason))"
    }
}

extension PayloadCompression {
    /// Chooses how to send `prepared` (of type `contentType`) and hands back the body to send from its first
    /// byte, uncompressed: the caller wraps it in ``CompressedChunks`` when the decision has a setting.
    func decide(
        for prepared: PreparedBody,
        contentType: String?
    ) async throws -> (decision: CompressionDecision, body: ByteStream) {
        let length = prepared.length
        func plain(_ reason: String) -> (CompressionDecision, ByteStream) {
            (CompressionDecision(setting: nil, reason: reason), prepared.chunks())
        }
        if case .targetSize(let budget) = strategy { return try await fitting(prepared, in: budget) }
        if let length, length < minimumBytes { return plain("shorter than \(ByteCount.format(minimumBytes))") }
        switch strategy {
        case .fixed(let level):
            return (CompressionDecision(setting: ZlibSetting(level: level), reason: "fixed"), prepared.chunks())
        case .adaptive:
            if CompressedContentTypes.contains(contentType) {
                return plain("\(contentType ?? "") is compressed already")
            }
            let sample = try await BodySample.take(of: prepared)
            let sampleLength = Int64(sample.bytes.readableBytes)
            let packed =
                try await CompressedChunks.size(
                    of: ByteStream(chunks: [sample.bytes]),
                    encoding: encoding,
                    setting: ZlibSetting(level: 1)
                ) ?? sampleLength
            let ratio = Double(sampleLength) / Double(max(1, packed))
            guard ratio >= Self.worthwhileRatio else {
                return (
                    CompressionDecision(
                        setting: nil,
                        reason:
                            "the first \(ByteCount.format(sampleLength)) shrink only to \(Self.percent(packed, of: sampleLength))"
                    ),
                    sample.body
                )
            }
            let setting = ZlibSetting(level: Self.adaptiveLevel(forLength: length))
            return (
                CompressionDecision(
                    setting: setting,
                    reason: "adaptive, \(length.map { ByteCount.format($0) } ?? "unknown length")"
                ), sample.body
            )
        case .targetSize:
            preconditionFailure("handled above")
        }
    }

    /// The fastest of ``ZlibSetting/fastestFirst`` whose output fits in `budget`, measured on the whole body.
    private func fitting(
        _ prepared: PreparedBody,
        in budget: Int64
    ) async throws -> (decision: CompressionDecision, body: ByteStream) {
        guard prepared.isReplayable else {
            throw CourierError(
                code: .compressionTarget,
                message:
                    "a target size needs a body that can be read twice to measure it (bytes, a file or a form of files), not a stream"
            )
        }
        if let length = prepared.length, length <= budget {
            return (
                CompressionDecision(setting: nil, reason: "fits in \(ByteCount.format(budget)) already"),
                prepared.chunks()
            )
        }
        // The last (smallest) candidate runs to the end, so a failure can say how close it came.
        let candidates = ZlibSetting.fastestFirst
        var smallest: Int64 = 0
        for (index, setting) in candidates.enumerated() {
            let isLast = index == candidates.count - 1
            guard
                let size = try await CompressedChunks.size(
                    of: prepared.chunks(),
                    encoding: encoding,
                    setting: setting,
                    limit: isLast ? .max : budget
                )
            else { continue }
            if size <= budget {
                return (
                    CompressionDecision(
                        setting: setting,
                        reason: "\(ByteCount.format(size)) fits in \(ByteCount.format(budget))"
                    ), prepared.chunks()
                )
            }
            smallest = size
        }
        throw CourierError(
            code: .compressionTarget,
            message:
                "no zlib setting brings the body under \(ByteCount.format(budget)): the smallest, \(candidates[candidates.count - 1]), gives \(ByteCount.format(smallest))"
        )
    }

    private static func percent(_ part: Int64, of whole: Int64) -> String {
        "\(Int((Double(part) / Double(max(1, whole)) * 100).rounded())) %"
    }
}

extension Request {
    /// This request with its body compressed as `compression` decides and `Content-Encoding` set. A body that
    /// already has a content coding is left alone. The body is read and compressed chunk by chunk while it is
    /// sent (a file is never loaded whole); ``PayloadCompression/Strategy/adaptive`` reads its first 64 KiB
    /// once more to judge it, ``PayloadCompression/Strategy/targetSize(_:)`` reads it once per setting it measures.
    ///
    /// Throws ``CourierError/Code/fileAccess`` for an unreadable body file and ``CourierError/Code/compressionTarget``
    /// when no setting meets a target size.
    public func compressingBody(_ compression: PayloadCompression) async throws -> Self {
        try await compressingBodyWithDecision(compression).request
    }

    /// ``compressingBody(_:)``, also telling what was decided (for a CLI or a log line).
    public func compressingBodyWithDecision(
        _ compression: PayloadCompression
    ) async throws -> (request: Self, decision: CompressionDecision) {
        guard !body.isEmpty else { return (self, CompressionDecision(setting: nil, reason: "no body")) }
        guard headers[.contentEncoding] == nil,
            !rawHeaders.contains(where: { $0.name.lowercased() == "content-encoding" })
        else {
            return (self, CompressionDecision(setting: nil, reason: "the body has a content coding already"))
        }
        let prepared = try body.prepare()
        let (decision, chunks) = try await compression.decide(for: prepared, contentType: body.contentType)
        var compressed = self
        guard let setting = decision.setting else {
            // A stream's first chunks were read to sample it; send them again, then the rest.
            if !prepared.isReplayable {
                compressed.body = RequestBody(
                    storage: .stream(chunks, length: prepared.length),
                    contentType: body.contentType
                )
            }
            return (compressed, decision)
        }
        compressed.body = .stream(
            CompressedChunks(base: chunks, encoding: compression.encoding, setting: setting),
            length: nil,
            contentType: body.contentType,
            replayable: prepared.isReplayable  // each iteration compresses the body again from its first byte
        )
        compressed.headers[.contentEncoding] = compression.encoding.rawValue
        return (compressed, decision)
    }
}
