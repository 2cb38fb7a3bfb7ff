import CompressNIO
import NIOCore

/// permessage-deflate (RFC 7692) as the client speaks it: the offer, the server's answer read strictly, and the
/// raw deflate streams of one connection. Owned by the connection's channel handler, on its event loop.
final class PerMessageDeflate {
    /// What the server agreed to.
    struct Parameters: Equatable, Sendable {
        /// The server resets its stream after each message: the client's inflater must too.
        var serverNoContextTakeover = false
        /// The client must reset its stream after each message.
        var clientNoContextTakeover = false
        /// The window the server compresses with (8–15).
        var serverMaxWindowBits = 15
        /// The window the client may compress with (8–15).
        var clientMaxWindowBits = 15
    }

    /// The `Sec-WebSocket-Extensions` value Courier offers: permessage-deflate, letting the server limit the
    /// client's window.
    static let offer = "permessage-deflate; client_max_window_bits"

    /// The parameters the server's `Sec-WebSocket-Extensions` value agrees to; `nil` when it names no extension.
    /// Throws for anything RFC 7692 §5 says fails the connection: an extension not offered, an unknown or repeated
    /// parameter, a window outside 8–15.
    static func accepted(_ header: String?, offered: Bool) throws -> Parameters? {
        guard let header, !header.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "," }) else { return nil }
        let extensions = header.split(separator: ",")
        guard offered, extensions.count == 1 else {
            throw refusal("the server named an extension Courier did not offer: \(header)")
        }
        var parts = extensions[0].split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard parts.removeFirst().lowercased() == "permessage-deflate" else {
            throw refusal("the server named an extension Courier did not offer: \(header)")
        }
        var parameters = Parameters()
        var seen = Set<String>()
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingSpaces()
            }
            let name = pair[0].lowercased()  // split without omitting gives at least one part
            guard seen.insert(name).inserted else { throw refusal("permessage-deflate repeats \(name)") }
            let value = pair.count == 2 ? pair[1].trimming { $0 == "\"" } : nil
            switch name {
            case "server_no_context_takeover" where value == nil: parameters.serverNoContextTakeover = true
            case "client_no_context_takeover" where value == nil: parameters.clientNoContextTakeover = true
            case "server_max_window_bits": parameters.serverMaxWindowBits = try windowBits(value, of: name)
            case "client_max_window_bits": parameters.clientMaxWindowBits = try windowBits(value, of: name)
            default: throw refusal("permessage-deflate has a parameter Courier does not know: \(part)")
            }
        }
        return parameters
    }

    private static func windowBits(_ value: String?, of name: String) throws -> Int {
        guard let value, let bits = Int(value), (8...15).contains(bits) else {
            throw refusal("permessage-deflate's \(name) must be 8 to 15")
        }
        return bits
    }

    private static func refusal(_ message: String) -> CourierError {
        CourierError(code: .invalidResponse, message: "WebSocket handshake: \(CourierError.printable(message))")
    }

    private let parameters: Parameters
    private let inflater: ZlibDecompressor
    private let deflater: ZlibCompressor

    /// Streams for `parameters`. zlib cannot write with a window of 8 bits in raw deflate, so a client window of 8
    /// is written with 9, which RFC 7692 §7.1.2.2 allows a server to read; reading uses the largest window, which
    /// reads any smaller one.
    init(_ parameters: Parameters) throws {
        self.parameters = parameters
        do {
            inflater = try ZlibDecompressor(algorithm: .deflate, windowSize: 15)
            deflater = try ZlibCompressor(
                algorithm: .deflate,
                configuration: ZlibConfiguration(windowSize: Int32(max(9, parameters.clientMaxWindowBits)))
            )
        } catch {
            throw CourierError(
                code: .encoding,
                message: "could not start permessage-deflate: \(error)",
                underlying: error
            )
        }
    }

    /// The tail a sync flush ends with, which the sender leaves out and the receiver puts back (RFC 7692 §7.2.1).
    private static let tail: [UInt8] = [0x00, 0x00, 0xff, 0xff]

    /// The message `compressed` holds, inflated to at most `limit` bytes. Throws ``Failure/tooBig`` past the limit
    /// and ``Failure/corrupt`` for bytes that are not deflate.
    func inflate(_ compressed: ByteBuffer, limit: Int) throws(Failure) -> ByteBuffer {
        var input = compressed
        input.writeBytes(Self.tail)
        do {
            let output = try input.decompressStream(with: inflater, maxSize: limit &+ 1)
            guard output.readableBytes <= limit else { throw Failure.tooBig }
            if parameters.serverNoContextTakeover { try inflater.reset() }
            return output
        } catch let error as Failure {
            throw error
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw .tooBig
        } catch {
            throw .corrupt
        }
    }

    /// `message` deflated, with the sync flush's tail left out.
    func deflate(_ message: ByteBuffer) throws(Failure) -> ByteBuffer {
        // zlib has nothing to flush for no input after an earlier message (Z_BUF_ERROR); an empty message is one
        // empty stored block, 0x00 once the tail is left out (RFC 7692 §7.2.3.6), and leaves the stream as it was.
        guard message.readableBytes > 0 else { return ByteBuffer(bytes: [0x00]) }
        var input = message
        do {
            var output = try input.compressStream(with: deflater, flush: .sync)
            if output.readableBytes >= Self.tail.count {
                output.moveWriterIndex(to: output.writerIndex - Self.tail.count)
            }
            if parameters.clientNoContextTakeover { try deflater.reset() }
            return output
        } catch {
            throw .corrupt
        }
    }

    /// Why a message could not be inflated or deflated.
    enum Failure: Error {
        /// It inflates past the message limit.
        case tooBig
        /// Its bytes are not a deflate stream (or zlib failed).
        case corrupt
    }
}
