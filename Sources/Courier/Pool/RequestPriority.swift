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
