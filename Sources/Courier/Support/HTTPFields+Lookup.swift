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
