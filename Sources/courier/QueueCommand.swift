import ArgumentParser
import Courier
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Postgres
import CourierPostgres
#endif

/// `courier queue add|work|status --db postgres://…`: a download queue in PostgreSQL that any number of workers,
/// on one machine or many, work through together.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "A download queue in PostgreSQL shared by workers on many machines (build with --traits Postgres).",
        discussion: HelpText.reflow(
            """
            Jobs live in the table courier_download_jobs. A worker claims one at a time per slot under a lease it
            renews; a worker that dies (kill -9) loses its lease and another continues the file from its .part
            and resume record, so the destination directory must be shared by the workers. Each job's file goes
            into place once, verified by its checksum when it has one.
            Examples:
              export DB=postgres://courier:courier@127.0.0.1:5432/courier
              courier queue add --db $DB 127.0.0.1:8080/file/5000000 -d /tmp/jobs
              courier queue add --db $DB -i /tmp/urls.txt -d /tmp/jobs
              courier queue work --db $DB --concurrency 4 --until-done
              courier queue status --db $DB
            """
        ),
        subcommands: [Add.self, Work.self, Status.self]
    )

    struct Database: ParsableArguments {
        @Option(help: ArgumentHelp("The queue's database, postgres://USER:PASSWORD@HOST:PORT/DB.", valueName: "url"))
        var db: String
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add jobs: URLs (or -i LIST) into a directory."
        )
        @OptionGroup var database: Database

        @Argument(help: "The URLs to download (or use -i).")
        var urls: [String] = []

        @Option(
            name: .customShort("i"),
            help: ArgumentHelp("A file listing one URL per line ('-' for standard input).", valueName: "list")
        )
        var inputFile: String?

        @Option(
            name: .customShort("d"),
            help: ArgumentHelp("The directory the files go into; every worker must reach it.", valueName: "dir")
        )
        var directory: String

        @Option(help: "The SHA-256 the file must have (64 hex digits); with one URL only.")
        var sha256: String?

        @Option(help: "Higher runs first (default 0).")
        var priority = 0

        @Option(help: "Connections per file (1-16).")
        var connections = 1

        @Option(help: "Attempts before a job fails for good (a worker that dies counts one).")
        var attempts = 5

        func validate() throws {
            if urls.isEmpty == (inputFile == nil) { throw ValidationError("give URLs or -i LIST") }
            if sha256 != nil && (urls.count != 1 || inputFile != nil) {
                throw ValidationError("--sha256 names one file; give one URL")
            }
            if !(1...16).contains(connections) { throw ValidationError("--connections must be between 1 and 16") }
            if attempts < 1 { throw ValidationError("--attempts must be at least 1") }
        }

        func run() async throws {
            try await Output.exitOnFailure {
                #if Postgres
                let links =
                    try inputFile.map { try CommandLineInput.urlList(try CommandLineInput.readText($0)) }
                    ?? urls.map(CommandLineInput.url)
                let folder = URL(filePath: directory, directoryHint: .isDirectory).standardizedFileURL
                let checksum = try sha256.map(DownloadChecksum.sha256)
                try await withQueue(database.db) { queue in
                    for link in links {
                        let destination = try DownloadFileName.destination(
                            for: DownloadFileName.suggested(contentDisposition: nil, url: link),
                            in: folder
                        )
                        let id = try await queue.add(
                            link,
                            to: destination,
                            checksum: checksum,
                            priority: priority,
                            connections: connections,
                            maxAttempts: attempts
                        )
                        try Output.stdout("\(id) \(destination.path(percentEncoded: false))")
                    }
                    Output.stderr("added \(links.count) job\(links.count == 1 ? "" : "s")")
                }
                #else
                throw FleetStores.missing
                #endif
            }
        }
    }

    struct Work: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "work",
            abstract:
                "Work through the queue; SIGTERM or Ctrl-C hands the running jobs back (their part files stay), exit 0."
        )
        @OptionGroup var database: Database

        @Option(help: "Jobs downloaded at once (1-64).")
        var concurrency = 2

        @Flag(help: "Exit once no job is queued or running anywhere (exit 1 when any job failed).")
        var untilDone = false

        @Option(help: "Seconds a claim holds without renewal; a dead worker's jobs wait this long (default 30).")
        var lease = "30"

        @Option(help: HelpText.limitRate(covering: "all of this worker's downloads"))
        var limitRate: String?

        @OptionGroup var connection: ConnectionOptions

        func validate() throws {
            if !(1...64).contains(concurrency) { throw ValidationError("--concurrency must be between 1 and 64") }
            if connection.timeout != nil {
                throw ValidationError(
                    "--timeout does not apply to queue work: a worker runs until stopped, and each job ends on "
                        + "--read-timeout of silence"
                )
            }
        }

        func run() async throws {
            // SIGINT and SIGTERM shut the worker down gracefully (CommandServices): running jobs go back to the
            // queue, then the session and the database close, and the command exits 0.
            let command = self
            try await Output.exitOnFailure(cancelsOnSignal: false) { try await command.work() }
        }

        private func work() async throws {
            #if Postgres
            let leaseTime = try UsageError.parsing("--lease") { try CommandLineInput.seconds(lease) }
            let rate = try UsageError.parsing("--limit-rate") { try limitRate.map(CommandLineInput.byteRate) }
            let overrides = try connection.timeoutOverrides()
            let database = try FleetDatabase(url: database.db, logger: FleetStores.logger)
            let queue = DownloadQueue(database: database)
            let session = Session(configuration: try connection.downloadConfiguration())
            let worker = try DownloadWorker(
                queue: queue,
                session: session,
                concurrency: concurrency,
                lease: leaseTime,
                bytesPerSecond: rate,
                retries: connection.retries ?? 2,
                idleTimeout: overrides.readIdle ?? .seconds(30)
            )
            let (untilDone, concurrency) = (untilDone, concurrency)
            // The group shuts down last to first: the worker hands its jobs back, then the session and the
            // database close.
            _ = try await CommandServices.run([database, session]) {
                try await queue.prepare()
                Output.stderr("worker \(worker.name): \(concurrency) at once")
                let events = worker.events()
                async let printed: Void = { for await event in events { Output.stderr(Self.line(event)) } }()
                await worker.run(untilSettled: untilDone)  // or until graceful shutdown
                await printed
                guard untilDone, !Task.isShuttingDownGracefully else { return }
                if try await queue.status().counts[.failed] ?? 0 > 0 { throw ExitCode(1) }
            }
            #else
            throw FleetStores.missing
            #endif
        }

        #if Postgres
        static func line(_ event: DownloadWorker.Event) -> String {
            switch event {
            case .started(let job):
                "started \(job.id) \(Redactor.standard.redact(url: job.url)) (attempt \(job.attempts) of \(job.maxAttempts))"
            case .completed(let job, let file): "done \(job.id) \(file.path(percentEncoded: false))"
            case .failed(let job, let error, let willRetry):
                "failed \(job.id): \(error)\(willRetry ? "; queued again" : "")"
            case .handedBack(let job): "handed back \(job.id); its part file stays for the next worker"
            case .waitingForDatabase(let error): "waiting for the database: \(error)"
            }
        }
        #endif
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Every job and the totals.")
        @OptionGroup var database: Database

        func run() async throws {
            try await Output.exitOnFailure {
                #if Postgres
                try await withQueue(database.db) { queue in
                    for job in try await queue.jobs() {
                        let size =
                            job.totalBytes.map { "\(ByteCount.format(job.completedBytes)) of \(ByteCount.format($0))" }
                            ?? ByteCount.format(job.completedBytes)
                        let error = job.lastError.map { "  \(CourierError.printable($0))" } ?? ""
                        try Output.stdout(
                            "\(job.id)\t\(job.state)\t\(job.attempts)/\(job.maxAttempts)\t\(size)\t"
                                + "\(job.destination.path(percentEncoded: false))\(error)"
                        )
                    }
                    Output.stderr(String(describing: try await queue.status()))
                }
                #else
                throw FleetStores.missing
                #endif
            }
        }
    }
}

#if Postgres
/// Runs `body` with the queue in the database at `url` (its tables made sure of), the database's connection pool
/// running until `body` ends.
private func withQueue(_ url: String, _ body: (DownloadQueue) async throws -> Void) async throws {
    try await withFleetDatabase(url: url, logger: FleetStores.logger) { database in
        let queue = DownloadQueue(database: database)
        try await queue.prepare()
        try await body(queue)
    }
}
#endif
