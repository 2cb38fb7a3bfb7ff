#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Flattens an `Encodable` value into named form fields, as PHP, Rails and multipart-kit read them: nested values
/// as `user[name]`, arrays as `tags[0]`, `tags[1]`, `nil` left out, `Data` as the field's bytes.
struct FormFieldsEncoder {
    /// One field: its name and its bytes (text as UTF-8).
    struct Field: Equatable {
        var name: String
        var content: Data
    }

    /// The value's fields in the order it encodes them; a key encoded twice keeps its first place and last value.
    func fields<Value: Encodable>(of value: Value) throws -> [Field] {
        let sink = Sink()
        try FieldEncoder(codingPath: [], sink: sink).encode(value)
        return sink.fields
    }
}

/// Where the encoders of one value put its fields.
private final class Sink {
    var fields: [FormFieldsEncoder.Field] = []

    func add(_ path: [any CodingKey], _ content: Data) throws {
        guard let first = path.first else {
            throw EncodingError.invalidValue(
                content,
                .init(codingPath: path, debugDescription: "a form needs a keyed value at its top, not a single value")
            )
        }
        let name = path.dropFirst().reduce(first.stringValue) { $0 + "[\($1.stringValue)]" }
        if let index = fields.firstIndex(where: { $0.name == name }) {
            fields[index].content = content
        } else {
            fields.append(.init(name: name, content: content))
        }
    }
}

/// A key of an array element, `0`, `1`, …
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct FieldEncoder: Encoder, SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    let sink: Sink
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedFields<Key>(codingPath: codingPath, sink: sink))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedFields(codingPath: codingPath, sink: sink) }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws {}
    func encode(_ value: Bool) throws { try sink.add(codingPath, Data((value ? "true" : "false").utf8)) }
    func encode(_ value: String) throws { try sink.add(codingPath, Data(value.utf8)) }
    func encode(_ value: Double) throws { try sink.add(codingPath, Data("\(value)".utf8)) }
    func encode(_ value: Float) throws { try sink.add(codingPath, Data("\(value)".utf8)) }
    func encode(_ value: Int) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: Int8) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: Int16) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: Int32) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: Int64) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: UInt) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: UInt8) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: UInt16) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: UInt32) throws { try sink.add(codingPath, Data(String(value).utf8)) }
    func encode(_ value: UInt64) throws { try sink.add(codingPath, Data(String(value).utf8)) }

    func encode<T: Encodable>(_ value: T) throws {
        if let data = value as? Data {
            try sink.add(codingPath, data)
        } else if let url = value as? URL {
            try sink.add(codingPath, Data(url.absoluteString.utf8))
        } else {
            try value.encode(to: self)
        }
    }

    func nested(_ key: any CodingKey) -> FieldEncoder { FieldEncoder(codingPath: codingPath + [key], sink: sink) }
}

private struct KeyedFields<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let codingPath: [any CodingKey]
    let sink: Sink

    private var encoder: FieldEncoder { FieldEncoder(codingPath: codingPath, sink: sink) }

    func encodeNil(forKey key: Key) throws {}

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encoder.nested(key).encode(value) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.nested(key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.nested(key).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder }

    func superEncoder(forKey key: Key) -> any Encoder { encoder.nested(key) }
}

private struct UnkeyedFields: UnkeyedEncodingContainer {
    let codingPath: [any CodingKey]
    let sink: Sink
    private(set) var count = 0

    init(codingPath: [any CodingKey], sink: Sink) {
        self.codingPath = codingPath
        self.sink = sink
    }

    private mutating func next() -> FieldEncoder {
        defer { count += 1 }
        return FieldEncoder(codingPath: codingPath + [IndexKey(count)], sink: sink)
    }

    mutating func encodeNil() throws {}  // left out, and not counted: the next element takes its index

    mutating func encode<T: Encodable>(_ value: T) throws { try next().encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}
