import Foundation
import HTTPTypes
import Tracing

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

    /// Runs `body` with the span's context as the task's current one.
    nonisolated(nonsending) func run<T>(_ body: nonisolated(nonsending) () async throws -> T) async rethrows -> T {
        guard let span else { return try await body() }
        return try await ServiceContext.withValue(span.context) { try await body() }
    }

    /// Records what the request became once prepared (credentials redacted from the URL).
    func started(_ request: PreparedRequest) {
        guard let span else { return }
        span.attributes[TelemetryNames.Attribute.urlFull] = Redactor.standard.redact(url: request.url)
        guard let host = request.url.host(percentEncoded: false) else { return }
        span.attributes[TelemetryNames.Attribute.serverAddress] = host
        span.attributes[TelemetryNames.Attribute.serverPort] =
            request.url.port ?? (request.url.scheme == "https" ? 443 : 80)
    }

    /// Records the outcome and ends the span.
    func finished(status: HTTPResponse.Status?, error: CourierError?) {
        guard let span else { return }
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

/// Writes a tracer's propagation fields (W3C `traceparent` and `tracestate` with OpenTelemetry) into request headers.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

extension PreparedRequest {
    /// Adds the current trace context to the request's headers, as `tracer` (resolved by
    /// ``RequestTrace/resolve(_:)``) spells it.
    mutating func addTraceContext(tracer: any Tracer) {
        guard let context = ServiceContext.current else { return }
        tracer.inject(context, into: &headers, using: HTTPFieldsInjector())
    }
}
