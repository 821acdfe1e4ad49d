import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun limit QUEUE GROUP --running N --rate N/PERIOD`: limits a group of items.
struct LimitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "limit",
        abstract: "Limit a group of items (submit --group NAME) across every worker: how many run at once, how many start per period.",
        discussion: """
            Enforced where items are claimed (on PostgreSQL in the claim's own transaction), kept in the queue: it holds for \
            workers started later and across their restarts. An item of a group at its limit waits; other items are claimed \
            past it. Each `limit` replaces the group's limits; --clear removes them. `batchrun queue` lists them.
            """)

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Argument(help: "The group (1 to 64 letters, digits, _, - and ., starting with a letter or digit).")
    var group: String

    @Option(help: "At most this many items of the group run at once.")
    var running: Int?

    @Option(help: ArgumentHelp("At most N items of the group start per period: 10/1m, 1/30s, 100/h.", valueName: "N/PERIOD"))
    var rate: String?

    @Flag(help: "Remove the group's limits.")
    var clear = false

    func validate() throws {
        if !QueueSubmission.isGroupName(group) { throw ValidationError("a group is \(QueueSubmission.groupNameRule), found '\(group)'") }
        if clear == (running != nil || rate != nil) { throw ValidationError("give --running and/or --rate, or --clear") }
        if let running, running < 1 { throw ValidationError("--running must be at least 1") }
        if let rate, QueueGroupLimit.Rate(rate) == nil {
            throw ValidationError("--rate must be N/PERIOD like 10/1m, 1/30s or 100/h (N at least 1, the period at most 7d), found '\(rate)'")
        }
    }

    func run() throws {
        let opened = try WorkerCommand.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        let limit = QueueGroupLimit(group: group, running: running, rate: rate.flatMap(QueueGroupLimit.Rate.init))
        try WorkerCommand.orExit(ExitStatus.failed) { try opened.setLimit(limit) }
        print(clear ? "group \(group): no limit" : "group \(group): \(limit.text)")
    }
}
