import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--retries` and redirects for `courier upload`. The library's ``Session/upload(_:)`` streams the body to count
/// its bytes, so it never sends a body twice; the command's bodies are files and forms, which it can read again
/// from the start. So the command sends the whole upload again itself, asking the session's own rules: the
/// ``RetryPolicy`` (which failures and statuses are transient, the delays) and the redirect rule (which statuses
/// keep the method, how many hops). A redirect to another origin is not followed, since the session would add the
/// credentials given with `-u` or `-H` to the new request.
struct UploadResend {
    let retryPolicy: RetryPolicy?
    let redirects: RedirectPolicy
    let reporter: RetryReporter?

    /// Sends `request` with `upload` until an answer is final.
    func send(
        _ request: Request<Data>,
        _ upload: (Request<Data>) async throws -> Response<Data>
    ) async throws -> Response<Data> {
        var request = request
        guard var url = URL(string: request.path) else { return try await upload(request) }
        var hops = RedirectState(policy: redirects, initial: request.method, url: url)
        var attempt = 1
        while true {
            let outcome: Result<Response<Data>, CourierError>
            do { outcome = .success(try await upload(request)) } catch let error as CourierError {
                outcome = .failure(error)
            }
            if case .success(let response) = outcome,
                case .follow(let method, let next, let dropsBody, false) = try hops.next(
                    method: request.method,
                    url: url,
                    status: response.status,
                    location: response.headers[.location],
                    bodyIsReplayable: true
                )
            {
                request.method = method
                request.path = next.absoluteString
                if dropsBody { request.body = .empty }
                url = next
                continue
            }
            let failure: CourierError? =
                switch outcome {
                case .failure(let error): error
                case .success(let response) where response.status.code >= 400:
                    CourierError.httpStatus(response.status, bodyPreview: nil)
                case .success: nil
                }
            if let failure, let retryPolicy {
                // The request as the rule sees it: its body can be sent again (the command reads it afresh).
                let sent = PreparedRequest(method: request.method, url: url, body: .bytes(Data()))
                if case .retry(let delay) = retryPolicy.decide(attempt: attempt, request: sent, error: failure) {
                    reporter?.willRetry(sent, attempt: attempt, delay: delay, error: failure)
                    try await Task.sleep(for: delay)
                    attempt += 1
                    continue
                }
            }
            return try outcome.get()
        }
    }
}
