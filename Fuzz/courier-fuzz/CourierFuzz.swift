import Foundation

/// `courier-fuzz TARGET …`: the fuzz targets of issue 9, one binary for all of them.
///
/// Built normally it replays inputs: `courier-fuzz TARGET PATH…` runs every file (directories one level deep)
/// through the target and exits non-zero on the first broken invariant, which is how the committed corpus and
/// every crash ever found stay regression tests. Built with `COURIER_FUZZ=1` (see `Fuzz/run`), it hands the
/// remaining arguments to libFuzzer: `courier-fuzz TARGET Fuzz/corpus/TARGET -max_total_time=60`.
@main
enum CourierFuzz {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: courier-fuzz TARGET PATH… (targets: \(names))\n".utf8))
            exit(2)
        }
        #if FUZZING
        exit(LibFuzzerDriver.run(target))
        #else
        exit(Replay.run(target, paths: Array(arguments.dropFirst(2))))
        #endif
    }
}
