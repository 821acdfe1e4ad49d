import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun retry QUEUE ITEM... | --failed [--since DURATION] [--group NAME]`: failed or cancelled items back to pending.
struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Put failed or cancelled items back to pending, under their identity: each run resumes from its checkpoints, its attempts counted afresh.",
        discussion: """
            Items are named as `batchrun queue` prints them: a folder item's file name, a PostgreSQL item's id. --failed retries \
            every failed item (a dead-letter redrive); --since 2h only those that failed in the last two hours. A done, pending, \
            scheduled, retryable or running item is refused saying why, and nothing is changed: exit 2, as for an item not in \
            the queue. A retried part of a fan-out batch that ends done lets the batch go on.
            """)

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Argument(help: "The items to retry.", completion: ShellCompletion.queueItems)
    var items: [String] = []

    @Flag(help: "Retry every failed item.")
    var failed = false

    @Option(help: ArgumentHelp("With --failed: only items that failed within this long: 90s, 30m, 2h, 7d.", valueName: "DURATION"))
    var since: String?

    @Option(help: ArgumentHelp("With --failed: only items of this group (submit --group).", valueName: "NAME"))
    var group: String?

    func validate() throws {
        if failed == !items.isEmpty { throw ValidationError("name the items to retry, or give --failed (not both)") }
        if (since != nil || group != nil) && !failed { throw ValidationError("--since and --group go with --failed") }
        if let since, JobFileLoader.seconds(since) == nil { throw ValidationError("--since must be a duration like 90s, 30m, 2h or 7d, found '\(since)'") }
    }

    func run() throws {
        let opened = try WorkerCommand.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        let names = failed
            ? try WorkerCommand.orExit(ExitStatus.failed) {
                try opened.failedItems(since: since.flatMap(JobFileLoader.seconds).map { Date().addingTimeInterval(-$0) }, group: group)
            }
            : items
        if failed && names.isEmpty { print("no failed item to retry") }
        var refused: [String] = []
        for name in names {
            let outcome = try WorkerCommand.orExit(ExitStatus.failed) { try opened.retry(name) }
            switch outcome {
            case .retried: print("retried \(name): pending again, its run resumes from its checkpoints")
            case .refused(let state):
                refused.append("error: \(name) is \(state.rawValue): only a failed or cancelled item can be retried; nothing changed")
            case .notFound:
                refused.append("error: no item \(name) in \(opened.location) (name it as `batchrun queue` lists it)")
            }
        }
        if !refused.isEmpty { throw CommandFailure(located: refused.joined(separator: "\n"), status: ExitStatus.invalid) }
    }
}
