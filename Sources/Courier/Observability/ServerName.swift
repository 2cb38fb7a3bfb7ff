/// The server a connection's first request names in its `Host` field: the host, and the port (the scheme's
/// default when the field names none).
struct ServerName: Equatable {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init(hostField: String?, isSecure: Bool) {
        let defaultPort = isSecure ? 443 : 80
        guard let field = hostField, !field.isEmpty else {
            (host, port) = ("", defaultPort)
            return
        }
        // `[::1]:8443`, `example.com:8080`, `example.com`: the port follows the last colon outside brackets.
        let closing = field.lastIndex(of: "]")
        if let colon = field.lastIndex(of: ":"), closing.map({ colon > $0 }) ?? true,
            field.firstIndex(of: ":") == colon || closing != nil,
            let number = Int(field[field.index(after: colon)...]), (0...65535).contains(number)
        {
            host = String(field[..<colon])
            port = number
        } else {
            host = field
            port = defaultPort
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    }
}
