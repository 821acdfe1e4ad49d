@_spi(BatchRunPackage) import BatchRunStore
import BatchRunContext
import BatchRunFeeds
import Foundation

/// Runs an `insert`: a thread of its own reads and converts the feed into batches of typed
/// cells while the job's thread writes them, each batch one transaction (the whole feed one
/// transaction for `replace: true`), binding each row to a prepared statement reused for the
/// batch. A row that collides with an existing one on its primary key or a unique constraint
/// is a constraint conflict, resolved by the merge policy and reported.
package enum InsertRunner {
    package static func run(_ step: InsertStep, in environment: StepEnvironment, context: isolated Context) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: .insert, entity: environment.entity.name)
        let feedName: String
        switch step.source {
        case .rows: feedName = "rows"
        case .file(let path, _): feedName = displayPath(path)
        case .parts(let pattern, _, _): feedName = displayPath(pattern)
        }
        do {
            let pipe = BatchPipe()
            let entity = environment.entity, batchSize = environment.batchSize
            if environment.resumeAt == .done { return report }   // a hot swap that committed in an earlier attempt
            let resumeAt = environment.resumeAt, checkpoints = environment.checkpoint != nil, watch = environment.feedWatch
            // A feed in parts: the list an earlier attempt recorded, or listed now (and recorded
            // with the first batch).
            let parts: [FeedPart]?
            if case .parts(let pattern, _, _) = step.source {
                parts = try environment.parts ?? step.listedParts ?? FeedParts.list(pattern: pattern, remote: step.remote, confinement: step.confinement,
                                                                watch: watch)
            } else {
                parts = nil
            }
            // Batches that may collide with stored rows have them read ahead on the feed's thread,
            // from a snapshot (see `PrefetchedRows`): not for a hot swap (it deletes every row
            // first), inside an atomic job (a snapshot does not see its uncommitted writes), where
            // writers lock only their rows (others may change them at any time), or for an entity
            // with unique columns besides its key (a batch may then change or delete a row whose
            // key is outside its own: the row it collided with on such a column).
            let prefetches = !step.replace && context.canReadAhead
                && entity.primaryKey.count == 1 && entity.uniqueColumnSets.count == 1
            let prefetch: (@Sendable (RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)? = prefetches ? { @Sendable (batch: RowBatch, layouts: [FeedBatcher.Layout]) -> PrefetchedRows? in
                context.readAhead(batch, columns: layouts.map(\.columns), of: entity)
            } : nil
            if let parts {
                let progress: PartsProgress? = if case .parts(let progress)? = resumeAt { progress } else { nil }
                PartsReader(step: step, parts: parts, progress: progress, entity: entity, pipe: pipe, batchSize: batchSize, watch: watch,
                            positions: checkpoints, prefetch: prefetch).start(threads: step.readers, name: "batchrun.feed.\(environment.job)")
            } else {
                let reader = Thread {
                    #if os(Linux)
                    // A lower priority (nice 10) for this thread alone (Linux keeps the nice value per
                    // thread; 0 names the calling one): the reader is always runnable, and on a busy
                    // machine it held a core while the writer, woken by each of a batch's round trips,
                    // and a local PostgreSQL server waited for one. Measured on the 1,000,000-row
                    // import into PostgreSQL: median 4.59 s against 5.18 s; on SQLite 1.47 s against 1.50 s.
                    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                    #endif
                    Self.read(step, entity: entity, feedName: feedName, resumeAt: resumeAt, positions: checkpoints, into: pipe,
                              batchSize: batchSize, watch: watch, prefetch: prefetch)
                }
                reader.name = "batchrun.feed.\(environment.job)"
                reader.start()
            }
            defer { pipe.close() }
            var writer = InsertWriter(environment: environment, context: context,
                                      place: FeedPlace(feedName: feedName, inline: step.isInline),
                                      parts: parts, recording: environment.parts == nil)
            if step.replace {
                try writer.hotSwap(from: pipe, context: context, report: &report)
            } else {
                try writer.writeBatches(from: pipe, context: context, writers: step.writers, report: &report)
            }
        } catch {
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepErrors.wrap(error, report: report, prefix: "insert \(environment.entity.name)", store: context.store, entity: environment.entity)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        return report
    }

    /// The reading thread: opens the feed (after `resumeAt`), fills batches until it ends,
    /// fails, or the writer stops. `positions`: each batch carries the position after it.
    private static func read(_ step: InsertStep, entity: Entity, feedName: String, resumeAt: StepPosition?, positions: Bool,
                             into pipe: BatchPipe, batchSize: Int, watch: FeedWatch,
                             prefetch: ((RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?) {
        let batcher: FeedBatcher
        do {
            batcher = try FeedBatcher(step: step, entity: entity, feedName: feedName, resumeAt: resumeAt, watch: watch)
        } catch {
            _ = pipe.put(.failure(Self.message(error, feedName: feedName), rejected: 0))
            return
        }
        read(batcher, positions: positions, into: pipe, batchSize: batchSize, budget: watch.budget, prefetch: prefetch)
    }

    /// A reader's failure as the step reports it: a feed's own message names its place already.
    static func message(_ error: any Error, feedName: String) -> String {
        switch error {
        case let failure as FeedFailure: return failure.message
        case let failure as FeedError: return failure.description
        default: return "\(feedName): \(error)"
        }
    }

    private static func read(_ batcher: FeedBatcher, positions: Bool, into pipe: BatchPipe, batchSize: Int, budget: ItemBudget?,
                             prefetch: ((RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?) {
        var batcher = batcher
        do {
            while true {
                var batch = RowBatch(rows: batchSize, cellsPerRow: batcher.layouts.first?.columns.count ?? 0)
                let more = try batcher.fill(&batch, limit: batchSize)
                try budget?.spend(rows: batch.count)
                if !batch.isEmpty, !pipe.put(.batch(batch, layouts: batcher.layouts, rejected: batcher.rejectedCount,
                                                    position: positions ? batcher.position : nil,
                                                    prefetched: prefetch?(batch, batcher.layouts))) {
                    batcher.abandon()
                    return
                }
                if !more { break }
            }
            try batcher.finish()
            _ = pipe.put(.end(rejected: batcher.rejectedCount))
        } catch {
            batcher.abandon()
            _ = pipe.put(.failure(message(error, feedName: batcher.feedName), rejected: batcher.rejectedCount))
        }
    }
}

/// Names a place in a feed for messages: `data/sessions.csv:1234`, or `inline row 2`.
struct FeedPlace: Sendable {
    var feedName: String
    package var inline: Bool

    func callAsFunction(_ line: Int) -> String {
        inline ? "inline row \(line)" : "\(feedName):\(line)"
    }
}
