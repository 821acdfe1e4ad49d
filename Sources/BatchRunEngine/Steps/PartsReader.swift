@_spi(BatchRunPackage) import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation
import Synchronization

/// The reading side of an insert from a feed in parts (section 17): `parallel` threads, each
/// taking the next part not done (in name order) and reading it whole into the step's pipe,
/// from where the step's progress says it goes on; each batch names its part, and a part's
/// end is put after its last batch (`BatchPipe.Item.partEnd`). The last thread to end puts the
/// feed's end; the first to fail puts its failure, and the others stop when the writer closes
/// the pipe. A part not begun that is no longer as the run listed it is refused before a row
/// of it is read.
///
/// ```swift
/// PartsReader(step: step, parts: parts, progress: progress, entity: entity, pipe: pipe, batchSize: 1_000,
///             watch: watch, positions: true, prefetch: nil).start(threads: 4, name: "batchrun.feed.load")
/// ```
final class PartsReader: Sendable {
    private let step: InsertStep
    private let parts: [FeedPart]
    private let progress: PartsProgress?
    private let entity: Entity
    private let pipe: BatchPipe
    private let batchSize: Int
    private let watch: FeedWatch
    private let positions: Bool
    private let prefetch: (@Sendable (RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?
    /// Parts not yet taken (in order), threads still reading, and whether one failed.
    private let state: Mutex<(queue: [Int], running: Int, failed: Bool)>

    init(step: InsertStep, parts: [FeedPart], progress: PartsProgress?, entity: Entity, pipe: BatchPipe, batchSize: Int,
         watch: FeedWatch, positions: Bool, prefetch: (@Sendable (RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?) {
        self.step = step
        self.parts = parts
        self.progress = progress
        self.entity = entity
        self.pipe = pipe
        self.batchSize = batchSize
        self.watch = watch
        self.positions = positions
        self.prefetch = prefetch
        let queue = parts.indices.filter { !(progress?.isDone($0) ?? false) }
        state = Mutex((queue, 0, false))
    }

    /// Starts up to `threads` reading threads (none when every part is done: the end is put at once).
    func start(threads: Int, name: String) {
        let count = state.withLock { state in
            state.running = min(threads, state.queue.count)
            return state.running
        }
        guard count > 0 else {
            _ = pipe.put(.end(rejected: 0))
            return
        }
        for index in 0..<count {
            let thread = Thread { [self] in
                #if os(Linux)
                // As the one feed's reader (`InsertRunner`): below the writer and the server.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                #endif
                work()
            }
            thread.name = count == 1 ? name : "\(name).\(index + 1)"
            thread.start()
        }
    }

    /// One thread: parts until none is left, the writer stops, or one fails.
    private func work() {
        // A part is begun only while the writer takes batches: once it stopped (a failed batch, a
        // cancel), no further part is opened, requested or has its rejected rows touched.
        parts: while !pipe.isClosed, let part = state.withLock({ $0.failed || $0.queue.isEmpty ? nil : $0.queue.removeFirst() }) {
            switch read(part) {
            case .done:
                continue parts
            case .stopped:
                break parts
            case .failed(let message, let rejected):
                let first = state.withLock { state in
                    defer { state.failed = true }
                    return !state.failed
                }
                if first { _ = pipe.put(.failure(message, rejected: rejected)) }
                break parts
            }
        }
        let last = state.withLock { state -> Bool in
            state.running -= 1
            return state.running == 0 && !state.failed
        }
        if last { _ = pipe.put(.end(rejected: 0)) }
    }

    private enum Outcome {
        case done, stopped
        case failed(String, rejected: Int)
    }

    /// Reads part `index` whole into the pipe, then puts its end.
    private func read(_ index: Int) -> Outcome {
        let part = parts[index]
        let name = displayPath(part.name)
        let resumeAt = progress?.position(of: index)
        var batcher: FeedBatcher?
        var reported = 0
        do {
            if resumeAt == nil, step.remote == nil,
               let change = part.changes(now: FeedParts.localPart(part.name, confinement: step.confinement)) {
                // A fan-out part's item reads the part as `submit` listed it.
                throw FeedFailure(message: step.listedParts != nil
                    ? "feed part \(name) changed since its batch was submitted (\(change)); put it back as it was and retry "
                        + "the item (batchrun retry QUEUE ID), or submit the batch again"
                    : "feed part \(name) changed since the run listed its parts (\(change)); run without --resume to list the parts again")
            }
            batcher = try FeedBatcher(step: step.reading(part: part), entity: entity, feedName: name,
                                      resumeAt: resumeAt.map(StepPosition.feed), watch: watch)
            let mark = BatchPipe.PartMark(index: index, name: name)
            while true {
                var batch = RowBatch(rows: batchSize, cellsPerRow: batcher!.layouts.first?.columns.count ?? 0)
                let more = try batcher!.fill(&batch, limit: batchSize)
                try watch.budget?.spend(rows: batch.count)
                if !batch.isEmpty {
                    let rejected = batcher!.rejectedCount - reported
                    reported = batcher!.rejectedCount
                    guard pipe.put(.batch(batch, layouts: batcher!.layouts, rejected: rejected,
                                          position: positions ? batcher!.position : nil,
                                          prefetched: prefetch?(batch, batcher!.layouts), part: mark)) else {
                        batcher!.abandon()
                        return .stopped
                    }
                }
                if !more { break }
            }
            try batcher!.finish()
            return pipe.put(.partEnd(index: index, rejected: batcher!.rejectedCount - reported)) ? .done : .stopped
        } catch {
            batcher?.abandon()
            return .failed(InsertRunner.message(error, feedName: name), rejected: (batcher?.rejectedCount ?? 0) - reported)
        }
    }
}
