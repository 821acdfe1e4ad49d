import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun submit QUEUE FILE...`: checks each file, then queues it.
struct SubmitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Check job files, then queue them in a queue folder's pending/, or in a queue in PostgreSQL (their params travel with them).",
        discussion: """
            Relative paths in an item resolve against the queue folder; in a PostgreSQL queue, against the job file's \
            own folder (which every worker must be able to read at that path). Any invalid file: exit 2, nothing queued.
            """)

    @Argument(help: "The queue folder (made when missing), or postgresql://USER@HOST:PORT/DB.")
    var queue: String

    @Argument(help: "Job files to queue, in order.")
    var files: [String]

    @Option(name: .customLong("param"), help: ArgumentHelp("Set or override a param (NAME=VALUE) for the queued items; repeatable.", valueName: "NAME=VALUE"))
    var params: [String] = []

    func run() throws {
        var load = try LoadOptions.parse(params.flatMap { ["--param", $0] })
        if StoreSpec.Kind(location: queue) == .postgres { return try submitToPostgres(load) }
        load.relativeTo = queue
        _ = load.loadAll(files)   // prints every file's errors and exits 2 when any is invalid
        let folder = try QueueFolder(path: queue)
        for (index, path) in files.enumerated() {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let name = try folder.submit(text: text, name: URL(fileURLWithPath: path).lastPathComponent, params: load.paramValues,
                                         sequence: index + 1)
            print("queued \(path) as pending/\(name)")
        }
    }

    /// Each file's text, params and folder into the queue's table, in one transaction each.
    private func submitToPostgres(_ load: LoadOptions) throws {
        _ = load.loadAll(files)   // prints every file's errors and exits 2 when any is invalid
        let postgres: PostgresQueue
        do {
            postgres = try PostgresQueue(url: queue)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\nnothing was queued\n".utf8))
            throw ExitCode(ExitStatus.failed)
        }
        for path in files {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            let text = try String(contentsOf: url, encoding: .utf8)
            let id = try postgres.submit(text: text, name: url.lastPathComponent, params: load.paramValues,
                                         directory: url.deletingLastPathComponent().path)
            print("queued \(path) as item \(id) on \(postgres.location)")
        }
    }
}
