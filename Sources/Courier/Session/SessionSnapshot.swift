import HTTPTypes
import Tracing

/// One configuration of a session with what it resolves to, shared by every request sent under it: copying a
/// reference per request is cheaper than copying the whole ``Configuration``, and the process-wide tracer and
/// metrics lookups (a lock and a cast each) happen when the configuration is set, not per request.
final class SessionSnapshot: Sendable {
    let configuration: Configuration
    /// The configured tracer, else the process's when it is not the no-op one.
    let tracer: (any Tracer)?
    let metrics: CourierMetrics?
    /// The debug log every request of this configuration writes to; nil while debug logging is off.
    let debugLog: DebugLog?
    /// The default headers as a request gets them: with `Accept-Encoding` when the session decompresses and the
    /// defaults do not name one, so a request adds no field of its own.
    let defaultFields: HTTPFields
    /// The cookie jar's failure to save, which every request setting a cookie would log.
    let cookieJarWarning = RepeatedWarning()
    init(_ configuration: Configuration) {
        self.configuration = configuration
        self.tracer = RequestTrace.resolve(configuration.tracer)
        self.metrics = CourierMetrics(factory: configuration.metricsFactory)
        self.debugLog = DebugLog(configuration: configuration)
        var fields = configuration.defaultHeaders
        if configuration.decompressesResponses, fields[.acceptEncoding] == nil {
            fields[.acceptEncoding] = Self.acceptedEncodings
        }
        fields.joinCookieFields()
        self.defaultFields = fields
    }

    /// The codings Courier decodes, as it asks for them.
    static let acceptedEncodings = "gzip, deflate"
}
