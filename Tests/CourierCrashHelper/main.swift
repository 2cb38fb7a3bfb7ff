@_spi(CrashTesting) import Courier
import Foundation

// courier-crash-helper URL DESTINATION SHA256 PAUSE_MS
//
// Downloads URL to DESTINATION, checked against SHA256, and sleeps PAUSE_MS in the window between the move into
// place and the removal of the resume record, through the download manager's crash-testing seam: the crash
// campaign kills it there. Not a tool for users; the tests run it as a child process.
let arguments = CommandLine.arguments
guard arguments.count == 5, let url = URL(string: arguments[1]), let pause = UInt32(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: courier-crash-helper URL DESTINATION SHA256 PAUSE_MS\n".utf8))
    exit(64)
}
var configuration = DownloadManager.Configuration()
configuration.afterMoveIntoPlace = { _ in usleep(pause * 1000) }
do {
    try await withSession(Configuration()) { session in
        let manager = try DownloadManager(session: session, configuration: configuration)
        let download = try await manager.add(
            url,
            to: .file(URL(filePath: arguments[2])),
            options: DownloadOptions(checksum: try .sha256(arguments[3]))
        )
        print("saved \(try await download.completion().path)")
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
