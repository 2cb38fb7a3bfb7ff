import Foundation

extension FileManager {
    /// Whether `path` names an existing directory (following a symbolic link).
    func isDirectory(atPath path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
