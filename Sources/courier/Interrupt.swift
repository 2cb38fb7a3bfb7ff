import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM handled by the process instead of ending it.
enum Interrupt {
    /// Calls `handler` on SIGINT and SIGTERM instead of dying; returns the signal sources, to cancel when done.
    static func handling(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: .global()) }
        for source in sources {
            source.setEventHandler(handler: handler)
            source.resume()
        }
        return sources
    }
}
