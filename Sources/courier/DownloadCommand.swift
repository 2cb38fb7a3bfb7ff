import ArgumentParser
import Courier
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `courier download`: resumable, verified downloads, one URL or a list.
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download files resumably, with several connections, a rate limit and a checksum.",
        discussion: HelpText.reflow(
            """
            The file grows as DEST.part beside a resume record (DEST.part.resume); it is checked (length, then
            --sha256) and renamed to DEST only when whole. Run the same command again after Ctrl-C, a crash or
            kill -9 and it continues where the record says. An existing DEST is never replaced without --overwrite.
            With -d the name comes from Content-Disposition or the URL; when two URLs of one run get the same name,
            the later one is saved as 'name (1).ext' (then (2), …), so no download is reported for another's bytes.
            A second courier writing the same DEST at the same time stops at once (destinationBusy).
            Prints the saved path on stdout; exits 0 only when every file is complete and verified.
            Examples:
              courier download 127.0.0.1:8080/file/1000000 -o big.bin --sha256 <hex>
              courier download 127.0.0.1:8080/file/1000000 -o big.bin --connections 4
              courier download 127.0.0.1:8080/file/1000000 -d downloads --limit-rate 500K
              courier download -i urls.txt -d downloads --concurrency 4
            """
        )
    )

    @Argument(help: "The URL to download (or use -i).")
    var url: String?

    @Option(name: .shortAndLong, help: "The file to write.")
    var output: String?

    @Option(
        name: .customShort("d"),
        help: ArgumentHelp(
            "The directory to write into; the name comes from the server or the URL (default: the current one).",
            valueName: "dir"
        )
    )
    var directory: String?

    @Option(
        name: .customShort("i"),
        help: ArgumentHelp("A file listing one URL per line ('-' for standard input); needs -d.", valueName: "list")
    )
    var inputFile: String?

    @Option(help: "The SHA-256 the file must have (64 hex digits).")
    var sha256: String?

    @Option(help: "Connections per file; more than 1 splits large files into segments (1-16).")
    var connections = 1

    @Option(help: HelpText.limitRate(covering: "all downloads"))
    var limitRate: String?

    @Option(help: "Keep the list of downloads here, so a new run picks up unfinished ones.")
    var stateDir: String?

    @Option(help: "Downloads at once with -i (1-64).")
    var concurrency = 3

    @Flag(help: "Replace an existing destination file.")
    var overwrite = false

    @Flag(help: "Create the missing directories of -o PATH, as curl's --create-dirs does.")
    var createDirs = false

    @Flag(
        help:
            "Keep nothing partial: a retry or a new run fetches the file from the first byte, and a failure leaves no .part file."
    )
    var noResume = false

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if (url == nil) == (inputFile == nil) { throw ValidationError("give either a URL or -i LIST") }
        if output != nil, directory != nil { throw ValidationError("-o and -d exclude each other") }
        if inputFile != nil, directory == nil { throw ValidationError("-i needs -d DIR") }
        if inputFile != nil, output != nil || sha256 != nil {
            throw ValidationError("-o and --sha256 name one file; they do not go with -i")
        }
        if !(1...16).contains(connections) { throw ValidationError("--connections must be between 1 and 16") }
        if !(1...64).contains(concurrency) { throw ValidationError("--concurrency must be between 1 and 64") }
        if noResume, connections > 1 {
            throw ValidationError("--no-resume downloads over one connection; leave out --connections")
        }
    }

    func run() async throws {
        signal(SIGXFSZ, SIG_IGN)  // past a file size limit, writes fail with EFBIG and the download says so
        let command = self
        // SIGINT and SIGTERM shut the download down gracefully (CommandServices): it pauses, its record is saved,
        // and the command exits 130; running it again continues from the part file.
        try await Output.exitOnFailure(cancelsOnSignal: false) { try await command.download() }
    }

    private func download() async throws {
        var options = DownloadOptions(
            checksum: try UsageError.parsing("--sha256") { try sha256.map(DownloadChecksum.sha256) },
            connections: connections,
            retries: connection.retries ?? 5,
            overwrites: overwrite,
            resumable: !noResume
        )
        let overrides = try connection.timeoutOverrides()
        if let idle = overrides.readIdle { options.idleTimeout = idle }
        let download = options
        let rate = try UsageError.parsing("--limit-rate") { try limitRate.map(CommandLineInput.byteRate) }
        let configuration = DownloadManager.Configuration(
            maxConcurrentDownloads: concurrency,
            stateDirectory: stateDir.map { URL(filePath: $0) },
            bytesPerSecond: rate
        )
        let session = Session(configuration: try connection.downloadConfiguration())
        let manager = try DownloadManager(session: session, configuration: configuration)
        let command = self
        // The manager pauses every download (saving its record) when the group shuts down, before the session
        // closes: a group shuts its services down last to first.
        _ = try await CommandServices.run([session, manager]) {
            await manager.restore(resuming: false)
            let stopping = Locked(false)
            do {
                // On graceful shutdown the transfer is cancelled as Ctrl-C cancelled it before: the downloads stop
                // where they are, and the pause below saves their records.
                try await withGracefulShutdownHandler {
                    try await cancelWhenGracefulShutdown {
                        try await Deadline.within(overrides.total) { try await command.transfer(manager, download) }
                    }
                } onGracefulShutdown: {
                    stopping.withLock { $0 = true }
                }
            } catch {
                // Stopped or past --timeout: each download saves its resume record before the process ends.
                let kept = "the partial download is kept, run the same command to resume"
                if stopping.withLock({ $0 }) || Task.isCancelled {
                    _ = try? await manager.pause(.all)
                    throw Interrupted(detail: kept)
                }
                guard let timeout = error as? CourierError, timeout.code == .timeout else { throw error }
                _ = try? await manager.pause(.all)
                throw CourierError(code: .timeout, message: timeout.message + "; " + kept)
            }
        }
    }

    /// The downloads the arguments name: one URL, or each line of `-i LIST`.
    private func transfer(_ manager: DownloadManager, _ options: DownloadOptions) async throws {
        if let inputFile {
            try await downloadList(inputFile, manager: manager, options: options)
        } else if let url {
            try await downloadOne(
                try UsageError.parsing("URL") { try CommandLineInput.url(url) },
                manager: manager,
                options: options
            )
        }
    }

    private func downloadOne(_ url: URL, manager: DownloadManager, options: DownloadOptions) async throws {
        if let output, !createDirs {
            let folder = URL(filePath: output).deletingLastPathComponent()
            guard FileManager.default.isDirectory(atPath: folder.path) else {
                throw CourierError(
                    code: .fileAccess,
                    message: "the directory \(folder.path) does not exist; add --create-dirs to create it"
                )
            }
        }
        let destination: DownloadDestination =
            output.map { .file(URL(filePath: $0)) } ?? .directory(URL(filePath: directory ?? "."))
        // Subscribed before it starts, so the first events (where a resume starts) are seen too.
        let download: Download
        do {
            download = try await manager.add(url, to: destination, options: options, startsImmediately: false)
        } catch let error as CourierError
            where error.code == .destinationExists
        {  // refused before starting: the file was there already
            throw CourierError(
                code: error.code,
                message: error.message + "; add --overwrite to replace it",
                underlying: error.underlying
            )
        }
        let events = await download.events()
        try await manager.start(.download(download))
        let printer = ProgressPrinter()
        for await event in events { printer.show(event) }
        printer.end()
        let file = try await download.completion()
        let size = FileManager.default.sizeOfItem(atPath: file.path).map(Int.init) ?? 0
        Output.stderr(
            "saved \(file.path) (\(ByteCount.format(size)))\(options.checksum == nil ? "" : ", sha256 verified")"
        )
        try Output.stdout(file.path)
    }

    private func downloadList(_ list: String, manager: DownloadManager, options: DownloadOptions) async throws {
        let urls = try CommandLineInput.urlList(try CommandLineInput.readText(list))
        let start = ContinuousClock.now
        var added: [(URL, Result<Download, any Error>)] = []
        for url in urls {
            do {
                added.append(
                    (
                        url,
                        .success(
                            try await manager.add(
                                url,
                                to: .directory(URL(filePath: directory ?? ".")),
                                options: options
                            )
                        )
                    )
                )
            } catch {
                added.append((url, .failure(error)))
            }
        }
        let printer = ProgressPrinter()
        let progress = Task {
            for await aggregate in manager.progressUpdates(every: .seconds(1)) { printer.show(.progress(aggregate)) }
        }
        var failed = 0
        for (url, result) in added {
            do {
                let file = try await result.get().completion()
                printer.line("done \(file.path)")
                try Output.stdout(file.path)
            } catch {
                failed += 1
                printer.line("failed \(Redactor.standard.redact(url: url)): \(error)")
            }
        }
        progress.cancel()
        printer.end()
        let seconds = start.duration(to: .now).seconds.fixedText(2)
        Output.stderr(
            "\(urls.count) download\(urls.count == 1 ? "" : "s"): \(urls.count - failed) completed, \(failed) failed in \(seconds) s"
        )
        if failed > 0 { throw ExitCode(1) }
    }
}
