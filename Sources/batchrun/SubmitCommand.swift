import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun submit QUEUE FILE...`: checks each file, then queues it.
struct SubmitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Check job files, then queue them in a queue folder's pending/ (their params travel with them).",
        discussion: "Relative paths in an item resolve against the queue folder. Any invalid file: exit 2, nothing queued.")

    @Argument(help: "The queue folder (made when missing).")
    var queue: String

    @Argument(help: "Job files to queue, in order.")
    var files: [String]

    @Option(name: .customLong("param"), help: ArgumentHelp("Set or override a param (NAME=VALUE) for the queued items; repeatable.", valueName: "NAME=VALUE"))
    var params: [String] = []

    func run() throws {
        var load = try LoadOptions.parse(params.flatMap { ["--param", $0] })
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
}
