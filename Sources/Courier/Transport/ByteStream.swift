public import NIOCore

/// A type-erased, single-pass stream of byte chunks: request bodies going out and response bodies coming in.
///
/// Iterate it once, unless it was made ``init(_:replayable:)`` with `replayable` true. Wrapping keeps the ``Transport`` protocol free of generics while every transport keeps
/// its own backpressure: the next chunk is asked for only when the consumer wants it.
public struct ByteStream: AsyncSequence, Sendable {
    /// Each chunk is a `ByteBuffer`.
    public typealias Element = ByteBuffer

    private let makeIterator: @Sendable () -> AsyncIterator
    /// Whether every iteration starts again from the first byte, so a request body can be sent again (a retry,
    /// a 307 or 308 redirect).
    public let isReplayable: Bool

    /// Wraps any sendable sequence of `ByteBuffer`s. Pass `replayable: true` only when each iteration of `source`
    /// yields the same bytes from the start (as an array does, or an OpenAPI `HTTPBody` that allows multiple
    /// iterations); a request body made of it can then be retried.
    public init<Source: AsyncSequence & Sendable>(
        _ source: Source,
        replayable: Bool = false
    ) where Source.Element == ByteBuffer {
        makeIterator = {
            let box = IteratorBox(source.makeAsyncIterator())
            return AsyncIterator { try await box.next() }
        }
        isReplayable = replayable
    }

    /// A stream of the given chunks, already in memory. As a request body it is sent once, like any stream made
    /// without `replayable`.
    public init(chunks: [ByteBuffer]) {
        makeIterator = {
            var remaining = chunks[...]
            return AsyncIterator { remaining.popFirst() }
        }
        isReplayable = false
    }

    /// `prefix` again, then the rest of the iteration `iterator` was part of: what a reader that peeked at a
    /// stream's first chunks hands on. Iterated once, like every body stream; a second iteration gets only `prefix`.
    init(prefix: [ByteBuffer], continuing iterator: sending AsyncIterator) {
        let rest = Locked<AsyncIterator?>(iterator)
        makeIterator = {
            var remaining = prefix[...]
            var base = rest.withLock { $0.take() }
            return AsyncIterator {
                if let chunk = remaining.popFirst() { return chunk }
                return try await base?.next()
            }
        }
        isReplayable = false
    }

    /// An empty stream.
    public static var empty: ByteStream { ByteStream(chunks: []) }

    /// This stream, whose reader's task calls `cancel` when it is cancelled while it waits for a chunk.
    func cancelling(onTaskCancel cancel: @escaping @Sendable () -> Void) -> ByteStream {
        ByteStream(makeIterator: { [makeIterator] in
            var base = makeIterator()
            return AsyncIterator {
                try await withTaskCancellationHandler {
                    try await base.next()
                } onCancel: {
                    cancel()
                }
            }
        })
    }

    private init(makeIterator: @escaping @Sendable () -> AsyncIterator) {
        self.makeIterator = makeIterator
        isReplayable = false
    }

    /// Starts the (single) iteration.
    public func makeAsyncIterator() -> AsyncIterator { makeIterator() }

    /// Produces the next chunk, or `nil` at the end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let nextChunk: () async throws -> ByteBuffer?

        init(_ next: @escaping () async throws -> ByteBuffer?) { nextChunk = next }

        /// The next chunk, or `nil` at the end.
        public mutating func next() async throws -> ByteBuffer? { try await nextChunk() }
    }
}

/// Holds an iterator so a closure can advance it; lives inside one iteration, never shared between tasks.
private final class IteratorBox<Base: AsyncIteratorProtocol> where Base.Element == ByteBuffer {
    private var base: Base
    init(_ base: Base) { self.base = base }
    func next() async throws -> ByteBuffer? { try await base.next() }
}
