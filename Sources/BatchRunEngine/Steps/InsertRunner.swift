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
                parts = try environment.parts ?? FeedParts.list(pattern: pattern, remote: step.remote, confinement: step.confinement,
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
            let reader = Thread {
                #if os(Linux)
                // A lower priority (nice 10) for this thread alone (Linux keeps the nice value per
                // thread; 0 names the calling one): the reader is always runnable, and on a busy
                // machine it held a core while the writer, woken by each of a batch's round trips,
                // and a local PostgreSQL server waited for one. Measured on the 1,000,000-row
                // import into PostgreSQL: median 4.59 s against 5.18 s; on SQLite 1.47 s against 1.50 s.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                #endif
                if let parts {
                    Self.read(step, parts: parts, entity: entity, resumeAt: resumeAt, positions: checkpoints, into: pipe,
                              batchSize: batchSize, watch: watch, prefetch: prefetch)
                } else {
                    Self.read(step, entity: entity, feedName: feedName, resumeAt: resumeAt, positions: checkpoints, into: pipe,
                              batchSize: batchSize, watch: watch, prefetch: prefetch)
                }
            }
            reader.name = "batchrun.feed.\(environment.job)"
            reader.start()
            defer { pipe.close() }
            var writer = InsertWriter(environment: environment, context: context,
                                      place: FeedPlace(feedName: feedName, inline: step.isInline),
                                      recording: environment.parts == nil ? parts : nil)
            if step.replace {
                try writer.hotSwap(from: pipe, context: context, report: &report)
            } else {
                try writer.writeBatches(from: pipe, context: context, report: &report)
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

    private static func message(_ error: any Error, feedName: String) -> String {
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
            guard try readBatches(&batcher, position: positions ? { $0 } : nil, rejectedBefore: 0, source: nil, into: pipe,
                                  batchSize: batchSize, budget: budget, prefetch: prefetch) else { return }
            _ = pipe.put(.end(rejected: batcher.rejectedCount))
        } catch {
            batcher.abandon()
            _ = pipe.put(.failure(message(error, feedName: batcher.feedName), rejected: batcher.rejectedCount))
        }
    }

    /// Puts `batcher`'s batches in the pipe until its feed ends (then finishes it: its rejected
    /// rows put in place); false when the writer stopped taking them. `position` makes a batch's
    /// checkpoint from the batcher's position (nil: none); `rejectedBefore`: rows rejected by
    /// earlier parts; `source`: the part the rows come from, for the writer's messages.
    private static func readBatches(_ batcher: inout FeedBatcher, position: ((StepPosition) -> StepPosition?)?, rejectedBefore: Int,
                                    source: String?, into pipe: BatchPipe, batchSize: Int, budget: ItemBudget?,
                                    prefetch: ((RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?) throws -> Bool {
        while true {
            var batch = RowBatch(rows: batchSize, cellsPerRow: batcher.layouts.first?.columns.count ?? 0)
            let more = try batcher.fill(&batch, limit: batchSize)
            try budget?.spend(rows: batch.count)
            if !batch.isEmpty, !pipe.put(.batch(batch, layouts: batcher.layouts, rejected: rejectedBefore + batcher.rejectedCount,
                                                position: position.flatMap { make in batcher.position.flatMap(make) },
                                                prefetched: prefetch?(batch, batcher.layouts), source: source)) {
                batcher.abandon()
                return false
            }
            if !more { break }
        }
        try batcher.finish()
        return true
    }

    /// The reading thread of a feed in parts: each part from where the step stands (the part
    /// and position of `resumeAt`) to the last, one after the other, as one feed. A batch holds
    /// rows of one part; its checkpoint names the part and the position in it. A part that is
    /// no longer what the run listed is refused before a row of it is read.
    private static func read(_ step: InsertStep, parts: [FeedPart], entity: Entity, resumeAt: StepPosition?, positions: Bool,
                             into pipe: BatchPipe, batchSize: Int, watch: FeedWatch,
                             prefetch: ((RowBatch, [FeedBatcher.Layout]) -> PrefetchedRows?)?) {
        var first = 0
        var within: FeedPosition?
        if case .part(let position)? = resumeAt {
            first = position.part
            within = position.feed
        }
        let total = parts.reduce(Int64(0)) { $0 + $1.size }
        var before = parts.prefix(first).reduce(Int64(0)) { $0 + $1.size }
        var rejected = 0
        var name = displayPath(step.glob?.pattern ?? "")
        var open: FeedBatcher?
        do {
            for index in first..<parts.count {
                let part = parts[index]
                name = displayPath(part.name)
                let resuming = index == first ? within : nil
                if resuming == nil, step.remote == nil,
                   let change = part.changes(now: FeedParts.localPart(part.name, confinement: step.confinement)) {
                    throw FeedFailure(message: "feed part \(name) changed since the run listed its parts (\(change)); "
                        + "run without --resume to list the parts again")
                }
                open = try FeedBatcher(step: step.reading(part: part), entity: entity, feedName: name,
                                       resumeAt: resuming.map(StepPosition.feed), watch: watch)
                let bytesBefore = before
                let position: ((StepPosition) -> StepPosition?)? = positions ? { position in
                    guard case .feed(let feed) = position else { return nil }
                    return .part(PartPosition(part: index, feed: feed, bytesBefore: bytesBefore, bytesTotal: total))
                } : nil
                guard try readBatches(&open!, position: position, rejectedBefore: rejected, source: name, into: pipe,
                                      batchSize: batchSize, budget: watch.budget, prefetch: prefetch) else { return }
                rejected += open!.rejectedCount
                open = nil
                before += part.size
            }
            _ = pipe.put(.end(rejected: rejected))
        } catch {
            open?.abandon()
            _ = pipe.put(.failure(message(error, feedName: name), rejected: rejected + (open?.rejectedCount ?? 0)))
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
