public import HTTPTypes

/// Changes a request's parameters before they are encoded into its query or body: add a timestamp or a signature
/// computed over them, drop empty values, rename keys for an old API (HLNetworking's parameter processing,
/// YTKNetwork's argument filters).
///
/// Parameter adapters run in order on the session's default parameters merged with the request's own, before
/// the request adapters (``RequestAdapter``), which see the parameters already encoded. Raw requests
/// (``Request/isRaw``) skip them.
///
/// ```swift
/// let config = Configuration {
///     $0.parameterAdapters = [ClosureParameterAdapter { parameters, _, _ in
///         parameters.filter { $0.value != .string("") }              // no empty values on the wire
///     }]
/// }
/// ```
public protocol ParameterAdapter: Sendable {
    /// Returns the parameters to encode for a request with `method` and `path` (as the caller gave it: relative
    /// or absolute), or throws to fail the request before anything is sent.
    func adapt(_ parameters: Parameters, method: HTTPRequest.Method, path: String) throws -> Parameters
}

/// A parameter adapter made from a closure.
public struct ClosureParameterAdapter: ParameterAdapter {
    private let body: @Sendable (Parameters, HTTPRequest.Method, String) throws -> Parameters

    /// Creates an adapter that runs `body` with the parameters, the method and the path.
    public init(_ body: @escaping @Sendable (Parameters, HTTPRequest.Method, String) throws -> Parameters) {
        self.body = body
    }

    /// Returns the adapted parameters.
    public func adapt(_ parameters: Parameters, method: HTTPRequest.Method, path: String) throws -> Parameters {
        try body(parameters, method, path)
    }
}
