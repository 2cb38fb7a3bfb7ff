import Crypto
import HTTPTypes
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The opening handshake (RFC 6455 §4): the upgrade request made from a prepared request, and the checks on the
/// server's 101. Pure: ``WebSocketHandshakeHandler`` sends and reads it on a connection.
struct WebSocketHandshake: Sendable {
    /// The `Sec-WebSocket-Key`: 16 random bytes in base64.
    let key: String
    /// The request head as it goes on the wire.
    let head: HTTPRequestHead
    let offersCompression: Bool
    let subprotocols: [String]

    /// The GUID RFC 6455 §1.3 appends to the key.
    private static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The upgrade request for `request` (a GET with no body) with `options`' offers; throws
    /// ``CourierError/Code/invalidParameter`` for another method, a body, or a subprotocol that is not a token.
    init(_ request: PreparedRequest, options: WebSocketOptions, key: String = Self.makeKey()) throws {
        guard request.method == .get else {
            throw CourierError(
                code: .invalidParameter,
                message: "a WebSocket opens with GET, not \(CourierError.printable(request.method.rawValue))"
            )
        }
        guard request.body.length == 0 else {
            throw CourierError(code: .invalidParameter, message: "a WebSocket handshake carries no body")
        }
        for name in options.subprotocols where !Self.isToken(name) {
            throw CourierError(
                code: .invalidParameter,
                message: "the subprotocol \"\(CourierError.printable(name))\" is not an HTTP token"
            )
        }
        self.key = key
        offersCompression = options.compression
        subprotocols = options.subprotocols
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 6)
        if let authority = request.url.authorityText { headers.add(name: "Host", value: authority) }
        for field in request.headers where !Self.replaced.contains(field.name) && field.name.canonicalName != "host" {
            headers.add(name: field.name.rawName, value: field.value)
        }
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Connection", value: "Upgrade")
        headers.add(name: "Sec-WebSocket-Key", value: key)
        headers.add(name: "Sec-WebSocket-Version", value: "13")
        if options.compression { headers.add(name: "Sec-WebSocket-Extensions", value: PerMessageDeflate.offer) }
        if !options.subprotocols.isEmpty {
            headers.add(name: "Sec-WebSocket-Protocol", value: options.subprotocols.joined(separator: ", "))
        }
        head = HTTPRequestHead(version: .http1_1, method: .GET, uri: request.url.requestTarget, headers: headers)
    }

    /// Fields the handshake sets itself, or that make no sense on it.
    private static let replaced: Set<HTTPField.Name> = [
        .upgrade, .connection, .contentLength, .transferEncoding, .secWebSocketKey, .secWebSocketVersion,
        .secWebSocketExtensions, .secWebSocketProtocol,
    ]

    /// What a 101 agreed to.
    struct Agreement: Sendable, Equatable {
        /// The subprotocol the server chose, if any.
        var subprotocol: String?
        /// permessage-deflate's parameters, when the server accepted it.
        var compression: PerMessageDeflate.Parameters?
    }

    /// Checks the server's 101 (RFC 6455 §4.1's list): `Upgrade: websocket`, `Connection: upgrade`, the accept
    /// key, and only offered extensions and subprotocols. Throws ``CourierError/Code/invalidResponse`` naming
    /// what is wrong.
    func check(_ response: HTTPResponseHead) throws -> Agreement {
        func refuse(_ reason: String) -> CourierError {
            CourierError(code: .invalidResponse, message: "WebSocket handshake: \(reason)")
        }
        let headers = response.headers
        guard headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else {
            throw refuse("the server's 101 does not upgrade to websocket")
        }
        guard headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) else {
            throw refuse("the server's 101 has no Connection: upgrade")
        }
        guard headers["Sec-WebSocket-Accept"].count == 1, headers.first(name: "Sec-WebSocket-Accept") == accept else {
            throw refuse("the server's Sec-WebSocket-Accept does not answer the key Courier sent")
        }
        let extensions = headers["Sec-WebSocket-Extensions"]
        let compression = try PerMessageDeflate.accepted(
            extensions.isEmpty ? nil : extensions.joined(separator: ","),
            offered: offersCompression
        )
        let chosen = headers["Sec-WebSocket-Protocol"]
        var subprotocol: String?
        if !chosen.isEmpty {
            guard chosen.count == 1, let name = chosen.first, subprotocols.contains(name) else {
                throw refuse(
                    "the server chose the subprotocol \"\(CourierError.printable(chosen.joined(separator: ",")))\", "
                        + "which Courier did not offer"
                )
            }
            subprotocol = name
        }
        return Agreement(subprotocol: subprotocol, compression: compression)
    }

    /// The `Sec-WebSocket-Accept` the server must send for ``key``.
    var accept: String { Self.accept(for: key) }

    /// base64(SHA-1(key + GUID)).
    static func accept(for key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + guid).utf8))).base64EncodedString()
    }

    /// A fresh key.
    static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    /// Whether `name` is an HTTP token (RFC 9110 §5.6.2), as a subprotocol must be.
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (0x21...0x7e).contains(byte) && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
            }
    }
}
