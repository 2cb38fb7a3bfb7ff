import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a call ends: its response built and timed, its failure made the caller's, and both told to the monitors, the log
/// and the metrics.
extension RequestExecutor {
    /// The response carrying `value`, decoded from `body`, the answer `call` ended with after `attempts` attempts:
    /// timed, and told to the monitors.
    func makeResponse(
        _ value: DecodedValue,
        _ body: ResponseBody,
        cacheInfo: CacheInfo,
        call: Call,
        attempts: Int
    ) -> ErasedResponse {
        // `sent` is set on every answer from the network
        let sent = body.sent ?? call.prepared
        let timing = Timing(startTick: call.start, firstByteTick: body.firstByte, endTick: .now, use: body.connection)
        tellMonitors(call, sent: sent, result: .success(body), timing: timing, attempts: attempts)
        return Response(
            value: value,
            storage: ResponseStorage(
                request: sent,
                status: body.status,
                fields: body.fields,
                body: body.data,
                cacheInfo: cacheInfo,
                timing: timing
            )
        )
    }

    /// `error` as a ``CourierError``; a cancellation once the call's deadline has passed is the pool's doing at that
    /// deadline, so it becomes the call's total timeout.
    func timedOut(_ error: any Error, _ call: Call) -> CourierError {
        let failure = Self.normalize(error)
        guard failure.code == .cancelled, Tick.now >= call.deadline else { return failure }
        return .timeout(.total, after: call.timeouts.total, url: configuration.redactor.redact(url: call.prepared.url))
    }

    /// Logs the failure and tells the monitors the call ended with it after `attempts` attempts.
    func complete(_ call: Call, _ failure: CourierError, attempts: Int) {
        let timing = Timing(startTick: call.start, firstByteTick: nil, endTick: .now)
        call.log?.failure(call.prepared, failure, duration: timing.total)
        tellMonitors(
            call,
            sent: call.lastSent(onAttempt: attempts),
            result: .failure(failure),
            timing: timing,
            attempts: attempts
        )
    }

    /// Tells every monitor `call` ended: ``EventMonitor/didComplete(_:result:timing:)``, then the ``DebugMessage``
    /// in ``EventMonitor/didFinish(with:)``, with the redirects it followed.
    func tellMonitors(
        _ call: Call,
        sent: PreparedRequest,
        result: Result<ResponseBody, CourierError>,
        timing: Timing,
        attempts: Int,
        transcript: WebSocketTranscript? = nil
    ) {
        guard !call.monitors.isEmpty else { return }
        let messages = transcript?.records
        var message = DebugMessage(
            originalRequest: call.prepared,
            currentRequest: sent,
            response: nil,
            error: nil,
            timing: timing,
            attempts: attempts,
            redirects: call.redirects,
            webSocketMessages: messages?.kept ?? [],
            webSocketMessagesLeftOut: messages?.leftOut ?? 0
        )
        switch result {
        case .success(let body): message.response = body
        case .failure(let error): message.error = error
        }
        for monitor in call.monitors {
            monitor.didComplete(sent, result: result, timing: timing)
            monitor.didFinish(with: message)
        }
    }

    /// Records a finished call in the metrics: its duration from `start`, the status of its head (if one came)
    /// and its failure (if it failed), and its body sizes.
    func record(
        status: HTTPResponse.Status?,
        failure: CourierError?,
        method: HTTPRequest.Method,
        url: URL?,
        start: Tick,
        sentBytes: Int64?,
        receivedBytes: Int? = nil
    ) {
        metrics?.request(
            method: method,
            url: url,
            status: status,
            failure: failure,
            duration: start.duration(to: .now),
            sentBytes: sentBytes,
            receivedBytes: receivedBytes
        )
    }

    /// `error` as the caller gets it: a ``CourierError`` with the configured message for users.
    func userFacing(_ error: any Error) -> CourierError {
        var failure = Self.normalize(error)
        failure.userMessage = failure.userMessage ?? configuration.userMessages.message(for: failure)
        return failure
    }
}
