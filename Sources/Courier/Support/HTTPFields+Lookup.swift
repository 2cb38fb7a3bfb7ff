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
    /// Adds a field after the others, through the inlinable subscripts (specialised here), not the
    /// RangeReplaceableCollection path (`append`, `HTTPFields(_:)`, `replaceSubrange`), which is unspecialised and
    /// showed in the profile of every response and every disk cache hit: a name seen for the first time is set, a repeated one (or `Cookie`, which
    /// the plain subscript would split) appended to its fields, which puts it last as well.
    mutating func appendInOrder(_ name: HTTPField.Name, _ value: String) {
        if name != .cookie, !contains(name) {
            self[name] = value
        } else {
            self[fields: name].append(HTTPField(name: name, value: value))
        }
    }
}
