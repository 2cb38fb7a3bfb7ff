/// A random number generator from a seed (SplitMix64), for tests that draw many values: each run draws the same
/// ones, so a failure names values that come back on the next run.
package struct SeededGenerator: RandomNumberGenerator {
    /// The generator's state, advanced by each draw.
    package var state: UInt64

    /// A generator whose state starts at `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next value: SplitMix64's step and mix.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
