// swift-tools-version:6.1
import Foundation
import PackageDescription

/// Courier's allocation gate: malloc and retain counts of the calls a server makes most, measured with
/// ordo-one/benchmark and checked against `Thresholds/` by `.ci/run`. A package of its own, as swift-nio's and
/// Hummingbird's benchmarks are, so the benchmark tool and its interposers stay out of Courier's graph.
///
/// Courier is the package two folders up. A path dependency is known by its folder's name, which is whatever the
/// clone was called (`main`, `ci`, `courier`), so the name is worked out here rather than spelled.
let courierFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let courier = courierFolder.standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "CourierAllocations",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The malloc interposer counts allocations. The trait list leaves out the Swift 6.3 runtime interposer, a
        // package not available here; CRetainCounter counts retains instead.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CourierAllocations",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Courier", package: courier),
                .product(name: "CourierTesting", package: courier),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "CRetainCounter",
            ],
            path: "Benchmarks/CourierAllocations",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Retains, releases and object allocations, counted by the benchmark binary itself (see its source).
        .target(name: "CRetainCounter"),
    ]
)
