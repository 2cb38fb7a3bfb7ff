/// How far an upload has come: bytes handed to the connection so far.
public struct UploadProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes the transport has taken (it takes them as the connection accepts them).
    public var bytesSent: Int64
    /// The body's length, when known before sending.
    public var totalBytes: Int64?
    /// The recent rate, averaged over about two seconds.
    public var bytesPerSecond: Double

    /// Creates a progress value.
    public init(bytesSent: Int64, totalBytes: Int64?, bytesPerSecond: Double) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// `bytesSent / totalBytes`, when the total is known (1 for an empty body).
    public var fraction: Double? {
        guard let totalBytes else { return nil }
        return totalBytes == 0 ? 1 : min(1, Double(bytesSent) / Double(totalBytes))
    }

    /// `1.2 MB of 4.0 MB (30%), 2.1 MB/s`.
    public var description: String {
        var text = ByteCount.format(bytesSent)
        if let totalBytes, let fraction { text += " of \(ByteCount.format(totalBytes)) (\(Int((fraction * 100).rounded(.down)))%)" }
        return text + ", \(ByteCount.format(Int64(bytesPerSecond)))/s"
    }
}
