/// The name of a service registered in ``Configuration/services`` (XZNetworking's service registry).
///
/// ```swift
/// extension ServiceID { static let payments: ServiceID = "payments" }
/// config.services[.payments] = URL(string: "https://pay.example.com/api")!
/// let receipt = try await session.send(Request<Receipt>.get("/receipts/7").service(.payments))
/// ```
public struct ServiceID: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name.
    public let name: String
    /// Creates an identifier.
    public init(_ name: String) { self.name = name }
    /// A service named by a literal.
    public init(stringLiteral value: String) { self.name = value }
    /// The name.
    public var description: String { name }
}
