import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun prune QUEUE --older-than DURATION [--state STATE]...`: deletes old finished items.
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete finished items that ended longer ago than --older-than, with their logs and reports (done ones only, unless --state says more).",
        discussion: """
            A few hundred at a time, so workers claim meanwhile. Kept whatever their age: the items of a fan-out batch that is \
            not finished, and on PostgreSQL each schedule's latest item. The stores' run state is not touched. `worker --keep \
            DURATION` does the same for done items once a minute.
            """)

    enum PrunedState: String, ExpressibleByArgument, CaseIterable {
        case done, failed, cancelled
    }

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Option(help: ArgumentHelp("Items that ended longer ago than this: 12h, 14d.", valueName: "DURATION"))
    var olderThan: String

    @Option(help: "Which finished items: done (the default), failed, cancelled; repeatable.")
    var state: [PrunedState] = []

    func validate() throws {
        if JobFileLoader.seconds(olderThan) == nil { throw ValidationError("--older-than must be a duration like 12h or 14d, found '\(olderThan)'") }
    }

    func run() throws {
        let opened = try WorkerCommand.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        let states = Set((state.isEmpty ? [.done] : state).compactMap { QueueItemState(rawValue: $0.rawValue) })
        let before = Date().addingTimeInterval(-(JobFileLoader.seconds(olderThan) ?? 0))
        let pruned = try WorkerCommand.orExit(ExitStatus.failed) { try opened.prune(states: states, endedBefore: before) }
        let names = states.map(\.rawValue).sorted().joined(separator: ", ")
        print("pruned \(pruned) item\(pruned == 1 ? "" : "s") (\(names)) that ended before \(before.formatted(Date.ISO8601FormatStyle()))")
    }
}
