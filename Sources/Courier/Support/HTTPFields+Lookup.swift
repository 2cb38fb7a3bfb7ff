import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, joined with ", " when there are several: what the subscript gives,
    /// in one plain pass without its lazy joining, since the session reads a few response headers per request.
    func value(of name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }
}

extension HTTPFields {
    /// The fields in the order given, repeated names kept as they are. Measured on every response (and every disk
    /// cache hit): setting them one by one through the subscripts, which scan the fields for each name, cost about
    /// a sixth more, and one `replaceSubrange` of the whole list more still (it runs unspecialised).
    init(inOrder fields: [HTTPField]) {
        self.init()
        reserveCapacity(fields.count)
        append(contentsOf: fields)
    }
}

extension HTTPFields {
    /// The `Cookie` fields as one, joined with "; ": HTTP/1.1 allows a single Cookie header (RFC 6265 §5.4), and
    /// HTTPFields' subscript splits a value set through it (`headers[.cookie] = "a=1; b=2"`) into one field per
    /// pair. Nothing changes when there is one field or none.
    mutating func joinCookieFields() {
        let values = self[values: .cookie]
        guard values.count > 1 else { return }
        self[values: .cookie] = []
        append(HTTPField(name: .cookie, value: values.joined(separator: "; ")))
    }
}
