import Crypto
public import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Signs each request with HMAC-SHA256 over its method, path and query, a timestamp and the body's SHA-256
/// (XZNetworking's encryption hook, done the way most signed APIs do it).
///
/// The string signed is `METHOD\nPATH?QUERY\nTIMESTAMP\nHEX(SHA256(body))`; a streamed body is signed as
/// `UNSIGNED-PAYLOAD`, since reading it would consume it. Servers verify with the same recipe; see
/// ``signature(method:pathAndQuery:timestamp:bodyHash:)``.
public struct HMACSigningAdapter: RequestAdapter {
    private let key: SymmetricKey
    /// The header that carries the signature (default `X-Signature`).
    public var signatureHeader: HTTPField.Name
    /// The header that carries the Unix timestamp (default `X-Timestamp`).
    public var timestampHeader: HTTPField.Name
    private let clock: @Sendable () -> Date

    /// Creates a signer with a shared secret.
    public init(
        secret: Data,
        signatureHeader: HTTPField.Name = HTTPField.Name("X-Signature")!,
        timestampHeader: HTTPField.Name = HTTPField.Name("X-Timestamp")!,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.key = SymmetricKey(data: secret)
        self.signatureHeader = signatureHeader
        self.timestampHeader = timestampHeader
        self.clock = clock
    }

    /// Returns the adapted request.
    public func adapt(_ request: PreparedRequest) async throws -> PreparedRequest {
        var request = request
        let timestamp = String(Int(clock().timeIntervalSince1970))
        let bodyHash: String
        switch request.body {
        case .empty: bodyHash = Hex.string(SHA256.hash(data: Data()))
        case .bytes(let data): bodyHash = Hex.string(SHA256.hash(data: data))
        case .file(let url, _): bodyHash = try await Self.hashFile(url)
        case .stream: bodyHash = "UNSIGNED-PAYLOAD"
        }
        let pathAndQuery =
            request.url.path(percentEncoded: true) + (request.url.query(percentEncoded: true).map { "?" + $0 } ?? "")
        request.headers[timestampHeader] = timestamp
        request.headers[signatureHeader] = signature(
            method: request.method.rawValue,
            pathAndQuery: pathAndQuery,
            timestamp: timestamp,
            bodyHash: bodyHash
        )
        return request
    }

    /// The signature of one request, hex-encoded; servers call this to verify.
    public func signature(method: String, pathAndQuery: String, timestamp: String, bodyHash: String) -> String {
        let message = "\(method)\n\(pathAndQuery)\n\(timestamp)\n\(bodyHash)"
        return Hex.string(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key))
    }

    private static func hashFile(_ url: URL) async throws -> String {
        var hasher = SHA256()
        for try await chunk in FileChunks(url: url) {
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
        return Hex.string(hasher.finalize())
    }
}

extension RequestAdapter where Self == HMACSigningAdapter {
    /// Signs requests with HMAC-SHA256 and a shared secret.
    public static func hmacSigning(secret: Data) -> HMACSigningAdapter { HMACSigningAdapter(secret: secret) }
}
