public import NIOCore

/// A type-erased, single-pass stream of byte chunks: request bodies going out and response bodies coming in.
///
/// Iterate it once. Wrapping keeps the ``Transport`` protocol free of generics while every transport keeps
/// its own backpressure: the next chunk is asked for only when the consumer wants it.
public struct ByteStream: AsyncSequence, Sendable {
    /// Each chunk is a `ByteBuffer`.
    public typealias Element = ByteBuffer

    private let makeIterator: @Sendable () -> AsyncIterator

    /// Wraps any sendable sequence of `ByteBuffer`s.
    public init<Source: AsyncSequence & Sendable>(_ source: Source) where Source.Element == ByteBuffer {
        makeIterator = {
            let box = IteratorBox(source.makeAsyncIterator())
            return AsyncIterator { try await box.next() }
        }
    }

    /// A stream of the given chunks, already in memory.
    public init(chunks: [ByteBuffer]) {
        makeIterator = {
            var remaining = chunks[...]
            return AsyncIterator { remaining.popFirst() }
        }
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
