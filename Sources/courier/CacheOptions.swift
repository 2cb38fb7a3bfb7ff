import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--cache POLICY [--ttl S] [--cache-dir DIR]`, shared by the request commands and `courier batch`.
struct CacheArguments: ParsableArguments {
    @Option(help: "Use the response cache: network-only, cache-else-network, network-else-cache, cache-only or http.")
    var cache: String?

    @Option(help: "With --cache cache-else-network: how long an entry answers, in seconds (default 30 days).")
    var ttl: String?

    @Option(help: "The cache directory (default $XDG_CACHE_HOME/courier, else ~/.cache/courier).")
    var cacheDir: String?

    @Option(
        help: ArgumentHelp(
            "A cache shared by a fleet, postgres://USER:PASSWORD@HOST:PORT/DB (or a directory, as --cache-dir); "
                + "needs a build with --traits Postgres.",
            valueName: "url"
        )
    )
    var cacheStore: String?

    /// The values given, for the code that reads them.
    var settings: CacheSettings {
        CacheSettings(
            cache: cache,
            ttl: ttl,
            cacheDir: cacheDir,
            cacheStore: cacheStore
        )
    }

    func validate() throws { try settings.validate() }

    /// See ``CacheSettings/apply(to:)``.
    func apply(to configuration: inout Configuration) throws { try settings.apply(to: &configuration) }
}

/// The values of ``CacheArguments``, as either reader of the line gives them: each value is the option of the same name's.
struct CacheSettings {
    var cache: String?
    var ttl: String?
    var cacheDir: String?
    var cacheStore: String?

    func validate() throws {
        if let cache, CacheSettings.policy(named: cache, ttl: nil) == nil {
            throw ValidationError(
                "--cache must be one of network-only, cache-else-network, network-else-cache, cache-only, http"
            )
        }
        if ttl != nil && cache != "cache-else-network" {
            throw ValidationError("--ttl needs --cache cache-else-network")
        }
        if cacheStore != nil && cacheDir != nil {
            throw ValidationError("--cache-store and --cache-dir exclude each other")
        }
        if cacheStore != nil && cache == nil { throw ValidationError("--cache-store needs --cache POLICY") }
    }

    /// Sets the session's cache and policy when `--cache` asks for one.
    func apply(to configuration: inout Configuration) throws {
        guard let cache else { return }
        let ttl = try ttl.map { try CommandLineInput.seconds($0) }
        guard let policy = Self.policy(named: cache, ttl: ttl) else { return }
        let store = try FleetStores.cacheStore(cacheStore ?? Self.directory(cacheDir).path(percentEncoded: false))
        configuration.cache = ResponseCache(memory: nil, disk: store)
        configuration.cachePolicy = policy
    }

    static func policy(named name: String, ttl: Duration?) -> CachePolicy? {
        switch name {
        case "network-only": .networkOnly
        case "cache-else-network": .cacheElseNetwork(ttl: ttl ?? CachePolicy.defaultTTL)
        case "network-else-cache": .networkElseCache
        case "cache-only": .cacheOnly
        case "http": .http
        default: nil
        }
    }

    static func directory(_ path: String?) -> URL {
        path.map { URL(filePath: $0, directoryHint: .isDirectory) } ?? DiskCacheStore.defaultDirectory()
    }
}
