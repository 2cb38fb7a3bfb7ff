import Foundation

/// Runs saved inputs through a target: the corpus and the crash regressions, in the ordinary build.
enum Replay {
    /// Exit status: 0 when every input keeps the invariants, 1 at the first that does not, 2 for a bad path.
    static func run(_ target: FuzzTarget, paths: [String]) -> Int32 {
        var files: [URL] = []
        for path in paths {
            let url = URL(filePath: path)
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            if exists, isDirectory.boolValue,
                let children = try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            {
                files += children.sorted { $0.lastPathComponent < $1.lastPathComponent }
            } else if exists, !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: path) {
                files.append(url)
            } else {
                FileHandle.standardError.write(Data("courier-fuzz: cannot read \(path)\n".utf8))
                return 2
            }
        }
        for file in files {
            guard let data = try? Data(contentsOf: file) else { continue }
            do {
                try target.run(FuzzInput(bytes: Array(data)))
            } catch {
                FileHandle.standardError.write(Data("courier-fuzz: \(target.rawValue): \(file.path): \(error)\n".utf8))
                return 1
            }
        }
        print("\(target.rawValue): \(files.count) inputs replayed, every invariant held")
        return 0
    }
}
