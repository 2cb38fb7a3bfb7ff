/// The life of one download as a pure value: an event goes in, the new state and the action for the owning
/// ``Download`` actor come out. Every allowed transition is listed in ``transitions``; any other event is a
/// programming error, so callers check ``canHandle(_:)`` first (the actor turns a refused user operation into
/// an ``CourierError/Code/invalidState`` error instead).
struct DownloadStateMachine: Sendable {
    /// What can happen to a download.
    enum Event: String, Sendable, CaseIterable {
        /// The caller starts it (or resumes it): queue it.
        case start
        /// The manager gives it a slot.
        case slotGranted
        /// The caller pauses it.
        case pause
        /// The caller cancels it.
        case cancel
        /// The caller restarts it from zero.
        case restart
        /// The transfer finished and the file is verified and in place.
        case finished
        /// The transfer stopped with an error.
        case failed
    }

    /// What the actor must do.
    enum Action: Equatable, Sendable {
        /// Ask the manager for a slot.
        case enqueue
        /// Start transferring.
        case beginTransfer
        /// Stop the transfer and keep the partial file and record (pause).
        case stopTransfer
        /// Stop any transfer and delete the partial file and record (cancel).
        case stopAndDiscard
        /// Stop any transfer, delete the partial file and record, and queue again (restart).
        case discardAndEnqueue
        /// Tell observers; nothing else to do.
        case report
    }

    /// Every allowed transition: from a state, on an event, to a state with an action.
    static let transitions: [DownloadState: [Event: (DownloadState, Action)]] = [
        .idle: [
            .start: (.waiting, .enqueue), .cancel: (.cancelled, .stopAndDiscard),
            .restart: (.waiting, .discardAndEnqueue),
        ],
        .waiting: [
            .slotGranted: (.running, .beginTransfer), .pause: (.paused, .report),
            .cancel: (.cancelled, .stopAndDiscard),
            .restart: (.waiting, .discardAndEnqueue),
        ],
        .running: [
            .pause: (.paused, .stopTransfer), .cancel: (.cancelled, .stopAndDiscard),
            .restart: (.waiting, .discardAndEnqueue),
            .finished: (.completed, .report), .failed: (.failed, .report),
        ],
        .paused: [
            .start: (.waiting, .enqueue), .cancel: (.cancelled, .stopAndDiscard),
            .restart: (.waiting, .discardAndEnqueue),
        ],
        .failed: [
            .start: (.waiting, .enqueue), .cancel: (.cancelled, .stopAndDiscard),
            .restart: (.waiting, .discardAndEnqueue),
        ],
        .completed: [.restart: (.waiting, .discardAndEnqueue)],
        .cancelled: [.restart: (.waiting, .discardAndEnqueue)],
    ]

    private(set) var state: DownloadState

    init(state: DownloadState = .idle) { self.state = state }

    /// Whether `event` is allowed now.
    func canHandle(_ event: Event) -> Bool { Self.transitions[state]?[event] != nil }

    /// Moves to the next state and returns what to do. An event the table does not allow stops the program:
    /// it means the actor lost track of its own state, and carrying on could write a file it should not.
    mutating func handle(_ event: Event) -> Action {
        guard let (next, action) = Self.transitions[state]?[event] else {
            preconditionFailure("download state machine: \(event) is not allowed in state \(state)")
        }
        state = next
        return action
    }
}
