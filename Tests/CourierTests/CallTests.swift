import Foundation
import HTTPTypes
import Testing

@testable import Courier

extension Call {
    /// A call for a GET of `path` on a made-up host, with the default configuration's settings.
    static func forTesting(_ path: String = "/") -> Call {
        Call(
            Request<Data>.get(path).erased,
            prepared: PreparedRequest(method: .get, url: URL(string: "https://h\(path)")!),
            start: .now,
            limits: ResponseLimits(),
            cookies: [.send, .store],
            log: nil
        )
    }
}

/// What an exchange waits on, for the tests: counts its cancels.
private final class Waited: RequestCancellable {
    let cancels = Locked(0)
    func cancel() { cancels.withLock { $0 += 1 } }
}

@Suite("Call")
struct CallTests {
    private static let answer = ResponseBody(status: .ok, headers: [:], data: Data("whole".utf8))

    @Test func theCallerSleepsUntilTheExchangeEndsAndTakesItsAnswer() async throws {
        let call = Call.forTesting()
        let finisher = Task {
            try await Task.sleep(for: .milliseconds(50))  // the caller is waiting now (nearly always)
            call.finish(.success(Self.answer), of: Waited())
        }
        let ended = await call.awaitAnswer {}
        #expect(try ended.get().status == .ok)
        #expect(try ended.get().data == Self.answer.data)
        try await finisher.value
    }

    @Test func anAnswerThatEndedAsTheExchangeStartedIsTakenAtOnce() async throws {
        let call = Call.forTesting()
        let ended = await call.awaitAnswer { call.finish(.success(Self.answer), of: Waited()) }
        #expect(try ended.get().data == Self.answer.data)
    }

    @Test func aFailureWakesTheCallerAndIsThrown() async {
        let call = Call.forTesting()
        let ended = await call.awaitAnswer { call.finish(.failure(CourierError.cancelled()), of: Waited()) }
        #expect(throws: CourierError.self) { try ended.get() }
    }

    /// One call makes its exchanges one after another (redirects, retries): each takes its own answer.
    @Test func aSecondExchangeGetsItsOwnAnswer() async throws {
        let call = Call.forTesting()
        for text in ["first", "second"] {
            let answer = ResponseBody(status: .ok, headers: [:], data: Data(text.utf8))
            let ended = await call.awaitAnswer { call.finish(.success(answer), of: Waited()) }
            #expect(try ended.get().data == answer.data)
        }
    }

    /// The exchange's end empties the cancel slot in the same lock round trip, so a later cancel does not reach a
    /// task that has ended; a cancel before the end reaches it once.
    @Test func theEndOfAnExchangeEmptiesTheCancelSlot() async {
        let call = Call.forTesting()
        let ended = Waited()
        call.install(ended)
        _ = await call.awaitAnswer { call.finish(.success(Self.answer), of: ended) }
        call.cancel()
        #expect(ended.cancels.withLock { $0 } == 0)
        let running = Waited()
        call.install(running)  // cancelled already: cancelled at once
        #expect(running.cancels.withLock { $0 } == 1 && call.isCancelled)
    }
}
