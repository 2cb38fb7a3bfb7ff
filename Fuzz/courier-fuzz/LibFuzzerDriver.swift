#if FUZZING
import CLibFuzzer
import Synchronization

/// Hands the process to libFuzzer with the chosen target. libFuzzer's callback is a C function pointer and
/// cannot capture, so the target waits in `selected`.
enum LibFuzzerDriver {
    private static let selected = Mutex<FuzzTarget?>(nil)

    /// libFuzzer's exit status. `arguments[1]` (the target's name) is removed; the rest are libFuzzer's.
    static func run(_ target: FuzzTarget) -> Int32 {
        selected.withLock { $0 = target }
        let original = CommandLine.unsafeArgv
        var kept: [UnsafeMutablePointer<CChar>?] = [original[0]]
        for index in 2..<Int(CommandLine.argc) { kept.append(original[index]) }
        kept.append(nil)
        var argc = Int32(kept.count - 1)
        let argvStorage = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: kept.count)
        argvStorage.initialize(from: kept, count: kept.count)
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argvStorage
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            guard let target = LibFuzzerDriver.selected.withLock({ $0 }) else { return 0 }
            let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
            do {
                try target.run(FuzzInput(bytes: bytes))
            } catch {
                fatalError("\(target.rawValue): \(error)")  // libFuzzer saves the input as a crash
            }
            return 0
        }
    }
}
#endif
