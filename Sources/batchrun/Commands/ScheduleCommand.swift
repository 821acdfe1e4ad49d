import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun schedule QUEUE FILE --cron "..."`: a job file that workers queue at each due time.
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Add a schedule to a queue (a job file workers queue at each due time of a cron line), list the schedules or remove one.",
        discussion: """
            Workers queue each due time exactly once, however many run on however many machines; a due time missed while \
            no worker ran is queued once (only the latest) when one starts. The file is checked as submit checks it.
            """)

    @Argument(help: "The queue folder (made when missing), or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Argument(help: "The job file to queue at each due time.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String?

    @Option(help: ArgumentHelp("Five fields (MIN HOUR DOM MON DOW) or @hourly, @daily, @weekly, @monthly, @yearly.", valueName: "LINE"))
    var cron: String?

    @Option(help: ArgumentHelp("The time zone of the cron line (default UTC).", valueName: "ZONE"))
    var tz = "UTC"

    @Option(help: "The schedule's name (default: the file's name without .yaml); a schedule of that name is replaced.")
    var name: String?

    @Option(name: .customLong("param"), help: ArgumentHelp("Set or override a param (NAME=VALUE) for the queued items; repeatable.", valueName: "NAME=VALUE"))
    var params: [String] = []

    @Flag(help: "List the schedules with their next due time.")
    var list = false

    @Option(help: ArgumentHelp("Remove the schedule of this name.", valueName: "NAME"))
    var remove: String?

    func validate() throws {
        let actions = [file != nil, list, remove != nil].filter { $0 }.count
        guard actions == 1 else { throw ValidationError("give FILE with --cron, or --list, or --remove NAME") }
        if file != nil && cron == nil { throw ValidationError("a schedule needs --cron \"MIN HOUR DOM MON DOW\"") }
    }

    func run() throws {
        let location = QueueLocation(queue)
        var entry: QueueScheduleEntry?
        if let file, let cron {
            var load = try LoadOptions.parse(params.flatMap { ["--param", $0] })
            load.relativeTo = location.baseDirectory
            _ = try load.loadAll([file])   // prints the file's errors and exits 2 when it is invalid
            do {
                let url = URL(fileURLWithPath: file).standardizedFileURL
                entry = try QueueScheduleEntry(name: name ?? url.deletingPathExtension().lastPathComponent, cron: cron, timeZone: tz,
                                               text: try String(contentsOf: url, encoding: .utf8), params: load.paramValues,
                                               directory: location.baseDirectory ?? url.deletingLastPathComponent().path)
            } catch {
                throw CommandFailure("\(error)", then: "no schedule was added", status: ExitStatus.invalid)
            }
            if let entry, entry.cron.nextDue(after: Date()) == nil {
                throw CommandFailure("--cron \"\(cron)\" has no due time in the next five years (a day its months never have, "
                                     + "like 31 in February?)", then: "no schedule was added", status: ExitStatus.invalid)
            }
        }
        let opened: any Queue
        do {
            opened = try location.open()
        } catch {
            throw CommandFailure("\(error)", status: ExitStatus.failed)
        }
        if let entry {
            try opened.addSchedule(entry)
            let next = QueueScheduleListing(entry).nextDue ?? "never"
            print("scheduled \(entry.name): \(entry.cron.line) (\(entry.cron.timeZone.identifier)), next due \(next)")
        } else if let remove {
            guard try opened.removeSchedule(named: remove) else {
                throw CommandFailure("no schedule \(remove) in \(opened.location)", status: ExitStatus.invalid)
            }
            print("removed schedule \(remove)")
        } else {
            let lines = QueueText.schedules(try opened.schedules().map { QueueScheduleListing($0) })
            print(lines.isEmpty ? "no schedules in \(opened.location)" : lines.dropFirst().joined(separator: "\n"))
        }
    }
}
