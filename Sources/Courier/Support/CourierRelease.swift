/// Which release of Courier this is.
///
/// Not spelled `Courier.version`: a type named `Courier` inside the module `Courier` would hide the module's
/// name, so `Courier.Session` would stop compiling in code that imports it.
public enum CourierRelease {
    /// The release's version, as the changelog names it (semantic versioning).
    public static let version = "0.1.0"

    /// The `User-Agent` every session sends unless its configuration says otherwise: `courier/VERSION`.
    public static let userAgent = "courier/\(version)"
}
