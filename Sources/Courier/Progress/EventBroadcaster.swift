import Synchronization

/// Hands each element to every current subscriber, each through its own `AsyncStream`.
///
/// With `replaysLatest` a new subscriber first receives the latest element (the current state of a progress);
/// with a `bufferLimit` a slow subscriber keeps only the newest elements, which throttles it without ever
/// losing the last one.
package final class EventBroadcaster<Element: Sendable>: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var latest: Element?
        var isFinished = false
    }

    private let state = Locked(State())
    /// How many subscribers there are, readable without the lock: most owners have none, and then ``yield(_:)``
    /// returns at once instead of taking the lock on every request.
    private let subscriberCount = Atomic<Int>(0)
    private let replaysLatest: Bool
    private let bufferLimit: Int?

    package init(replaysLatest: Bool, bufferLimit: Int? = nil) {
        self.replaysLatest = replaysLatest
        self.bufferLimit = bufferLimit
    }

    /// A new stream of the elements from now on (after the latest one, when replaying).
    package func subscribe() -> AsyncStream<Element> { subscribe(startingWith: []) }

    /// A new stream that first yields `initial` (the current state, as its owner sees it), then the elements
    /// from now on. The owner calls it where it also yields, so nothing slips in between.
    package func subscribe(startingWith initial: [Element]) -> AsyncStream<Element> {
        let policy: AsyncStream<Element>.Continuation.BufferingPolicy =
            bufferLimit.map { .bufferingNewest($0) } ?? .unbounded
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: policy)
        let id = state.withLock { state -> UInt64? in
            if let latest = state.latest, replaysLatest { continuation.yield(latest) }
            for element in initial { continuation.yield(element) }
            guard !state.isFinished else { return nil }
            defer { state.nextID += 1 }
            state.subscribers[state.nextID] = continuation
            subscriberCount.store(state.subscribers.count, ordering: .releasing)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            state.withLock { state in
                state.subscribers.removeValue(forKey: id)
                subscriberCount.store(state.subscribers.count, ordering: .releasing)
            }
        }
        return stream
    }

    /// Sends `element` to every subscriber. It is built only when it goes somewhere: most owners (a session's
    /// pool) have no subscriber, and then an event costs one atomic load.
    package func yield(_ element: @autoclosure () -> Element) {
        // Without subscribers (checked without the lock) only a replayed latest element matters; a subscriber
        // arriving meanwhile starts after this element either way.
        guard replaysLatest || subscriberCount.load(ordering: .acquiring) > 0 else { return }
        let element = element()
        // Yield under the lock so every subscriber sees the elements in the same order.
        state.withLock { state in
            guard !state.isFinished else { return }
            if replaysLatest { state.latest = element }
            for continuation in state.subscribers.values { continuation.yield(element) }
        }
    }

    /// Ends the streams of the current subscribers; later subscribers get a working stream.
    package func endSubscriptions() {
        let subscribers = state.withLock { state in
            defer {
                state.subscribers = [:]
                subscriberCount.store(0, ordering: .releasing)
            }
            return state.subscribers.values
        }
        for continuation in subscribers { continuation.finish() }
    }

    /// Ends every stream; later subscribers get the latest element (when replaying) and the end.
    package func finish() {
        state.withLock { $0.isFinished = true }  // from here on, no subscriber is added, so none is missed below
        endSubscriptions()
    }
}
