import ArgumentParser
import Courier
import Foundation

/// Where the CLI writes, and how it turns failures into one line and an exit code.
enum Output {
    static func stdout(_ data: Data) { FileHandle.standardOutput.write(data) }

    /// A response body on stdout; on a terminal, followed by a newline when it lacks one, so the status line on
    /// stderr starts a line of its own (curl's `-w` habit). Into a pipe or a file it goes byte for byte.
    static func body(_ data: Data) {
        stdout(data)
        if let last = data.last, last != UInt8(ascii: "\n"), isatty(STDOUT_FILENO) != 0 { stdout(Data("\n".utf8)) }
    }

    static func stdout(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func stderr(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

    /// Writes to a temporary file beside `path` and renames it into place, so `path` is never half-written.
    static func writeAtomically(_ data: Data, to path: String) throws {
        do { try data.write(to: URL(filePath: path), options: .atomic) } catch {
            throw CourierError(code: .fileAccess, message: "cannot write \"\(path)\": \(error.localizedDescription)")
        }
    }

    /// The UTF-8 text of `path` (`-` reads standard input).
    static func readText(_ path: String) throws -> String {
        let data: Data
        do {
            data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(filePath: path))
        } catch {
            throw CourierError(code: .fileAccess, message: "cannot read \"\(path)\": \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CourierError(code: .fileAccess, message: "\"\(path)\" is not UTF-8 text")
        }
        return text
    }

    /// Runs `body`; any error but an exit code becomes one line on stderr (a ``CourierError`` prints as
    /// `code: message`) and exit code 1.
    static func exitOnFailure(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            stderr("courier: \(error)")
            throw ExitCode(1)
        }
    }
}
