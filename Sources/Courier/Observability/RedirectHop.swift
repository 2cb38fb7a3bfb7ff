public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One redirect a call followed: the request as it went out, the redirect's status and headers, where the call went
/// next, and the hop's own timing (from its send to the end of its discarded body), with the connection that
/// carried it. ``DebugMessage/redirects`` lists them in order; ``HARRecorder`` writes each as an entry of its own,
/// as browsers do.
///
/// Recorded only while the session has monitors, so a session without them keeps nothing per hop.
public struct RedirectHop: Sendable {
    /// The request as it was sent: its cookies and trace context included.
    public var request: PreparedRequest
    /// The redirect's status (301, 302, 303, 307 or 308).
    public var status: HTTPResponse.Status
    /// The redirect's headers.
    public var headers: HTTPFields
    /// The URL the call went to next, `Location` resolved against the request's URL.
    public var location: URL
    /// From the hop's send to the end of its answer, with the connection that carried it.
    public var timing: Timing
    /// The request the call sent next (before its cookies), for a call that fails after the hop: its
    /// ``DebugMessage/currentRequest`` is this one.
    var next: PreparedRequest?
    /// The attempt the hop belongs to: `next` is the last request sent only when the call ended on this attempt.
    var attempt = 0

    /// Creates a hop.
    public init(
        request: PreparedRequest,
        status: HTTPResponse.Status,
        headers: HTTPFields,
        location: URL,
        timing: Timing
    ) {
        self.request = request
        self.status = status
        self.headers = headers
        self.location = location
        self.timing = timing
    }
}
