import Courier
import Foundation
import HTTPTypes
import NIOCore

/// URLs and redirect targets through the checks that stand before NIO: a URL that passes ``URLBuilder/validate``
/// and every redirect target that is followed is an absolute http(s) URL whose port NIO's `SocketAddress` can
/// hold (which it traps on otherwise), and a port written in the text is never silently read as none.
enum RedirectFuzz {
    private static let start = URL(string: "http://a.example.com:8080/start?x=1")

    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let pieces = input.strings(2)
        let (location, other) = (pieces[0], pieces[1])
        for text in [location, "http://" + location, "http://127.0.0.1:" + other + "/"] {
            guard let url = URL(string: text) else { continue }
            if (try? URLBuilder.validate(url)) != nil { try requireConnectable(url, from: text) }
        }
        guard let start else { return }
        for status in [HTTPResponse.Status.found, .seeOther, .permanentRedirect] {
            var state = RedirectState(policy: RedirectPolicy(), initial: .post, url: start)
            guard
                let action = try? state.next(
                    method: .post,
                    url: start,
                    status: status,
                    location: location,
                    bodyIsReplayable: true
                ),
                case .follow(_, let target, _, _) = action
            else { continue }
            try requireConnectable(target, from: location)
        }
    }

    private static func requireConnectable(_ url: URL, from text: String) throws(InvariantViolation) {
        let scheme = url.scheme?.lowercased()
        try require(
            scheme == "http" || scheme == "https",
            "\(text.debugDescription) passed as \(url), which is not http(s)"
        )
        try require(url.portProblem == nil, "\(text.debugDescription) passed with a port problem")
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        try require((1...65_535).contains(port), "\(text.debugDescription) passed with port \(port)")
        // What NIO does with the port when it connects: this traps on a port it cannot hold.
        _ = try? SocketAddress(ipAddress: "127.0.0.1", port: port)
    }
}
