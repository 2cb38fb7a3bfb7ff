import CourierTesting
import Foundation
import Testing

/// `-w`'s connection variables, with curl's meanings, against plain and TLS loopback servers.
@Suite("courier -w: what the connection did", .timeLimit(.minutes(2)))
struct CLIWriteOutConnectionTests {
    private static let format =
        "\\n%{num_connects} %{remote_ip} %{remote_port} %{local_ip} %{local_port} %{time_connect} %{time_appconnect}"
        + " %{time_pretransfer} %{time_starttransfer} %{time_total}\\n"

    /// The last line's words, as numbers where they are.
    private func words(_ stdout: String) -> [String] {
        (stdout.split(separator: "\n").last ?? "").split(separator: " ").map(String.init)
    }

    @Test func aPlainConnection() async throws {
        try await withTestServer { server in
            let run = try await CLI.run(["get", server.url("/redirect/1").absoluteString, "-s", "-w", Self.format])
            let words = words(run.stdout)
            try #require(run.status == 0 && words.count == 10, "\(run.stdout) \(run.stderr)")
            #expect((1...2).contains(Int(words[0]) ?? 0), "one connection per lane the two exchanges reach")
            #expect(words[1] == "127.0.0.1" && words[2] == String(server.port) && words[3] == "127.0.0.1")
            #expect((Int(words[4]) ?? 0) > 0)
            let times = words[5...].map { Double($0) ?? -1 }
            #expect(times[1] == 0, "no TLS: time_appconnect is 0, as curl prints it")
            #expect(times[0] > 0 && times[0] <= times[2], "connected during the call, though perhaps for a redirect")
            #expect(times[2] > 0 && times[2] <= times[3] && times[3] <= times[4], "\(words)")
        }
    }

    @Test func aTLSConnection() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        let directory = try newTemporaryDirectory(prefix: "courier-writeout")
        let caFile = directory.appending(path: "ca.pem").path(percentEncoded: false)
        try Data(authority.certificatePEM.utf8).write(to: URL(filePath: caFile))
        try await withTestServer(tls: .init(identity: leaf)) { server in
            let url = server.url("/bytes/10").absoluteString
            let run = try await CLI.run(["get", url, "-s", "--cacert", caFile, "-w", Self.format])
            let words = words(run.stdout)
            try #require(run.status == 0 && words.count == 10, "\(run.stdout) \(run.stderr)")
            #expect(words[0] == "1" && words[2] == String(server.port))
            let times = words[5...].map { Double($0) ?? -1 }
            #expect(times[0] == 0, "AsyncHTTPClient hands a TLS connection over with its handshake done: no figure")
            #expect(times[1] > 0 && times[1] <= times[2] && times[2] <= times[3] && times[3] <= times[4], "\(words)")
        }
    }
}
