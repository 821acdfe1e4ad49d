import BatchRunStore
import Foundation
import Synchronization

/// How much one item may take in a confined worker (JOBFILE.md section 15): `worker
/// --max-item-time DURATION`, `--max-rows N` (rows read from its feeds and written to its
/// outputs), `--max-bytes SIZE` (bytes read from its feeds, after decompression, and written to
/// its outputs). Nil: no limit.
///
/// ```swift
/// let limits = ItemLimits(seconds: 600, rows: 10_000_000, bytes: 1 << 30)
/// ```
package struct ItemLimits: Codable, Sendable, Equatable {
    package var seconds: Double?
    package var rows: Int64?
    package var bytes: Int64?

    package init(seconds: Double? = nil, rows: Int64? = nil, bytes: Int64? = nil) {
        self.seconds = seconds
        self.rows = rows
        self.bytes = bytes
    }

    package var isEmpty: Bool { seconds == nil && rows == nil && bytes == nil }
}

/// What one run of an item has spent of its `ItemLimits`, shared by all its jobs' threads: each
/// feed's bytes and rows and each output's are added as they go, and the first limit passed
/// stays the reason the run ends `failed` (every job that spends after it fails too; the time
/// limit stops the run as a cancel does).
///
/// ```swift
/// let budget = ItemBudget(ItemLimits(rows: 1_000))
/// try budget.spend(rows: 600)
/// try budget.spend(rows: 600)   // throws ItemLimitReached: "... --max-rows 1000 ..."
/// ```
package final class ItemBudget: Sendable {
    package let limits: ItemLimits
    private let rows = Atomic<Int64>(0)
    private let bytes = Atomic<Int64>(0)
    private let started = ContinuousClock.now
    private let reason = Mutex<ItemLimitReached?>(nil)

    package init(_ limits: ItemLimits) {
        self.limits = limits
    }

    /// The limit that ended the run, once one was passed.
    package var reached: ItemLimitReached? { reason.withLock { $0 } }

    /// Adds `count` rows; throws once more than `--max-rows` were taken (or another limit was).
    package func spend(rows count: Int) throws(ItemLimitReached) {
        let total = rows.add(Int64(count), ordering: .relaxed).newValue
        if let limit = limits.rows, total > limit {
            throw trip(ItemLimitReached("this worker's --max-rows \(limit) was reached (rows read from feeds and written to outputs)"))
        }
        try check()
    }

    /// Adds `count` bytes; throws once more than `--max-bytes` were taken (or another limit was).
    package func spend(bytes count: Int) throws(ItemLimitReached) {
        let total = bytes.add(Int64(count), ordering: .relaxed).newValue
        if let limit = limits.bytes, total > limit {
            throw trip(ItemLimitReached("this worker's --max-bytes \(limit) was reached (bytes read from feeds, decompressed, and written to outputs)"))
        }
        try check()
    }

    /// Throws when the run went past `--max-item-time`, or a limit was reached before.
    package func check() throws(ItemLimitReached) {
        if let reached { throw reached }
        if let seconds = limits.seconds, ContinuousClock.now - started > .seconds(seconds) { throw timeUp() }
    }

    /// Records that the run went past `--max-item-time`; the reason to throw.
    package func timeUp() -> ItemLimitReached {
        trip(ItemLimitReached("this worker's --max-item-time \(DurationFormat.seconds.string(limits.seconds ?? 0)) was reached"))
    }

    private func trip(_ limit: ItemLimitReached) -> ItemLimitReached {
        reason.withLock { reason in
            if reason == nil { reason = limit }
            return reason!
        }
    }
}

/// Why a confined worker's item was stopped: the limit it reached. The item ends `failed`.
package struct ItemLimitReached: BatchRunError, Equatable {
    package let message: String

    package var code: String { "worker.limit" }
    package var description: String { message }

    package init(_ message: String) {
        self.message = message
    }
}
