import Foundation
import Testing

/// The fuzz corpus and every input fuzzing ever broke Courier with, replayed on each test run by the ordinary
/// build of `courier-fuzz` (see `Fuzz/run` for the fuzzing itself).
@Suite("Fuzz corpus and regressions replay clean", .timeLimit(.minutes(1)))
struct FuzzCorpusTests {
    static let fuzzFolder = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Fuzz")

    @Test(arguments: [
        "cache-entry", "resume-record", "file-name", "header", "multipart", "url", "content-range", "redirect",
        "response-head",
    ])
    func everySavedInputKeepsTheInvariants(target: String) async throws {
        var folders = [Self.fuzzFolder.appending(path: "corpus/\(target)").path()]
        let regressions = Self.fuzzFolder.appending(path: "regressions/\(target)").path()
        if FileManager.default.fileExists(atPath: regressions) { folders.append(regressions) }
        let outcome = try await CLI.run([target] + folders, program: "courier-fuzz")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("every invariant held"))
    }
}
