import HTTPTypes
import NIOHTTP1
import Synchronization

/// A response head's fields, kept as they arrived from AsyncHTTPClient and made `HTTPFields` the first time they
/// are read. Converting a head (each name checked and lowercased, each field appended) was about 1 µs of a small
/// GET, and a caller that reads only the status and the body never needs it. Immutable once read: the conversion
/// is stored with an atomic compare-and-swap, so two tasks reading at once both get the one value kept.
final class ResponseFields: Sendable {
    /// The fields as they arrived, or `nil` when made from `HTTPFields`.
    private let arrived: HTTPHeaders?
    private let converted = AtomicLazyReference<Converted>()

    /// The converted fields, in an object the atomic reference can hold.
    private final class Converted: Sendable {
        let fields: HTTPFields
        init(_ fields: HTTPFields) { self.fields = fields }
    }

    /// Fields that are `HTTPFields` already.
    init(_ fields: HTTPFields) {
        arrived = nil
        _ = converted.storeIfNil(Converted(fields))
    }

    /// Fields as AsyncHTTPClient delivered them, converted when first read.
    init(arrived: HTTPHeaders) {
        self.arrived = arrived
    }

    /// The fields; names HTTP would refuse are dropped.
    var fields: HTTPFields {
        if let done = converted.load() { return done.fields }
        return converted.storeIfNil(Converted(Self.fields(arrived ?? HTTPHeaders()))).fields
    }

    /// Whether the fields have been made `HTTPFields` (they are from the start when made from them).
    var isConverted: Bool { converted.load() != nil }

    /// The value of `name` as `HTTPFields`' subscript reads it (several joined with ", ", or "; " for
    /// `Cookie`), read where the fields are kept, so reading one field converts none.
    func value(_ name: HTTPField.Name) -> String? {
        guard let arrived, !isConverted else { return fields[name] }
        guard arrived.contains(name: name.canonicalName) else { return nil }
        return arrived[name.canonicalName].joined(separator: name == .cookie ? "; " : ", ")
    }

    /// The fields of an AsyncHTTPClient head; names HTTP would refuse are dropped.
    static func fields(_ headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }
}
