import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers that do not come from the network (an interceptor's, the cache's), and what every answer goes through: the
/// interceptors and the validators.
extension RequestExecutor {
    /// The first answer an interceptor gives `prepared` without the network, if one does.
    func answerWithoutNetwork(
        _ request: ErasedRequest,
        _ prepared: PreparedRequest
    ) async throws -> ResponseBody? {
        for interceptor in configuration.responseInterceptors + request.interceptors {
            if let answer = try await interceptor.answer(prepared) { return answer }
        }
        return nil
    }

    /// `body` after every interceptor of `request`, in order: the session's, then its own. What the session noted
    /// on `body` (the request it answered, when its head came) stays on the result: it answers the same request.
    func intercepted(
        _ body: ResponseBody,
        _ request: ErasedRequest,
        _ sent: PreparedRequest
    ) async throws -> ResponseBody {
        var result = body
        for interceptor in configuration.responseInterceptors + request.interceptors {
            result = try await interceptor.intercept(result, for: sent)
        }
        (result.sent, result.firstByte, result.connection) = (body.sent, body.firstByte, body.connection)
        return result
    }

    /// A response built from an answer that did not come through the pool (the cache's, or an interceptor's):
    /// intercepted, validated and decoded like one from the network.
    func respond(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        body: ResponseBody,
        info: CacheInfo,
        start: Tick
    ) async throws -> ErasedResponse {
        var body = body
        if request.hasInterceptors(under: configuration) { body = try await intercepted(body, request, prepared) }
        try validate(body, for: prepared, extra: request.validators, usesSession: request.usesSessionValidators)
        let value = try request.decode(body)
        let now = Tick.now
        return Response(
            value: value,
            request: prepared,
            status: body.status,
            headers: body.headers,
            body: body.data,
            cacheInfo: info,
            timing: Timing(startTick: start, firstByteTick: now, endTick: now)
        )
    }

    func validate(
        _ body: ResponseBody,
        for request: PreparedRequest,
        extra: [any ResponseValidator],
        usesSession: Bool
    ) throws {
        for validator in usesSession ? configuration.validators : [] {
            try Self.apply(validator, to: body, for: request)
        }
        for validator in extra {
            try Self.apply(validator, to: body, for: request)
        }
    }

    /// Throws when `validator` rejects or ignores `body`.
    static func apply(
        _ validator: any ResponseValidator,
        to body: ResponseBody,
        for request: PreparedRequest
    ) throws {
        switch validator.validate(body, for: request) {
        case .accept: return
        case .ignore: throw CourierError(code: .ignored, message: "a validator ignored the response")
        case .reject(let error):
            var failure =
                (error as? CourierError)
                ?? CourierError(code: .validation, message: "the response was rejected: \(error)", underlying: error)
            failure.retryAfterValue = body.value(of: .retryAfter)
            if failure.status == nil { failure.status = body.status }
            throw failure
        }
    }
}
