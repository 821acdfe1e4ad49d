#if PostgreSQL
import BatchRunStore
import Foundation
import Synchronization

/// Keys for an import's rows, drawn from the integer key's identity sequence: on the batch's own
/// connection when none were drawn ahead, and, once the next batch's size is known (the feed is
/// read ahead of the writer), for that batch on another session while this one loads, so the
/// draw (a tenth of an import's server time) is off the import's path. Sequence values are not
/// transactional: drawn on any session they are this import's alone, and draws never overlap, so
/// keys still rise in feed order. Values drawn for rows that did not come are left unused, a gap
/// as a rolled-back insert leaves.
///
/// ```swift
/// let keys = PostgresKeyReserve(sequence: "public.flights_id_seq", side: sideSession)
/// let first = try keys.take(10_000, in: connection)   // drawn here
/// keys.prepare(10_000)                                // the next batch's, drawn meanwhile
/// ```
package final class PostgresKeyReserve {
    /// Runs `body` on a session of its own, outside any transaction (another thread calls it).
    package typealias SideSession = @Sendable (_ body: (any StoreConnection) throws -> Void) throws -> Void

    private let sequence: String
    private let side: SideSession?
    /// Keys drawn ahead, in the order drawn.
    private var reserve: ArraySlice<Int64> = []
    private var pending: Draw?
    /// False once a draw was not one run of consecutive values.
    private var drawsConsecutiveKeys = true

    package init(sequence: String, side: SideSession?) {
        self.sequence = sequence
        self.side = side
    }

    deinit {
        // The side session goes back to the store before the store may close.
        pending?.finished.wait()
    }

    /// `count` keys: those drawn ahead first, the rest drawn now on `connection`.
    package func take(_ count: Int, in connection: any StoreConnection) throws -> [Int64] {
        if let pending {
            pending.finished.wait()
            self.pending = nil
            if let drawn = pending.result.withLock({ $0 }) {
                reserve += drawn.keys
                drawsConsecutiveKeys = drawsConsecutiveKeys && drawn.consecutive
            }
        }
        var keys = Array(reserve.prefix(count))
        reserve = reserve.dropFirst(keys.count)
        if keys.count < count {
            let drawn = try Self.draw(count - keys.count, from: sequence, consecutive: drawsConsecutiveKeys, on: connection)
            keys += drawn.keys
            drawsConsecutiveKeys = drawsConsecutiveKeys && drawn.consecutive
        }
        return keys
    }

    /// Starts drawing keys for `count` rows to come, on the side session; a draw that fails
    /// leaves `take` to draw them itself.
    package func prepare(_ count: Int) {
        let missing = count - reserve.count
        guard let side, pending == nil, missing > 0 else { return }
        let draw = Draw()
        pending = draw
        let sequence = sequence, consecutive = drawsConsecutiveKeys
        Thread.detachNewThread {
            defer { draw.finished.signal() }
            try? side { connection in
                let drawn = try Self.draw(missing, from: sequence, consecutive: consecutive, on: connection)
                draw.result.withLock { $0 = drawn }
            }
        }
    }

    /// A draw on the side session: its keys once `finished` is signalled (none when it failed).
    private final class Draw: Sendable {
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<(keys: [Int64], consecutive: Bool)?>(nil)
    }

    /// `count` values of `sequence` in one query. Usually they are consecutive (no other session
    /// drew meanwhile, the sequence steps by 1): then their lowest, highest and count say which
    /// they are (10,000 keys of a row each took 5-10 ms to send and decode; this takes 3.7 ms,
    /// what `nextval` itself costs). When they are not, those values are left unused and the keys
    /// come as runs of consecutive values, a run that is not consecutive (a sequence stepping by
    /// more than 1) listed; `consecutive` false asks for runs straight away.
    private static func draw(_ count: Int, from sequence: String, consecutive: Bool,
                             on connection: any StoreConnection) throws -> (keys: [Int64], consecutive: Bool) {
        let nextValues = "SELECT nextval(\(SQL.literal(sequence))::regclass) AS k FROM generate_series(1, ?)"
        if consecutive {
            let drawn = try rows("SELECT min(k), max(k), count(*) FROM (\(nextValues)) AS drawn", [.integer(Int64(count))], on: connection)
            if let first = drawn.first?[0].int64, let last = drawn.first?[1].int64, last - first + 1 == Int64(count) {
                return (Array(first...last), true)
            }
        }
        let runs = try rows("""
            SELECT min(k), max(k), CASE WHEN max(k) - min(k) + 1 = count(*) THEN NULL ELSE string_agg(k::text, ',') END
            FROM (SELECT k, k - row_number() OVER () AS run FROM (\(nextValues)) AS drawn) AS numbered
            GROUP BY run ORDER BY 1
            """, [.integer(Int64(count))], on: connection)
        var keys: [Int64] = []
        keys.reserveCapacity(count)
        for run in runs {
            if let listed = run[2].string {
                keys += listed.split(separator: ",").compactMap { Int64($0) }
            } else if let first = run[0].int64, let last = run[1].int64 {
                keys += first...last
            }
        }
        guard keys.count == count else { throw StoreError.cannotOpen(path: sequence, reason: "drew \(keys.count) of \(count) keys") }
        return (keys, false)
    }

    /// A read of the key's sequence (its name, a draw): on the batch's own session the
    /// transaction stays fresh, so the COPY after it needs no savepoint
    /// (`PostgresStoreConnection.rowsKeepingFresh`).
    package static func rows(_ sql: String, _ values: [StoreValue], on connection: any StoreConnection) throws -> [[StoreValue]] {
        if let session = connection as? PostgresStoreConnection { return try session.rowsKeepingFresh(sql, values) }
        return try connection.rows(sql, SQLArguments(values))
    }
}
#endif
