#if FUZZING
import CLibFuzzer
import Courier
import Foundation

/// Hands the process to libFuzzer with the chosen target. libFuzzer calls a C function and cannot pass it
/// context, so the target waits in `selected`.
enum LibFuzzerDriver {
    fileprivate static let selected = Locked<FuzzTarget?>(nil)

    /// libFuzzer's exit status. `arguments[1]` (the target's name) is removed; the rest are libFuzzer's.
    static func run(_ target: FuzzTarget) -> Int32 {
        selected.withLock { $0 = target }
        FileHandle.standardError.write(Data("courier-fuzz: fuzzing \(target.rawValue)\n".utf8))
        let original = CommandLine.unsafeArgv
        var kept: [UnsafeMutablePointer<CChar>?] = [original[0]]
        for index in 2..<Int(CommandLine.argc) { kept.append(original[index]) }
        kept.append(nil)
        var argc = Int32(kept.count - 1)
        let argvStorage = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: kept.count)
        argvStorage.initialize(from: kept, count: kept.count)
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argvStorage
        return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
    }
}

/// libFuzzer's entry point: one input through the selected target; a broken invariant crashes, so libFuzzer
/// saves the input. (The symbol must exist for the linker even though `LLVMFuzzerRunDriver` is what calls it.)
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = LibFuzzerDriver.selected.withLock({ $0 }) else { return 0 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try target.run(FuzzInput(bytes: bytes))
    } catch {
        fatalError("\(target.rawValue): \(error)")
    }
    return 0
}
#endif
