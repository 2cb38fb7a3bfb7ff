/// A request whose value type is erased: what the session's machinery runs, so that machinery is compiled once
/// for this one concrete type instead of running generic code that looks up type metadata on every request.
typealias ErasedRequest = Request<any Sendable>

/// A response to an ``ErasedRequest``.
typealias ErasedResponse = Response<any Sendable>

extension Request {
    /// The same request, decoding into an existential.
    var erased: ErasedRequest { map { $0 as any Sendable } }
}

extension Response where Value == any Sendable {
    /// The response with its value as the `T` the erased request decoded it from. Consuming, like ``Response/map(_:)``,
    /// so the other fields move rather than being copied.
    consuming func unerased<T: Sendable>(as type: T.Type = T.self) throws -> Response<T> {
        try map { value in
            guard let typed = value as? T else {
                // Unreachable: the value came from the very decoder `erased` wrapped.
                throw CourierError(code: .decoding, message: "the decoded value is a \(Swift.type(of: value)), not a \(T.self)")
            }
            return typed
        }
    }
}
