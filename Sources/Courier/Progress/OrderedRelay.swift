/// Hands elements from synchronous code (a callback that must not wait) to an async consumer one at a time, in the
/// order they were given: one channel and one loop, instead of a task per element, whose tasks may run in any order.
struct OrderedRelay<Element: Sendable>: Sendable {
    private let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self)
    }

    /// Queues `element`; never waits.
    func yield(_ element: Element) {
        continuation.yield(element)
    }

    /// No more elements: ``run(_:)`` returns once it has delivered the queued ones.
    func finish() {
        continuation.finish()
    }

    /// Delivers the elements in order until ``finish()`` (or until the calling task is cancelled).
    func run(_ deliver: (Element) async -> Void) async {
        for await element in stream { await deliver(element) }
    }
}
