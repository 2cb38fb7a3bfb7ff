#if os(Linux)
import CCourierSystem
#endif

/// The system's random source read 1 KiB at a time: `SystemRandomNumberGenerator` makes one `getrandom` call
/// for every number, which for a WebSocket's masking keys was a system call on the event loop for every frame
/// sent. The bytes are the kernel's own, as unpredictable as RFC 6455 §5.3 asks of a masking key; only the calls
/// are fewer. Where the batch read is not available (or fails), each number comes from
/// `SystemRandomNumberGenerator`. Owned by one connection, on its event loop.
struct BatchedSystemRandom: RandomNumberGenerator {
    private static let batch = 128
    private var numbers: [UInt64] = []
    private var index = 0

    mutating func next() -> UInt64 {
        if index == numbers.count {
            guard refill() else {
                var system = SystemRandomNumberGenerator()
                return system.next()
            }
        }
        defer { index += 1 }
        return numbers[index]
    }

    private mutating func refill() -> Bool {
        #if os(Linux)
        if numbers.isEmpty { numbers = [UInt64](repeating: 0, count: Self.batch) }
        let result = numbers.withUnsafeMutableBytes { courier_random_bytes($0.baseAddress, UInt($0.count)) }
        index = result == 0 ? 0 : numbers.count
        return result == 0
        #else
        return false
        #endif
    }
}
