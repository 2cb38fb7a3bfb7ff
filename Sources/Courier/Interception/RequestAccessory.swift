/// A plugin for one request (YTKNetwork's and RBEFireworks' request accessories, HLNetworking's per-request
/// hooks): told when the request starts and stops, beside the session-wide ``EventMonitor``s.
///
/// ```swift
/// struct Spinner: RequestAccessory {
///     let shows: @Sendable (Bool) -> Void
///     func requestWillStart(_ request: PreparedRequest) { shows(true) }
///     func requestWillStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) { shows(false) }
/// }
/// let user = try await session.send(Request<User>.get("/users/1").accessory(Spinner(shows: show))).value
/// ```
///
/// Each method is called once per request sent with ``Session/send(_:)``, whatever its retries and redirects, in
/// this order, on the task that runs it:
/// 1. ``requestWillStart(_:)`` once the request is prepared (adapters applied), before the cache or the network.
///    A request that cannot be prepared (a bad URL, an adapter that throws) starts nothing and calls nothing.
/// 2. ``requestWillStop(_:outcome:)`` once the outcome is known: the request has left the pool and the
///    session's monitors have heard of it, but the trace span and the metrics have not yet recorded it.
/// 3. ``requestDidStop(_:outcome:)`` after they have, just before ``Session/send(_:)`` returns or throws.
///
/// With async/await there is no completion block between "will stop" and "did stop" as there was in the
/// Objective-C libraries: the caller's code after `await` runs after both.
///
/// Between start and stop, the pool's controls tell it more (RBEFireworks' accessories hear these too), on the
/// task that calls the control: ``requestWillCancel(_:)`` before a cancel by id, URL, tag or all, a drain or the
/// caller's own cancellation reaches the request; ``requestWillSuspend(_:)`` and ``requestDidResume(_:)`` around
/// ``RequestPool/suspend(_:)`` and ``RequestPool/resume(_:)``.
public protocol RequestAccessory: Sendable {
    /// The request is about to start.
    func requestWillStart(_ request: PreparedRequest)
    /// The request's outcome is known: the final answer (validated and decoded) or the error.
    func requestWillStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>)
    /// The request has stopped, and Courier is done with it.
    func requestDidStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>)
    /// The request is about to be cancelled (through the pool, or by its caller's task).
    func requestWillCancel(_ request: PreparedRequest)
    /// The request is about to be suspended (``RequestPool/suspend(_:)``).
    func requestWillSuspend(_ request: PreparedRequest)
    /// The request was resumed (``RequestPool/resume(_:)``).
    func requestDidResume(_ request: PreparedRequest)
}

/// Empty defaults, so an accessory implements only what it needs.
extension RequestAccessory {
    /// Does nothing.
    public func requestWillStart(_ request: PreparedRequest) {}
    /// Does nothing.
    public func requestWillStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) {}
    /// Does nothing.
    public func requestDidStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) {}
    /// Does nothing.
    public func requestWillCancel(_ request: PreparedRequest) {}
    /// Does nothing.
    public func requestWillSuspend(_ request: PreparedRequest) {}
    /// Does nothing.
    public func requestDidResume(_ request: PreparedRequest) {}
}
