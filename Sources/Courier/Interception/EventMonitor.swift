public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Told about each request's life (HLNetworking's will/did-send hooks, RBEFireworks' accessories).
///
/// Every method has an empty default; implement the ones you need. Monitors are called on the task that runs
/// the request, so keep them quick, and hand slow work to a task of your own.
public protocol EventMonitor: Sendable {
    /// The request is about to go to the transport (after adapters), once per attempt.
    func willSend(_ request: PreparedRequest)
    /// The transport sent the request and the response head arrived.
    func didSend(_ request: PreparedRequest)
    /// The complete response arrived, before validation and decoding.
    func didReceive(_ response: ResponseBody, for request: PreparedRequest)
    /// The answer to `request` is a redirect with `status` that the session follows to `url` (the next
    /// ``willSend(_:)`` is for it).
    func willRedirect(_ request: PreparedRequest, status: HTTPResponse.Status, to url: URL)
    /// The request is about to be retried after `delay`.
    func willRetry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError)
    /// The request is being cancelled.
    func willCancel(_ request: PreparedRequest)
    /// The request finished, with its final outcome and timing.
    func didComplete(_ request: PreparedRequest, result: Result<ResponseBody, CourierError>, timing: Timing)
    /// The request finished; everything about it in one value (HLNetworking's debug message), after ``didComplete(_:result:timing:)``.
    func didFinish(with message: DebugMessage)
}

/// Empty defaults, so a monitor implements only what it needs.
extension EventMonitor {
    /// Does nothing.
    public func willSend(_ request: PreparedRequest) {}
    /// Does nothing.
    public func didSend(_ request: PreparedRequest) {}
    /// Does nothing.
    public func didReceive(_ response: ResponseBody, for request: PreparedRequest) {}
    /// Does nothing.
    public func willRedirect(_ request: PreparedRequest, status: HTTPResponse.Status, to url: URL) {}
    /// Does nothing.
    public func willRetry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {}
    /// Does nothing.
    public func willCancel(_ request: PreparedRequest) {}
    /// Does nothing.
    public func didComplete(_ request: PreparedRequest, result: Result<ResponseBody, CourierError>, timing: Timing) {}
    /// Does nothing.
    public func didFinish(with message: DebugMessage) {}
}
