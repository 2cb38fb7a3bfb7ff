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
