import BatchRunEngine
import Foundation
import Synchronization

/// Runs a worker's items in this process, each as a `JobFileRun` on a task of its own: loaded
/// against the item's folder with its params, opened with `RunOpening` (resumed from its
/// checkpoints, fenced by its claim), its JSON report written to `item.reportPath` and a line
/// per error and its outcome appended to `item.logPath`. Stopping a run cancels it (its jobs
/// stop after their current batch); a run cannot be killed, so `kill` cancels it too.
///
/// ```swift
/// let worker = Worker(queue: try openQueue(at: "var/queue"), executor: JobFileExecutor(maxConcurrentJobs: 2),
///                     options: .init(slots: 2, once: true))
/// exit(worker.run())
/// ```
package final class JobFileExecutor: QueueItemExecutor, Sendable {
    /// How many jobs of one item may run at once.
    package let maxConcurrentJobs: Int
    /// What the items may touch: checked as each is loaded, and as each file is opened.
    package let confinement: ItemConfinement

    private struct State {
        var next = 1
        var runs: [Int: JobFileRun] = [:]
        var stopped: Set<Int> = []
        var ended: [(run: Int, status: Int32)] = []
    }

    private let state = Mutex(State())

    package init(maxConcurrentJobs: Int = ProcessInfo.processInfo.activeProcessorCount, confinement: ItemConfinement = ItemConfinement()) {
        self.maxConcurrentJobs = maxConcurrentJobs
        self.confinement = confinement
    }

    package func start(_ item: QueueItem, wake: @escaping @Sendable () -> Void) -> Int? {
        let number = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        Task.detached { [self] in
            let status = await run(item, number: number)
            state.withLock { state in
                state.runs[number] = nil
                state.stopped.remove(number)
                state.ended.append((number, status))
            }
            wake()
        }
        return number
    }

    package func ended() -> [(run: Int, status: Int32)] {
        state.withLock { state in
            defer { state.ended = [] }
            return state.ended
        }
    }

    package func stop(_ run: Int) {
        let running = state.withLock { state in
            state.stopped.insert(run)
            return state.runs[run]
        }
        running?.cancel()
    }

    package func kill(_ run: Int) {
        stop(run)
    }

    /// One item, as `batchrun run ITEM --resume --relative-to BASE --report REPORT` would run
    /// it; its exit status.
    private func run(_ item: QueueItem, number: Int) async -> Int32 {
        var loader = JobFileLoader(params: item.params)
        loader.baseDirectory = item.baseDirectory
        loader.checksExpressionsOnServer = !item.checkedAtSubmit
        confinement.apply(to: &loader)
        let opened: RunOpening
        do {
            let file = try item.load(with: loader)
            opened = try RunOpening.open(file, resume: true, fence: item.fence, params: item.params) { params in
                var reloader = loader
                reloader.params = params
                return try item.load(with: reloader)
            }
        } catch let error as JobFileError {
            Self.append(error.rendered + "\n", to: item.logPath)
            return ExitStatus.invalid
        } catch let error as RunOpeningError {
            Self.append("error: \(item.path): \(error)\nnothing was run\n", to: item.logPath)
            return error.isInvalid ? ExitStatus.invalid : ExitStatus.failed
        } catch {
            Self.append("error: \(item.path): \(error)\nnothing was run\n", to: item.logPath)
            return ExitStatus.failed
        }
        if let continuation = opened.continuation { Self.append("resuming run \(continuation.runID)\n", to: item.logPath) }
        let run = opened.makeRun(maxConcurrent: maxConcurrentJobs, params: item.params)
        let stoppedEarly = state.withLock { state in
            state.runs[number] = run
            return state.stopped.contains(number)
        }
        if stoppedEarly { run.cancel() }
        let report = await run.run()
        do {
            try report.writeJSON(to: item.reportPath)
        } catch {
            Self.append("error: could not write the report \(item.reportPath): \(error.localizedDescription)\n", to: item.logPath)
            return ExitStatus.failed
        }
        Self.append("run \(report.runID.map(String.init) ?? "?") ended \(report.status.rawValue)\n", to: item.logPath)
        switch report.status {
        case .ok: return ExitStatus.ok
        case .failed: return ExitStatus.failed
        case .cancelled: return ExitStatus.interrupted
        }
    }

    /// Appends `text` to the file at `path` (made when missing).
    private static func append(_ text: String, to path: String) {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        try? handle.close()
    }
}
