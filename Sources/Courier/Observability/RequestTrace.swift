import HTTPTypes
import Synchronization
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The client span of one request (OpenTelemetry's HTTP client conventions), and the context the request's
/// attempts run in, so ``HTTPFieldsInjector`` can put it into their headers.
struct RequestTrace: Sendable {
    /// `nil` when no tracer is bootstrapped: then nothing is recorded and no context is set up.
    private let span: (any Span)?

    /// The tracer requests report to: the configured one, else the process's; `nil` when that is the no-op
    /// tracer. A ``SessionSnapshot`` looks it up once per configuration, since the process-wide lookup takes a
    /// lock and casts.
    static func resolve(_ configured: (any Tracer)?) -> (any Tracer)? {
        let tracer = configured ?? InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    /// Starts a span named after the method, as a child of the caller's context when there is one; `tracer` is
    /// what ``resolve(_:)`` returned.
    init(tracer: (any Tracer)?, method: HTTPRequest.Method) {
        guard let tracer else {
            span = nil
            return
        }
        let span = tracer.startSpan(method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.attributes[TelemetryNames.Attribute.requestMethod] = method.rawValue
        self.span = span
    }

    /// Runs `body` with the span's context as the task's current one, carrying a count of the call's sends, so each
    /// send after the first gets a span of its own (``ResendSpan``).
    nonisolated(nonsending) func run<T>(_ body: nonisolated(nonsending) () async throws -> T) async rethrows -> T {
        guard let span else { return try await body() }
        var context = span.context
        context[SendCount.self] = SendCount()
        return try await ServiceContext.withValue(context) { try await body() }
    }

    /// Records what the request became once prepared (credentials redacted from the URL).
    func started(_ request: PreparedRequest) {
        guard let span else { return }
        Self.describe(span, url: request.url)
    }

    /// Records the outcome (and the peer the final request reached, when the transport said) and ends the span.
    func finished(status: HTTPResponse.Status?, error: CourierError?, connection: ConnectionUse? = nil) {
        guard let span else { return }
        Self.finish(span, status: status, error: error, connection: connection)
    }

    /// Puts the URL's attributes on `span`.
    static func describe(_ span: any Span, url: URL) {
        span.attributes[TelemetryNames.Attribute.urlFull] = Redactor.standard.redact(url: url)
        guard let host = url.host(percentEncoded: false) else { return }
        span.attributes[TelemetryNames.Attribute.serverAddress] = host
        span.attributes[TelemetryNames.Attribute.serverPort] = url.effectivePort
    }

    /// Records an outcome on `span`, and the peer `connection` reached (`network.peer.address` and
    /// `network.peer.port`), and ends it.
    static func finish(
        _ span: any Span,
        status: HTTPResponse.Status?,
        error: CourierError?,
        connection: ConnectionUse? = nil
    ) {
        if let peer = connection?.record.remote {
            span.attributes[TelemetryNames.Attribute.networkPeerAddress] = peer.address
            span.attributes[TelemetryNames.Attribute.networkPeerPort] = peer.port
        }
        if let status { span.attributes[TelemetryNames.Attribute.responseStatusCode] = status.code }
        if let errorType = TelemetryNames.errorType(status: status, failure: error) {
            // A 4xx or 5xx is an error of a client span, as OpenTelemetry says, even when no validator refused it.
            span.attributes[TelemetryNames.Attribute.errorType] = errorType
            if let error { span.recordError(error) }
            span.setStatus(SpanStatus(code: .error, message: error?.message))
        }
        span.end()
    }
}

/// How many times a call has gone out on the wire: in the call span's context (``RequestTrace/run(_:)``), so each
/// send of the call, whichever path makes it, knows whether it is the first.
final class SendCount: ServiceContextKey, Sendable {
    typealias Value = SendCount
    private let sends = Atomic<Int>(0)

    /// The number of sends before this one, counting this one.
    func next() -> Int { sends.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// The span of one send of a call after its first (a retry, a redirect, a send with a refreshed credential, a
/// resend on a fresh connection): a child of the call's span with OpenTelemetry's `http.request.resend_count`,
/// as the conventions ask of every physical request after the first. The first send is the call's span itself.
enum ResendSpan {
    /// A span for `request` when the current call has sent before, else `nil` (or with no call span).
    static func start(_ tracer: any Tracer, for request: PreparedRequest) -> (any Span)? {
        guard let context = ServiceContext.current, let count = context[SendCount.self] else { return nil }
        let resends = count.next()
        guard resends > 0 else { return nil }
        let span = tracer.startSpan(request.method.rawValue, context: context, ofKind: .client)
        span.attributes[TelemetryNames.Attribute.requestMethod] = request.method.rawValue
        span.attributes[TelemetryNames.Attribute.resendCount] = resends
        RequestTrace.describe(span, url: request.url)
        return span
    }
}

/// Writes a tracer's propagation fields (W3C `traceparent` and `tracestate` with OpenTelemetry) into request headers.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

extension PreparedRequest {
    /// Adds a trace context to the request's headers, as `tracer` (resolved by ``RequestTrace/resolve(_:)``) spells
    /// it: `span`'s, else the current one.
    mutating func addTraceContext(tracer: any Tracer, span: (any Span)? = nil) {
        guard let context = span?.context ?? ServiceContext.current else { return }
        tracer.inject(context, into: &headers, using: HTTPFieldsInjector())
    }
}

extension RequestTrace? {
    /// ``RequestTrace/run(_:)`` when there is a trace; else `body` as it is.
    nonisolated(nonsending) func run<T>(_ body: nonisolated(nonsending) () async throws -> T) async rethrows -> T {
        switch self {
        case .some(let trace): try await trace.run(body)
        case .none: try await body()
        }
    }
}
