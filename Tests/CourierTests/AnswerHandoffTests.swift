import Foundation
import HTTPTypes
import Testing
@testable import Courier

@Suite("Answer handoff")
struct AnswerHandoffTests {
    private static let answer = ResponseBody(status: .ok, headers: [:], data: Data("whole".utf8))

    @Test func theCallerWakesAtTheHeadAndWaitsForAnAnswerThatComesLater() async throws {
        let handoff = AnswerHandoff<String, ResponseBody>()
        let head = await handoff.awaitHead { handoff.headArrived("head") }
        #expect(head == "head")
        let waiting = Task { try await handoff.answer() }
        try await Task.sleep(for: .milliseconds(50))  // the caller is waiting now (nearly always); either order must work
        handoff.finish(.success(Self.answer))
        #expect(try await waiting.value.data == Self.answer.data)
    }

    @Test func anAnswerThatCameFirstIsTakenAtOnce() async throws {
        let handoff = AnswerHandoff<String, ResponseBody>()
        let head = await handoff.awaitHead {
            handoff.headArrived("head")
            handoff.finish(.success(Self.answer))
        }
        #expect(head == "head")
        #expect(try await handoff.answer().data == Self.answer.data)
    }

    @Test func aFailureBeforeTheHeadWakesTheCallerAndIsThrown() async {
        let handoff = AnswerHandoff<String, ResponseBody>()
        let head = await handoff.awaitHead { handoff.finish(.failure(CourierError.cancelled())) }
        #expect(head == nil)
        await #expect(throws: CourierError.self) { try await handoff.answer() }
    }
}
