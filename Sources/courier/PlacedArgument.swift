import ArgumentParser
import Courier

/// An option's value with its place on the command line, for options whose values combine in the order they were
/// typed whichever option gave each (curl joins `-d`, `--data-binary`, `--data-raw` and `--data-urlencode` with
/// `&` in that order).
///
/// swift-argument-parser makes each value as it reads the line from left to right, so a counter read then numbers
/// them in order: one process parses one line.
struct PlacedArgument: ExpressibleByArgument {
    private static let counter = Locked(0)

    /// The value as typed.
    let text: String
    /// Its place among the placed values of this line, from 0.
    let place: Int

    init(argument: String) {
        text = argument
        place = Self.counter.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}

extension PlacedArgument: CustomStringConvertible {
    /// The value as typed: two parses of one line number their values apart, and compare equal.
    var description: String { text }
}
