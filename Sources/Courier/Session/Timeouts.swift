/// The three timeouts every request has.
public struct Timeouts: Sendable, Hashable {
    /// Establishing a connection (TCP and TLS).
    public var connect: Duration
    /// The longest silence allowed while waiting for bytes. A request body that is being written must go out at
    /// 64 KiB or more per this time, or the request ends with ``CourierError/TimeoutKind/writeIdle`` (a server
    /// that stopped reading).
    public var readIdle: Duration
    /// The whole request, from sending to the last body byte, redirects included.
    public var total: Duration

    /// A total with no practical limit (a year), for transfers that end on silence (``readIdle``) rather than on a
    /// clock, as curl's do without `--max-time`: a download, an upload, the CLI's requests.
    public static let noLimit = Duration.seconds(365 * 86_400)

    /// Creates timeouts; each defaults to 30 seconds.
    public init(connect: Duration = .seconds(30), readIdle: Duration = .seconds(30), total: Duration = .seconds(30)) {
        self.connect = connect
        self.readIdle = readIdle
        self.total = total
    }

    /// These timeouts with a request's overrides applied.
    public func applying(_ overrides: TimeoutOverrides) -> Timeouts {
        Timeouts(
            connect: overrides.connect ?? connect,
            readIdle: overrides.readIdle ?? readIdle,
            total: overrides.total ?? total
        )
    }
}

/// Per-request timeout overrides; `nil` keeps the session's value.
public struct TimeoutOverrides: Sendable, Hashable {
    /// Overrides ``Timeouts/connect``.
    public var connect: Duration?
    /// Overrides ``Timeouts/readIdle``.
    public var readIdle: Duration?
    /// Overrides ``Timeouts/total``.
    public var total: Duration?

    /// Creates overrides.
    public init(connect: Duration? = nil, readIdle: Duration? = nil, total: Duration? = nil) {
        self.connect = connect
        self.readIdle = readIdle
        self.total = total
    }
}
