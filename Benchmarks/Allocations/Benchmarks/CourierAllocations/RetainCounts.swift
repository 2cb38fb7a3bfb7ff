import Benchmark
import CRetainCounter

/// Retains, releases and object allocations of the benchmark binary's code, from `CRetainCounter`: the gate's
/// retain counts, reported as custom metrics (`retains`, `releases`, `objects`) beside the interposer's mallocs.
struct RetainCounts {
    var retains: Int
    var releases: Int
    var objects: Int

    /// The three metrics, where they are counted (x86_64 Linux); none elsewhere.
    static let metrics: [BenchmarkMetric] =
        courier_retain_counts_supported() ? [.custom("retains"), .custom("releases"), .custom("objects")] : []

    /// The counts so far, from every thread.
    static var now: Self {
        let counts = courier_retain_counts_now()
        return Self(retains: Int(counts.retains), releases: Int(counts.releases), objects: Int(counts.objects))
    }

    /// Reports what happened between `before` and these counts as one sample of `benchmark`.
    func record(since before: Self, in benchmark: Benchmark) {
        guard !Self.metrics.isEmpty else { return }
        benchmark.measurement(.custom("retains"), retains - before.retains)
        benchmark.measurement(.custom("releases"), releases - before.releases)
        benchmark.measurement(.custom("objects"), objects - before.objects)
    }
}
