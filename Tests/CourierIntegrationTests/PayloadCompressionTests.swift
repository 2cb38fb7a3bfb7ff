import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

@Suite("Request bodies compressed on the fly", .timeLimit(.minutes(2)))
struct PayloadCompressionTests {
    struct CodedEcho: Decodable {
        var headers: [String: [String]]
        var bodyLength: Int
        var decodedLength: Int?
        var decodedSHA256: String?
    }

    static let json = Data(ServerFiles.jsonDocument(items: 40_000).utf8)
    /// Random bytes, which do not compress.
    static let noise = Data(
        (0..<300 * 1024 / 8).flatMap { _ in withUnsafeBytes(of: UInt64.random(in: .min ... .max)) { Array($0) } }
    )

    /// Sends `body` compressed as `compression` says to `/echo`; returns the decision and what the server saw.
    func roundTrip(
        _ body: RequestBody,
        _ compression: PayloadCompression,
        session: Session
    ) async throws -> (CompressionDecision, CodedEcho) {
        let (request, decision) = try await Request<CodedEcho>.post("/echo", body: body).compressingBodyWithDecision(
            compression
        )
        return (decision, try await session.send(request).value)
    }

    @Test(arguments: [
        PayloadCompression.gzip(level: 1), .gzip(level: 9), .deflate(level: 6), .adaptive(), .adaptive(.deflate),
        .targetSize(Int64(json.count / 4)), .targetSize(Int64(json.count / 4), encoding: .deflate),
    ])
    func everyStrategyRoundTripsAFile(compression: PayloadCompression) async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("payload.json")
        try Self.json.write(to: file)
        try await withServerSession { session, _ in
            let (decision, echo) = try await roundTrip(
                .file(file, contentType: "application/json"),
                compression,
                session: session
            )
            #expect(decision.setting != nil, "\(decision)")
            #expect(echo.headers["content-encoding"] == [compression.encoding.rawValue])
            #expect(echo.decodedLength == Self.json.count && echo.decodedSHA256 == sha256Hex(Self.json))
            #expect(echo.bodyLength * 4 <= Self.json.count)  // JSON shrinks well; the target asked for a quarter
        }
    }

    @Test func adaptivePicksTheLevelBySizeAndSkipsWhatWillNotShrink() async throws {
        try await withServerSession { session, _ in
            let (small, _) = try await roundTrip(
                .bytes(Self.json.prefix(500_000), contentType: "application/json"),
                .adaptive(),
                session: session
            )
            #expect(small.setting == ZlibSetting(level: 9))
            let (large, _) = try await roundTrip(
                .bytes(Self.json, contentType: "application/json"),
                .adaptive(),
                session: session
            )
            #expect(large.setting == ZlibSetting(level: 6) || Self.json.count >= 32 << 20)

            let (photo, photoEcho) = try await roundTrip(
                .bytes(Self.json, contentType: "image/jpeg"),
                .adaptive(),
                session: session
            )
            #expect(photo.setting == nil && photo.reason.contains("image/jpeg"))
            #expect(photoEcho.headers["content-encoding"] == nil && photoEcho.bodyLength == Self.json.count)

            let (random, randomEcho) = try await roundTrip(
                .bytes(Self.noise, contentType: "application/octet-stream"),
                .adaptive(),
                session: session
            )
            #expect(random.setting == nil && random.reason.contains("shrink only"))
            #expect(randomEcho.headers["content-encoding"] == nil && randomEcho.bodyLength == Self.noise.count)
        }
    }

    @Test func adaptiveSamplesAStreamWithoutLosingItsStart() async throws {
        let chunks = stride(from: 0, to: Self.json.count, by: 10_000).map {
            Self.json[$0..<min($0 + 10_000, Self.json.count)]
        }
        let stream = AsyncStream<ByteBuffer> { continuation in
            for chunk in chunks { continuation.yield(ByteBuffer(bytes: chunk)) }
            continuation.finish()
        }
        try await withServerSession { session, _ in
            let (decision, echo) = try await roundTrip(
                .stream(stream, length: Int64(Self.json.count)),
                .adaptive(),
                session: session
            )
            #expect(decision.setting != nil)
            #expect(echo.decodedLength == Self.json.count && echo.decodedSHA256 == sha256Hex(Self.json))

            let noise = Self.noise
            let noiseStream = AsyncStream<ByteBuffer> { continuation in
                continuation.yield(ByteBuffer(bytes: noise.prefix(50_000)))
                continuation.yield(ByteBuffer(bytes: noise.dropFirst(50_000)))
                continuation.finish()
            }
            let (skipped, plain) = try await roundTrip(.stream(noiseStream, length: nil), .adaptive(), session: session)
            #expect(skipped.setting == nil)
            #expect(plain.bodyLength == noise.count)
        }
    }

    @Test func aTargetSizeTakesTheFastestSettingThatFitsOrSaysNoneDoes() async throws {
        // Text compresses to a fifth even with the fastest settings, so a loose budget takes the first candidate.
        let loose = try await Request<Data>.post("/echo", body: .bytes(Self.json)).compressingBodyWithDecision(
            .targetSize(Int64(Self.json.count))
        )
        #expect(loose.decision.setting == nil && loose.decision.reason.contains("already"))
        let easy = try await Request<Data>.post("/echo", body: .bytes(Self.json)).compressingBodyWithDecision(
            .targetSize(Int64(Self.json.count - 1))
        )
        #expect(easy.decision.setting == ZlibSetting(level: 1, strategy: .huffmanOnly))

        let impossible = await #expect(throws: CourierError.self) {
            _ = try await Request<Data>.post("/echo", body: .bytes(Self.noise)).compressingBody(.targetSize(100_000))
        }
        #expect(impossible?.code == .compressionTarget && impossible?.message.contains("smallest") == true)

        let stream = AsyncStream<ByteBuffer> {
            $0.yield(ByteBuffer(bytes: Self.json))
            $0.finish()
        }
        let unmeasurable = await #expect(throws: CourierError.self) {
            _ = try await Request<Data>.post("/echo", body: .stream(stream, length: nil)).compressingBody(
                .targetSize(1000)
            )
        }
        #expect(unmeasurable?.code == .compressionTarget)
    }

    @Test func smallBodiesAndAlreadyEncodedOnesAreLeftAlone() async throws {
        let small = try await Request<Data>.post("/echo", body: .text("tiny")).compressingBody(.gzip())
        #expect(small.headers[.contentEncoding] == nil)
        let forced = try await Request<Data>.post("/echo", body: .text("tiny")).compressingBody(.gzip(minimumBytes: 0))
        #expect(forced.headers[.contentEncoding] == "gzip")
        let encoded = try await Request<Data>.post("/echo", body: .text("x")).header("Content-Encoding", "br")
            .compressingBody(.gzip(minimumBytes: 0))
        #expect(encoded.headers[.contentEncoding] == nil && encoded.rawHeaders.count == 1)
        let missing = await #expect(throws: CourierError.self) {
            _ = try await Request<Data>.post("/echo", body: .file(URL(filePath: "/nonexistent"))).compressingBody(
                .gzip()
            )
        }
        #expect(missing?.code == .unreadableBody)
    }
}
