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
        let location = QueueLocation(queue)
        load.relativeTo = location.baseDirectory
        _ = try load.loadAll(files)   // prints every file's errors and exits 2 when any is invalid
        let opened: any Queue
        do {
            opened = try location.open()
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\nnothing was queued\n".utf8))
            throw ExitCode(ExitStatus.failed)
        }
        for (index, path) in files.enumerated() {
            let name = try opened.submit(fileAt: path, params: load.paramValues, sequence: index + 1)
            print("queued \(path) as \(name)")
        }
    }
}
