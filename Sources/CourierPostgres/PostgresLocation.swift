import Courier
import NIOSSL
public import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a database is, read from a connection URL as libpq writes it:
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable|prefer|require`.
///
/// The port defaults to 5432, the database to the user's name, `sslmode` to `prefer` (TLS when the server offers
/// it). The password never appears in ``description``.
public struct PostgresLocation: Sendable, CustomStringConvertible {
    /// Whether the connection uses TLS: libpq's `sslmode`, of which `verify-ca` and `verify-full` mean
    /// ``require`` (with the system's trust roots).
    public enum TLSMode: String, Sendable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    /// The server's host name or address.
    public let host: String
    /// The server's port.
    public let port: Int
    /// The user name.
    public let username: String
    /// The password, if any.
    let password: String?
    /// The database's name.
    public let database: String
    /// Whether TLS is used.
    public let tls: TLSMode
    /// The URL without its password, for messages and logs.
    public let description: String

    /// Reads `url`; throws ``/Courier/CourierError/Code/invalidParameter`` naming what is wrong with it.
    public init(url text: String) throws {
        func invalid(_ reason: String) -> CourierError {
            CourierError(
                code: .invalidParameter,
                message: "the database URL \(Self.withoutPassword(text)) \(reason); "
                    + "expected postgres://USER:PASSWORD@HOST:PORT/DATABASE"
            )
        }
        guard let components = URLComponents(string: text) else { throw invalid("is not a URL") }
        guard let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme) else {
            throw invalid("does not start with postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("names no host") }
        guard let user = components.user.flatMap(PercentEncoding.decode), !user.isEmpty else {
            throw invalid("names no user")
        }
        if let port = components.port, !(1...65_535).contains(port) { throw invalid("has a port outside 1…65535") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw invalid("has more than a database name in its path") }
        let database = path.isEmpty ? user : (PercentEncoding.decode(path) ?? path)
        switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer
        case "require", "verify-ca", "verify-full": tls = .require
        case let other: throw invalid("has an unknown sslmode \"\(CourierError.printable(other, limit: 40))\"")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user
        self.password = components.password.flatMap(PercentEncoding.decode)
        self.database = database
        description = Self.withoutPassword(text)
    }

    /// What a PostgresNIO client (a pool) needs to connect.
    public var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch self.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        return PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
    }

    /// What a single PostgresNIO connection needs; throws when the TLS context cannot be made.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch self.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        return PostgresConnection.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
    }

    /// `text` with the password of its user part replaced by `***`, printable.
    static func withoutPassword(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@"), let schemeEnd = text.firstRange(of: "://"), schemeEnd.upperBound < at,
            let colon = text[schemeEnd.upperBound..<at].firstIndex(of: ":")
        else { return CourierError.printable(text) }
        return CourierError.printable(String(text[..<text.index(after: colon)]) + "***" + String(text[at...]))
    }
}
