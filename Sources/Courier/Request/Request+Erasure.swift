/// A request whose value type is erased: what the session's machinery runs, so that machinery is compiled once
/// for this one concrete type instead of running generic code that looks up type metadata on every request.
typealias ErasedRequest = Request<DecodedValue>

/// A response to an ``ErasedRequest``.
typealias ErasedResponse = Response<DecodedValue>

/// A decoded value of a type the session's machinery does not know; the typed shell that erased the request gets
/// it back with ``Response/unerased(as:)``, without a dynamic cast (which cost about a microsecond a request).
///
/// `@unchecked Sendable` because a class that is not final cannot be checked: this one holds nothing, and its one
/// subclass, ``Typed``, holds only an immutable `Sendable` value.
class DecodedValue: @unchecked Sendable {
    /// The value, typed.
    final class Typed<Value: Sendable>: DecodedValue, @unchecked Sendable {
        let value: Value

        init(_ value: Value) {
            self.value = value
        }
    }
}

extension Request {
    /// The same request, decoding into a ``DecodedValue``.
    var erased: ErasedRequest {
        let decode = self.decode
        return decoding { DecodedValue.Typed(try decode($0)) }
    }
}

extension Response where Value == DecodedValue {
    /// The response with its value as the `T` the erased request decoded it from. Consuming, like ``Response/map(_:)``,
    /// so the other fields move rather than being copied.
    consuming func unerased<T: Sendable>(as type: T.Type = T.self) -> Response<T> {
        // Unchecked in release builds: the value came from the very decoder `erased` wrapped, which makes a `Typed<T>`.
        map { unsafeDowncast($0, to: DecodedValue.Typed<T>.self).value }
    }
}
