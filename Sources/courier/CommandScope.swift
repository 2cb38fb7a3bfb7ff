import ServiceLifecycle

/// Services a short command needs in the background while it runs (the connection pool of a database named by
/// `--cache-store postgres://…`), run as child tasks of the command and cancelled when it ends. Code deep inside a
/// command starts one with ``start(_:)``; ``Output/exitOnFailure(cancelsOnSignal:_:)`` gives every command a scope.
enum CommandScope {
    @TaskLocal private static var starter: AsyncStream<any Service>.Continuation?

    /// Runs `body`, and every service it ``start(_:)``s beside it until it returns or throws.
    static func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let (services, starter) = AsyncStream.makeStream(of: (any Service).self)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                defer { starter.finish() }
                try await $starter.withValue(starter) { try await body() }
                return true
            }
            for await service in services {
                group.addTask {
                    try? await service.run()
                    return false
                }
            }
            // The body has ended (its end finishes the stream): wait for it, then stop the services.
            while let isBody = try await group.next() {
                if isBody { break }
            }
            group.cancelAll()
        }
    }

    /// Runs `service` until the command ends; outside ``run(_:)`` it is not run at all.
    static func start(_ service: any Service) {
        starter?.yield(service)
    }
}
