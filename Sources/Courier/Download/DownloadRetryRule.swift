import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A download's retry rule, the ``RequestRetrier`` its transfer asks after every failed exchange: failures that
/// another try can mend (the connection broke or went quiet, or the server said it is briefly unable), up to
/// ``DownloadOptions/retries`` in a row, after a delay that doubles from ``DownloadOptions/retryDelay`` up to
/// 8 s. The transfer asks it rather than the pipeline retrying the exchange itself, because only the transfer
/// can resume from the byte it reached; a failure after progress starts the count again.
struct DownloadRetryRule: RequestRetrier {
    let retries: Int
    let retryDelay: Duration

    init(_ options: DownloadOptions) {
        retries = options.retries
        retryDelay = options.retryDelay
    }

    func retry(_ request: PreparedRequest, failedWith error: CourierError, attempt: Int) -> RetryResult {
        guard Self.isTransient(error) else { return .doNotRetry(reason: "\(error.code) is not transient") }
        guard attempt <= retries else { return .doNotRetry(reason: "\(retries) retries in a row") }
        return .retry(after: Backoff(base: retryDelay, maximum: .seconds(8)).delay(after: attempt))
    }

    /// Failures worth another try from the last byte: the connection broke or went quiet, or the server said
    /// it is briefly unable (5xx).
    static func isTransient(_ error: CourierError) -> Bool {
        switch error.code {
        case .connectionClosed, .connectionReset, .connectionFailed: return true
        case .timeout: return error.timeoutKind != .total
        case .httpStatus: return [500, 502, 503, 504].contains(error.status?.code ?? 0)
        default: return false
        }
    }
}

extension CourierError {
    /// Whether no later attempt of a download can mend this failure: the request or the file is wrong, not the
    /// moment (a 4xx other than 408, 425 and 429, a URL or parameter refused, a file that cannot be written or does
    /// not match its checksum). The other half of the downloads' one rule: ``DownloadRetryRule`` retries transient
    /// failures at once from the byte reached, and a queued job (`DownloadWorker`) goes back to the queue on any
    /// failure that is not permanent.
    package var isPermanentForDownloads: Bool {
        switch code {
        case .invalidURL, .invalidParameter, .fileAccess, .destinationExists, .integrity, .invalidState: return true
        case .httpStatus:
            return (400..<500).contains(status?.code ?? 0) && ![408, 425, 429].contains(status?.code ?? 0)
        default: return false
        }
    }
}
