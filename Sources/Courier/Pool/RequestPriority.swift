/// How soon a waiting request starts compared with the others: higher first, first-in first-out within one
/// priority.
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Starts after everything else that waits (prefetching, analytics).
    case low = 0
    /// The default.
    case normal = 1
    /// Starts before everything else that waits (what the user is looking at).
    case high = 2

    /// Orders by urgency: `.low < .normal < .high`.
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `low`, `normal` or `high`.
    public var description: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        }
    }
}

/// Identifies one request in a ``RequestPool`` for as long as it is in flight.
public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number, unique within one pool.
    public let rawValue: UInt64

    /// Wraps a number; pools hand these out.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders by creation.
    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#12`.
    public var description: String { "#\(rawValue)" }
}
