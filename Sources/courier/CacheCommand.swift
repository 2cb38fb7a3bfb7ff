import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `courier cache stats|list URL|clear [URL]`: look into and empty the disk cache the request commands fill.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show or clear the response cache that --cache fills.",
        discussion: HelpText.reflow(
            """
            Examples:
              courier get '127.0.0.1:8080/cache/a?cache-control=max-age=60' --cache http
              courier cache stats
              courier cache list http://127.0.0.1:8080/cache/a
              courier cache clear http://127.0.0.1:8080/cache/a
              courier cache clear --cache-dir /tmp/courier-cache
              courier cache stats --cache-store postgres://u:pw@127.0.0.1:5432/courier
            """
        ),
        subcommands: [Stats.self, List.self, Clear.self]
    )

    struct Directory: ParsableArguments {
        @Option(help: "The cache directory (default $XDG_CACHE_HOME/courier, else ~/.cache/courier).")
        var cacheDir: String?

        @Option(
            help: ArgumentHelp(
                "A cache shared by a fleet, postgres://USER:PASSWORD@HOST:PORT/DB; needs a build with --traits Postgres.",
                valueName: "url"
            )
        )
        var cacheStore: String?

        func validate() throws {
            if cacheStore != nil && cacheDir != nil {
                throw ValidationError("--cache-store and --cache-dir exclude each other")
            }
        }

        /// Opens the cache; a directory that is not there is said to be so, and not created (these commands only
        /// look and remove).
        func open() async throws -> ResponseCache {
            let place = cacheStore ?? CacheSettings.directory(cacheDir).path(percentEncoded: false)
            if cacheStore == nil, !FileManager.default.isDirectory(atPath: place) {
                throw CommandFailure(
                    description: "there is no cache directory at \(place): nothing has been cached there "
                        + "(courier get URL --cache http --cache-dir \(place) fills it)"
                )
            }
            return ResponseCache(memory: nil, disk: try await FleetStores.preparedCacheStore(place))
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats",
            abstract: "Entries, size on disk, size before compression and the ratio."
        )
        @OptionGroup var directory: Directory

        func run() async throws {
            try await Output.exitOnFailure {
                let statistics = try await directory.open().statistics()
                try Output.stdout("entries: \(statistics.entryCount)")
                try Output.stdout("on disk: \(ByteCount.format(statistics.bytesOnDisk))")
                try Output.stdout(
                    "bodies: \(ByteCount.format(statistics.bytesBeforeCompression)), "
                        + "\(ByteCount.format(statistics.disk?.storedBodyBytes ?? 0)) as stored"
                )
                try Output.stdout("compression ratio: \(statistics.compressionRatio.fixedText(2))")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "The entries for a URL (any query), or all of them."
        )
        @Argument(help: "The URL whose entries to list; all entries when left out.")
        var url: String?
        @OptionGroup var directory: Directory

        func run() async throws {
            try await Output.exitOnFailure {
                let cache = try await directory.open()
                let entries =
                    if let url { await cache.entries(url: try CommandLineInput.url(url)) } else {
                        await cache.entries()
                    }
                for entry in entries {
                    let expiry = entry.expiresAt.map { "expires \($0.formatted(.iso8601))" } ?? "no expiry"
                    try Output.stdout(
                        "\(entry.status) \(entry.method) \(Redactor.standard.redact(urlText: entry.url))  \(ByteCount.format(entry.bodyBytes)) "
                            + "(\(ByteCount.format(entry.storedBytes)) on disk)  stored \(entry.storedAt.formatted(.iso8601)), \(expiry)"
                    )
                }
                Output.stderr("\(entries.count) \(entries.count == 1 ? "entry" : "entries")")
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove the entries for a URL (any query), or every entry."
        )
        @Argument(help: "The URL whose entries to remove; everything when left out.")
        var url: String?
        @OptionGroup var directory: Directory

        func run() async throws {
            try await Output.exitOnFailure {
                let cache = try await directory.open()
                let removed =
                    if let url { await cache.removeAll(url: try CommandLineInput.url(url)) } else {
                        await cache.removeAll()
                    }
                Output.stderr("removed \(removed) \(removed == 1 ? "entry" : "entries")")
            }
        }
    }
}
