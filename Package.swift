// swift-tools-version:6.2
import PackageDescription

/// Settings every Courier target shares: Swift 6 mode, `any` spelled out, imports internal unless marked.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// `COURIER_FUZZ=1 swift build --product courier-fuzz` builds the fuzz targets with libFuzzer and AddressSanitizer
/// (see `Fuzz/run`); only Courier and the fuzz binary are instrumented, the dependencies stay as they are.
let fuzzing = Context.environment["COURIER_FUZZ"] == "1"
let fuzzedSettings: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"]), .define("FUZZING")] : []
/// `COURIER_LOCK_COUNTS=1` counts the lock round trips Courier's own locks make (see `Scripts/lock-count`); a
/// normal build has no counter at all.
let lockCounting: [SwiftSetting] =
    Context.environment["COURIER_LOCK_COUNTS"] == "1" ? [.define("COURIER_LOCK_COUNTS")] : []

let package = Package(
    name: "Courier",
    // CI builds and tests on Linux. Apple's systems are expected to build (Linux-only code sits behind
    // `#if os(Linux)`), from the releases that have the Synchronization module Courier's locks and atomics use.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .library(name: "CourierPostgres", targets: ["CourierPostgres"]),
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        .executable(name: "courier", targets: ["courier"]),
        .executable(name: "courier-bench", targets: ["courier-bench"]),
    ],
    traits: [
        .trait(
            name: "Postgres",
            description: "courier's PostgreSQL commands (shared cache store, download queue); "
                + "off by default so a first `swift run courier demo` does not build postgres-nio"
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // ManagedAtomicLazyReference: its atomics compile into Courier, where ThreadSanitizer sees them (it cannot see
        // inside Synchronization's AtomicLazyReference, whose load is not inlinable).
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        // CourierTesting's servers speak HTTPTypes through NIOHTTPTypes (no Foundation; NIOResumableUpload would bring it).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.3.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // courier-bench's ws-echo contender: swift-websocket's client used directly.
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        // `swift package generate-documentation` (.ci/build-docs); a plugin, so nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "CCourierSystem"),
        .target(
            name: "Courier",
            dependencies: [
                .target(name: "CCourierSystem", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings + fuzzedSettings + lockCounting
        ),
        .target(
            name: "CourierTesting",
            dependencies: [
                "Courier",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "Courier",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The URLSession transport on its own, so that nothing else links FoundationNetworking (and its libcurl).
        .target(
            name: "CourierURLSession",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CourierPostgres",
            dependencies: [
                "Courier",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "courier",
            dependencies: [
                "Courier",
                "CourierTesting",
                .target(name: "CourierPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .systemLibrary(name: "CZlib", path: "Benchmarks/CZlib"),
        .executableTarget(
            name: "courier-bench",
            dependencies: [
                "Courier",
                "CourierTesting",
                .target(name: "CourierPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/courier-bench",
            swiftSettings: strictSettings
        ),
        .target(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .executableTarget(
            name: "courier-fuzz",
            dependencies: [
                "Courier", "CLibFuzzer", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Fuzz/courier-fuzz",
            swiftSettings: strictSettings + fuzzedSettings,
            linkerSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier",
                "CourierTesting",
                "CourierTestSupport",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The CLI's own parsers, imported from its executable target.
        .testTarget(
            name: "CourierCLITests",
            dependencies: [
                "courier", "Courier", "CourierTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "DocExamples",
            dependencies: [
                "Courier",
                "CourierTesting",
                "CourierOpenAPI",
                "CourierURLSession",
                .target(name: "CourierPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "DocExamples",
            exclude: ["Givens.swift"],  // read by Scripts/doc-examples, which copies what a block needs
            sources: ["Generated", "ExampleOrigin.swift"],
            // Compiled as a user's code would be (default language features); their unused values are not worth
            // a warning each. DocExampleRunTests runs some of them against the loopback server.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        // Run by the crash campaign as a child process: a download killed in the window after its move into place.
        .executableTarget(
            name: "courier-crash-helper",
            dependencies: ["Courier"],
            path: "Tests/CourierCrashHelper",
            swiftSettings: strictSettings
        ),
        // Linked into the test bundle only: caps how many tests run at once (see its source).
        .target(name: "CTestRunWidth", path: "Tests/CTestRunWidth"),
        .target(
            name: "CourierTestSupport",
            dependencies: ["Courier", "CTestRunWidth", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/CourierTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CourierIntegrationTests",
            dependencies: [
                "Courier",
                "CourierTesting",
                "CourierTestSupport",
                "CourierOpenAPI",
                "CourierURLSession",
                "DocExamples",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // SwiftNIO's own server of the resumable-upload draft, for the interop tests only.
                .product(name: "NIOResumableUpload", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            // StreamingAPI/Generated is the client swift-openapi-generator made from the spec beside it, checked in
            // (`Scripts/generate-streaming-api` makes it again), so a build does not build the generator.
            exclude: ["StreamingAPI/openapi.yaml", "StreamingAPI/openapi-generator-config.yaml"],
            swiftSettings: strictSettings + lockCounting
        ),
        .testTarget(
            name: "CourierPostgresTests",
            dependencies: [
                "Courier",
                "CourierTesting",
                "CourierTestSupport",
                "CourierPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
