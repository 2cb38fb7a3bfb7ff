import Foundation
import Testing

/// The `courier` binary this build made links only what a client needs: FoundationEssentials, not Foundation with
/// its ICU data, nor FoundationNetworking with libcurl and its tree (issue 57). `ldd` lists the libraries the
/// dynamic loader would map, the ones they need included.
///
/// Built with the `Postgres` trait (as `.ci/run` builds the tests), the CLI has the fleet commands, and postgres-nio
/// imports Foundation: that build may link Foundation and ICU, never FoundationNetworking. `.ci/run` checks the
/// default build's binary too, the one `Scripts/install` makes.
@Suite("The CLI's linked libraries")
struct CLILinkedLibrariesTests {
    @Test func theCLILinksNeitherFoundationNetworkingNorICU() async throws {
        let binary = CLI.executable().path(percentEncoded: false)
        let listed = try await CLI.run([binary], program: "/usr/bin/ldd")
        #expect(listed.status == 0, "\(listed.stderr)")
        let libraries = listed.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map { String($0.trimmingCharacters(in: .whitespaces)) }
        }
        #expect(libraries.contains { $0.hasPrefix("libFoundationEssentials") }, "\(libraries)")
        #if Postgres
        let refused = ["libFoundationNetworking", "libcurl"]
        let limit = 22  // Foundation, FoundationInternationalization and ICU beside the default build's 19
        #else
        let refused = [
            "libFoundation.so", "libFoundationNetworking", "libFoundationInternationalization", "ICU", "libicu",
            "libcurl",
        ]
        let limit = 20
        #endif
        for library in libraries {
            #expect(!refused.contains { library.contains($0) }, "courier links \(library)")
        }
        // A debug build adds libswiftSwiftOnoneSupport to the release build's list; the vDSO is no file.
        let files = libraries.filter { !$0.hasPrefix("linux-vdso") }
        #expect(files.count <= limit, "\(files.count) libraries: \(files)")
    }
}
