extension Session {
    /// Sends requests whose answers have different types at once, and returns their responses in order, each with
    /// its own type (HLNetworking and RBEFireworks mix APIs in one batch): no mapping to a common type.
    ///
    /// ```swift
    /// let (user, feed) = try await session.batch(Request<User>.get("/users/1"), Request<Data>.get("/feed"))
    /// print(user.value, feed.body.count)
    /// ```
    ///
    /// All run at once; the first to fail cancels the others and is thrown as ``CourierError/Code/batchFailed``,
    /// with ``CourierError/step`` its position and ``CourierError/underlying`` its error.
    public nonisolated func batch<each Value: Sendable>(
        _ requests: repeat Request<each Value>
    ) async throws -> (repeat Response<each Value>) {
        var erased: [ErasedRequest] = []
        for request in repeat each requests { erased.append(request.erased) }
        let executor = try executor()
        let responses = try await withThrowingTaskGroup(of: (Int, ErasedResponse).self) { group in
            for (index, request) in erased.enumerated() {
                group.addTask {
                    do { return (index, try await executor.run(request)) } catch {
                        throw CourierError.failedStep(
                            .batchFailed,
                            index: index,
                            name: nil,
                            error: RequestExecutor.normalize(error)
                        )
                    }
                }
            }
            var responses = [ErasedResponse?](repeating: nil, count: erased.count)
            for try await (index, response) in group { responses[index] = response }
            return responses
        }
        // Every position was filled (the group threw otherwise), in the order of the requests.
        var answers = responses.compactMap { $0 }[...]
        func next<T: Sendable>(_ request: Request<T>) -> Response<T> {
            guard let answer = answers.popFirst() else { preconditionFailure("a batch member without an answer") }
            return answer.unerased(as: T.self)
        }
        return (repeat next(each requests))
    }
}
