import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun pause QUEUE [--group NAME]` and `batchrun resume QUEUE [--group NAME]`.
struct PauseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a queue, or one group of it: no worker on any machine claims a new item of it (within a second); running items finish.",
        discussion: "`batchrun resume` undoes it at once. `queue` says so (its first line ends `(paused)`; JSON `\"paused\"`, `\"paused_groups\"`), and so do the live page and the metrics (`batchrun_queue_paused`). A paused queue takes over no orphaned item either; a paused group's running items are still taken over.")

    @OptionGroup var target: PauseTarget

    func run() throws {
        try target.set(paused: true)
    }
}

/// `batchrun resume QUEUE [--group NAME]`.
struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume a paused queue, or a paused group of it: workers claim its items again.")

    @OptionGroup var target: PauseTarget

    func run() throws {
        try target.set(paused: false)
    }
}

/// What `pause` and `resume` name: a queue, and maybe a group of it.
struct PauseTarget: ParsableArguments {
    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Option(help: ArgumentHelp("Only this group's items (submit --group).", valueName: "NAME"))
    var group: String?

    func validate() throws {
        if let group, !QueueSubmission.isGroupName(group) { throw ValidationError("--group must be \(QueueSubmission.groupNameRule), found '\(group)'") }
    }

    func set(paused: Bool) throws {
        let opened = try WorkerCommand.orExit(ExitStatus.failed) { try openQueue(at: queue) }
        try WorkerCommand.orExit(ExitStatus.failed) { try opened.setPaused(paused, group: group) }
        let what = group.map { "group \($0) of \(opened.location)" } ?? opened.location
        print(paused ? "paused \(what): no worker claims a new item\(group == nil ? "" : " of it") until `batchrun resume`; running items finish"
                     : "resumed \(what)")
    }
}
