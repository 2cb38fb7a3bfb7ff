import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Courier

@Suite("Answer handoff")
struct AnswerHandoffTests {
    private static let head = HTTPResponseHead(version: .http1_1, status: .ok)
    private static let answer = CollectedAnswer(body: ByteBuffer(string: "whole"))

    @Test func theCallerWakesAtTheHeadAndWaitsForAnAnswerThatComesLater() async throws {
        let handoff = AnswerHandoff()
        let (head, ended) = await handoff.awaitHead { handoff.headArrived(Self.head) }
        #expect(head == Self.head)
        #expect(ended == nil)
        let waiting = Task { try await handoff.answer() }
        // the caller is waiting now (nearly always); either order must work
        try await Task.sleep(for: .milliseconds(50))
        handoff.finish(.success(Self.answer))
        #expect(try await waiting.value.body == Self.answer.body)
    }

    @Test func anAnswerThatCameFirstIsTakenAtOnce() async throws {
        let handoff = AnswerHandoff()
        let (head, ended) = await handoff.awaitHead {
            handoff.headArrived(Self.head)
            handoff.finish(.success(Self.answer))
        }
        #expect(head == Self.head)
        #expect(try ended?.get().body == Self.answer.body)
    }

    @Test func aFailureBeforeTheHeadWakesTheCallerAndIsThrown() async {
        let handoff = AnswerHandoff()
        let (head, ended) = await handoff.awaitHead { handoff.finish(.failure(CourierError.cancelled())) }
        #expect(head == nil)
        #expect(throws: CourierError.self) { try ended?.get() }
    }
}
