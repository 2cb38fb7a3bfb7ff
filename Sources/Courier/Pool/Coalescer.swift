import Foundation
import HTTPTypes
import Synchronization

/// What makes two requests the same call: method, resolved URL, the headers that change the answer, and the
/// body bytes (idempotent methods only).
struct CoalescingKey: Hashable, Sendable {
    let method: HTTPRequest.Method
    let url: String
    let varyingHeaders: [String]
    let body: Data?

    /// The key of `request`, or `nil` when it must make its own call: a method that is not idempotent, or a
    /// body that cannot be compared (a file or a stream).
    init?(_ request: PreparedRequest, varyingHeaders names: [HTTPField.Name]) {
        guard request.isIdempotent else { return nil }
        switch request.body {
        case .empty: body = nil
        case .bytes(let data): body = data
        case .file, .stream: return nil
        }
        method = request.method
        url = request.url.absoluteString
        varyingHeaders = names.map { request.headers[values: $0].joined(separator: ", ") }
    }
}

/// Single flight: callers with the same key share one call. Each caller can leave on its own (cancelled);
/// the call is cancelled only when every caller has left. The call runs in a task of its own, so no caller's
/// cancellation reaches it while others still wait.
final class Coalescer<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    private struct Flight {
        let id: UInt64
        var waiters: [UInt64: Waiter]
        var task: Task<Void, Never>?
    }

    private enum Arrival {
        case cancelled
        case joined
        case leads(flight: UInt64)
    }

    private struct State {
        var flights: [CoalescingKey: Flight] = [:]
        /// Callers between arriving and joining a flight; `true` once cancelled in that gap.
        var arriving: [UInt64: Bool] = [:]
        var nextID: UInt64 = 0

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    private let state = Mutex(State())

    /// How many calls are in flight (for tests).
    var flightCount: Int { state.withLock { $0.flights.count } }

    /// Joins the call for `key`, or starts it with `operation` when there is none. `joined` runs when the
    /// caller shares a call someone else started.
    func run(_ key: CoalescingKey, joined: @Sendable () -> Void,
             _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let caller = state.withLock { state in
            let id = state.makeID()
            state.arriving[id] = false
            return id
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let arrival = state.withLock { state -> Arrival in
                    let cancelled = state.arriving.removeValue(forKey: caller) ?? true
                    if cancelled { return .cancelled }
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[caller] = continuation
                        return .joined
                    }
                    let flight = state.makeID()
                    state.flights[key] = Flight(id: flight, waiters: [caller: continuation])
                    return .leads(flight: flight)
                }
                switch arrival {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .joined: joined()
                case .leads(let flight): start(flight, key: key, operation)
                }
            }
        } onCancel: {
            let (waiter, abandoned) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
                if state.arriving[caller] != nil {
                    state.arriving[caller] = true
                    return (nil, nil)
                }
                guard let waiter = state.flights[key]?.waiters.removeValue(forKey: caller) else { return (nil, nil) }
                guard state.flights[key]?.waiters.isEmpty == true else { return (waiter, nil) }
                return (waiter, state.flights.removeValue(forKey: key)?.task)
            }
            waiter?.resume(throwing: CancellationError())
            abandoned?.cancel()
        }
    }

    private func start(_ flight: UInt64, key: CoalescingKey, _ operation: @escaping @Sendable () async throws -> Value) {
        let task = Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            let waiters = state.withLock { state -> [Waiter] in
                guard state.flights[key]?.id == flight else { return [] }  // abandoned: everyone left
                return state.flights.removeValue(forKey: key).map { Array($0.waiters.values) } ?? []
            }
            for waiter in waiters { waiter.resume(with: result) }
        }
        let abandoned = state.withLock { state -> Bool in
            guard state.flights[key]?.id == flight else { return true }
            state.flights[key]?.task = task
            return false
        }
        if abandoned { task.cancel() }
    }
}
