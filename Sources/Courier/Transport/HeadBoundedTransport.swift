/// A transport that can leave the body's share of the deadline to its caller.
///
/// The session reads every response it decodes inside a task of its own, which ``RequestPool`` cancels when the
/// request's deadline passes; such a caller needs the transport to bound only the head. That lets
/// ``AsyncHTTPClientTransport`` use AsyncHTTPClient's async API, which runs each exchange on its connection's
/// event loop, instead of its delegate API, whose callbacks hop between event loops and cost about a fifth more
/// CPU per small request.
protocol HeadBoundedTransport: Transport {
    /// Sends `request` like ``Transport/send(_:)``, except that `request.deadline` bounds only the arrival of the
    /// head: the caller reads the body within the deadline itself, by cancelling the reading task when it passes.
    func sendBoundingHead(_ request: TransportRequest) async throws -> TransportResponse
}
