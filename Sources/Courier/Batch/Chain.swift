public import HTTPTypes

/// Runs the steps of a chain, where each step's request is built from what earlier steps returned (YTKNetwork's
/// and HLNetworking's chain requests). Get one from ``Session/chain(_:)``.
///
/// ```swift
/// let outcome = try await session.chain { chain in
///     let login = try await chain.step("login", .post("/login", body: .json(credentials)).decoding(Token.self))
///     if login.value.isGuest { return Profile.guest }           // break the chain early with a value
///     return try await chain.step("profile", Request<Profile>.get("/me").header("Authorization", "Bearer \(login.value.jwt)")).value
/// }
/// print(outcome.value, outcome.steps.map(\.name))
/// ```
///
/// A failing step stops the chain: the error is ``CourierError/Code/chainFailed`` and names the step.
/// Cancelling the task that runs the chain cancels the step in flight and runs no other.
public final class ChainContext: Sendable {
    private let session: Session
    private let records = Locked<[ChainStepRecord]>([])

    init(session: Session) {
        self.session = session
    }

    /// Sends `request` as the next step. Throws ``CourierError/Code/chainFailed`` naming this step when it fails,
    /// or ``CourierError/Code/cancelled`` when the chain was cancelled.
    public func step<Value>(_ name: String, _ request: Request<Value>) async throws -> Response<Value> {
        let index = records.withLock { $0.count }
        let start = ContinuousClock.now
        do {
            try Task.checkCancellation()
            let response = try await session.send(request)
            record(
                ChainStepRecord(
                    index: index,
                    name: name,
                    status: response.status,
                    error: nil,
                    duration: start.duration(to: .now)
                )
            )
            return response
        } catch {
            let failure = RequestExecutor.normalize(error)
            record(
                ChainStepRecord(
                    index: index,
                    name: name,
                    status: failure.status,
                    error: failure,
                    duration: start.duration(to: .now)
                )
            )
            if failure.code == .cancelled { throw failure }
            throw CourierError.failedStep(.chainFailed, index: index, name: name, error: failure)
        }
    }

    /// The steps run so far, in order.
    public var steps: [ChainStepRecord] { records.withLock { $0 } }

    private func record(_ step: ChainStepRecord) {
        records.withLock { $0.append(step) }
    }
}

/// One step of a chain as it ran.
public struct ChainStepRecord: Sendable, CustomStringConvertible {
    /// The step's position, from 0.
    public let index: Int
    /// The name given to ``ChainContext/step(_:_:)``.
    public let name: String
    /// The response status, when a response arrived.
    public let status: HTTPResponse.Status?
    /// The error, when the step failed.
    public let error: CourierError?
    /// How long the step took.
    public let duration: Duration

    /// `0 login: HTTP 200 (12 ms)`.
    public var description: String {
        let outcome = error.map { $0.code.rawValue } ?? status.map { "HTTP \($0.code)" } ?? "no response"
        return "\(index) \(CourierError.printable(name)): \(outcome) (\(duration.formattedSeconds))"
    }
}

/// What a chain returned, with the steps that ran.
public struct ChainOutcome<Value: Sendable>: Sendable {
    /// The value the chain's body returned (possibly early).
    public let value: Value
    /// The steps that ran, in order.
    public let steps: [ChainStepRecord]
}
