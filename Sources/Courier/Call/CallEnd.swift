import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a call ended, as everyone who watches calls hears it: what the call answered or the error it failed with,
/// the status of its head (if one came), the connection that carried it, and the bytes it sent and received.
///
/// Every kind of call (a send, a stream or a sink, a WebSocket) ends through ``RequestExecutor/report(_:trace:)``
/// with one of these, so they are told in one order.
struct CallEnd: Sendable {
    /// The request as its caller wrote it, which names the accessories.
    var request: ErasedRequest
    /// The request as prepared, which the accessories and the metrics hear of.
    var prepared: PreparedRequest
    /// When the call started, for the metrics' duration.
    var start: Tick
    /// What the accessories and the monitors hear: the answer (its body empty when the caller read it) or the error.
    var outcome: Result<ResponseBody, CourierError>
    /// The status of the head the call ended with, if one came.
    var status: HTTPResponse.Status?
    /// The connection that carried the answer, for the span.
    var connection: ConnectionUse?
    /// The request body's size, when known.
    var sentBytes: Int64?
    /// The answer body's size, when the call read it.
    var receivedBytes: Int?
    /// What the monitors hear, when it is theirs to hear here: a send's monitors heard its end where the answer
    /// was delivered, so its end has none.
    var monitors: MonitorsEnd?

    /// The monitors' part of a call's end: the request it sent last, its timing, its attempts, and the messages of
    /// a WebSocket.
    struct MonitorsEnd: Sendable {
        /// The call, which names the monitors and the redirects it followed.
        var call: Call
        var sent: PreparedRequest
        var timing: Timing
        var attempts: Int
        var transcript: WebSocketTranscript?
    }
}

extension RequestExecutor {
    /// Tells everyone who watches a call that it ended, in one order for every kind of call: the monitors'
    /// ``EventMonitor/didComplete(_:result:timing:)`` and ``EventMonitor/didFinish(with:)`` (a send's heard it
    /// where its answer was delivered, just before), the accessories' ``RequestAccessory/requestWillStop(_:outcome:)``,
    /// the span, the metrics, then the accessories' ``RequestAccessory/requestDidStop(_:outcome:)``.
    func report(_ end: CallEnd, trace: RequestTrace?) {
        if let monitors = end.monitors {
            tellMonitors(
                monitors.call,
                sent: monitors.sent,
                result: end.outcome,
                timing: monitors.timing,
                attempts: monitors.attempts,
                transcript: monitors.transcript
            )
        }
        let accessories = end.request.accessories
        for accessory in accessories { accessory.requestWillStop(end.prepared, outcome: end.outcome) }
        let failure: CourierError? = if case .failure(let error) = end.outcome { error } else { nil }
        trace?.finished(status: end.status, error: failure, connection: end.connection)
        record(
            status: end.status,
            failure: failure,
            method: end.prepared.method,
            url: end.prepared.url,
            start: end.start,
            sentBytes: end.sentBytes,
            receivedBytes: end.receivedBytes
        )
        for accessory in accessories { accessory.requestDidStop(end.prepared, outcome: end.outcome) }
    }

    /// Tells the span and the metrics that a call failed before it was prepared: no accessory or monitor heard
    /// it start, so none hears it end.
    func reportUnprepared(_ failure: CourierError, method: HTTPRequest.Method, start: Tick, trace: RequestTrace?) {
        trace?.finished(status: failure.status, error: failure)
        record(status: failure.status, failure: failure, method: method, url: nil, start: start, sentBytes: nil)
    }
}
