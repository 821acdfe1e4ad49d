import ArgumentParser
import BatchRunKit
import Foundation
import Synchronization

/// `batchrun submit QUEUE FILE...`: checks each file, then queues it.
struct SubmitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Check job files, then queue them in a queue folder's pending/, or in a queue in PostgreSQL (their params travel with them).",
        discussion: """
            Relative paths in an item resolve against the queue folder; in a PostgreSQL queue, against the job file's \
            own folder (which every worker must be able to read at that path). Any invalid file: exit 2, nothing queued.
            """)

    @Argument(help: "The queue folder (made when missing), or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Argument(help: "Job files to queue, in order.", completion: .file(extensions: ["yaml", "yml"]))
    var files: [String]

    @Option(help: ArgumentHelp("Not run before this time: 2026-12-01T03:00Z, 2026-12-01T04:00+01:00 (UTC when no zone is given).", valueName: "TIME"))
    var at: String?

    @Option(name: .customLong("in"), help: ArgumentHelp("Not run before this long from now: 90s, 30m, 2h.", valueName: "DURATION"))
    var delay: String?

    @Option(help: "Higher runs first (default 0); submission order within a priority.")
    var priority = 0

    @Option(help: "How many runs a failing item gets (a run that fails is tried again, resumed from its checkpoints; an invalid item is not).")
    var attempts = 1

    @Option(help: ArgumentHelp("The wait before the second attempt, doubled for each further one (with jitter).", valueName: "DURATION"))
    var backoff = "30s"

    @Flag(help: "Queue nothing when the same file with the same params is already pending, scheduled, retryable or running (exit 0, naming it).")
    var unique = false

    @Option(help: ArgumentHelp("Put the items in this group, which `batchrun limit` and `pause --group` act on (1 to 64 letters, digits, _, - and ., starting with a letter or digit).", valueName: "NAME"))
    var group: String?

    @Option(name: .customLong("fan-out"), help: ArgumentHelp("Queue one batch: the jobs JOB needs as one item, then one item per part of JOB's feed in parts (JOB alone on it), then the remaining jobs once every part is done. One file.", valueName: "JOB"),
            completion: ShellCompletion.jobNames)
    var fanOut: String?

    @Option(name: .customLong("param"), help: ArgumentHelp("Set or override a param (NAME=VALUE) for the queued items; repeatable.", valueName: "NAME=VALUE"))
    var params: [String] = []

    func validate() throws {
        if at != nil && delay != nil { throw ValidationError("give --at or --in, not both") }
        if let at, QueueSubmission.time(at) == nil { throw ValidationError("--at must be a time like 2026-12-01T03:00Z, found '\(at)'") }
        if let delay, JobFileLoader.seconds(delay) == nil { throw ValidationError("--in must be a duration like 90s, 30m or 2h, found '\(delay)'") }
        if JobFileLoader.seconds(backoff) == nil { throw ValidationError("--backoff must be a duration like 30s or 5m, found '\(backoff)'") }
        if let seconds = delay.flatMap(JobFileLoader.seconds), Date().addingTimeInterval(seconds) > QueueSubmission.latestDueTime {
            throw ValidationError("--in must end by 9999-12-31T23:59:59Z, found '\(delay ?? "")'")
        }
        if let time = at.flatMap(QueueSubmission.time), time > QueueSubmission.latestDueTime {
            throw ValidationError("--at must be by 9999-12-31T23:59:59Z, found '\(at ?? "")'")
        }
        if let seconds = JobFileLoader.seconds(backoff), seconds > QueueSubmission.longestBackoff {
            throw ValidationError("--backoff must be at most 7 days (168h), found '\(backoff)'")
        }
        if !QueueSubmission.priorities.contains(priority) { throw ValidationError("--priority must be between -99999 and 99999") }
        if !QueueSubmission.attemptRange.contains(attempts) { throw ValidationError("--attempts must be between 1 and 1000") }
        if let group, !QueueSubmission.isGroupName(group) { throw ValidationError("--group must be \(QueueSubmission.groupNameRule), found '\(group)'") }
        if fanOut != nil && files.count != 1 { throw ValidationError("--fan-out takes one job file, found \(files.count)") }
        if fanOut != nil && unique { throw ValidationError("--fan-out and --unique cannot be used together") }
    }

    func run() throws {
        // SIGINT or SIGTERM: the item being queued is finished and printed, the rest are not
        // queued, so every item queued has its line (a retry of the unprinted ones doubles nothing).
        let stop = Atomic<Bool>(false)
        SignalWatcher.start([SIGINT, SIGTERM]) { _ in stop.store(true, ordering: .sequentiallyConsistent) }
        var submission = QueueSubmission(priority: priority, runAt: at.flatMap(QueueSubmission.time), delay: delay.flatMap(JobFileLoader.seconds),
                                         attempts: attempts, backoff: JobFileLoader.seconds(backoff) ?? 30, unique: unique)
        submission.group = group
        var load = try LoadOptions.parse(params.flatMap { ["--param", $0] })
        let location = QueueLocation(queue)
        load.relativeTo = location.baseDirectory
        let loaded = try load.loadAll(files)   // prints every file's errors and exits 2 when any is invalid
        let batch = try fanOut.map { job in try BatchPlan(job: job, file: loaded[0]) }
        let opened: any Queue
        do {
            opened = try location.open()
        } catch {
            throw CommandFailure("\(error)", then: "nothing was queued", status: ExitStatus.failed)
        }
        if let batch, let fanOut {
            let queued = try opened.submitBatch(fileAt: files[0], params: load.paramValues, submission: submission, fanOut: batch.fanOut,
                                                parts: batch.parts)
            print("queued batch \(queued.id): \(queued.parts) part\(queued.parts == 1 ? "" : "s") of \(fanOut)")
            return
        }
        for (index, path) in files.enumerated() {
            if stop.load(ordering: .sequentiallyConsistent) {
                InterruptHandler.endBySIGINT(saying: "interrupted; \(index) of \(files.count) files were queued (each printed above), the rest were not")
            }
            let submitted = try opened.submit(fileAt: path, params: load.paramValues, sequence: index + 1, submission: submission)
            print(submitted.existing ? "not queued again: \(path) is already queued as \(submitted.name) (--unique)"
                                     : "queued \(path) as \(submitted.name)")
            fflush(nil)   // the line out now, before the next item (stdout is a pipe in scripts)
        }
    }
}

/// `submit --fan-out JOB`'s batch: the split of the job file and the parts listed now.
private struct BatchPlan {
    let fanOut: FanOut
    let parts: [FeedPart]

    /// Exit 2 naming the job when it is not one to fan out, or when its glob lists nothing;
    /// exit 1 when the listing failed.
    init(job: String, file: JobFile) throws {
        do {
            fanOut = try FanOut(job: job, in: file)
        } catch {
            throw CommandFailure(located: error.rendered + "\n1 error; nothing was queued\n", status: ExitStatus.invalid)
        }
        do {
            parts = try fanOut.parts()
        } catch {
            let invalid = error.message.hasPrefix("no feed part matches")
            throw CommandFailure("--fan-out \(job): \(error.message)", then: "nothing was queued", status: invalid ? ExitStatus.invalid : ExitStatus.failed)
        }
    }
}
