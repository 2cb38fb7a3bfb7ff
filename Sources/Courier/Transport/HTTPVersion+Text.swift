package import NIOHTTP1

extension HTTPVersion {
    /// The version as a status line names it: `HTTP/1.1`, `HTTP/1.0`, `HTTP/2` (and `HTTP/3`): from 2 on, without
    /// a minor number. The usual ones are literals, so naming them allocates nothing.
    package var text: String {
        switch (major, minor) {
        case (1, 1): "HTTP/1.1"
        case (1, 0): "HTTP/1.0"
        case (2, _): "HTTP/2"
        case (let major, _) where major >= 2: "HTTP/\(major)"
        default: "HTTP/\(major).\(minor)"
        }
    }
}
