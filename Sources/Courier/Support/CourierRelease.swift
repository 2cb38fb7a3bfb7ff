/// The version of this release of Courier, as the changelog names it (semantic versioning): read it as
/// `Courier.version`.
///
/// A module-level constant, not a member of a type: a type named `Courier` inside the module `Courier` would hide
/// the module's name, so `Courier.Session` would stop compiling in code that imports it. Qualified by the module,
/// `Courier.version` reads as a member would.
public let version = "0.1.0"

/// Which release of Courier this is, for code that prefers a namespace to the module-level ``version``.
public enum CourierRelease {
    /// The release's version: the same as `Courier.version`.
    public static var version: String { Courier.version }

    /// The `User-Agent` every session sends unless its configuration says otherwise: `courier/VERSION`.
    public static let userAgent = "courier/\(Courier.version)"
}
