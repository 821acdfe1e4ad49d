import Foundation
import GRDB

/// Runs an `insert`: records from inline rows or a streamed feed, converted to the columns'
/// types, written in batches (each one transaction) with one reused prepared statement per
/// column set. A row that collides with an existing one on its primary key or a unique
/// constraint is a constraint conflict, resolved by the merge policy and reported.
public enum InsertRunner {
    public static func run(_ step: InsertStep, in environment: StepEnvironment, context: isolated Context) throws -> StepReport {
        var run = InsertRun(step: step, environment: environment, store: context.store)
        do {
            if step.replace {
                try run.hotSwap(context: context)
            } else {
                try run.writeAll { run, batch in
                    var retries = 0
                    try environment.withRetries(retried: { retries += 1 }) {
                        try run.commit(batch, context: context, retried: retries)
                    }
                }
            }
            try run.finishRejected()
        } catch {
            run.abandonRejected()
            run.report.runSeconds = Date().timeIntervalSince(run.started)
            throw StepErrors.wrap(error, report: run.report, prefix: "insert \(environment.entity.name)", entity: environment.entity)
        }
        run.report.runSeconds = Date().timeIntervalSince(run.started)
        return run.report
    }
}

extension InsertRun {
    /// One batch in one transaction; its counts join the report only once it is committed.
    mutating func commit(_ batch: [PendingRow], context: isolated Context, retried: Int = 0) throws {
        if retried > 0 { report.retries += 1 }
        var counted = report
        do {
            try context.write { db -> ((), DidSave?) in
                var ids = SaveIDs()
                counted = try write(batch, in: db, ids: &ids, counting: report)
                return ((), ids.didSave(sequence: context.store.nextSaveSequence(), savedBy: environment.job))
            }
        } catch {
            report.batches.rolledBack += 1
            throw failure(error)
        }
        report = counted
        report.batches.committed += 1
        environment.progress(report.rows)
    }

    /// Hot swap: one transaction deletes every row and writes the feed; readers see the old
    /// rows or the new ones, never a mix. Nothing is counted unless it commits.
    mutating func hotSwap(context: isolated Context) throws {
        var counted = report
        do {
            try context.write { db -> ((), DidSave?) in
                try db.execute(sql: "DELETE FROM \(SQL.quote(environment.entity.tableName))")
                counted.rows.deleted = db.changesCount
                var ids = SaveIDs()
                try writeAll { run, batch in
                    counted = try run.write(batch, in: db, ids: &ids, counting: counted)
                    counted.rows.rejected = run.report.rows.rejected   // rejects are counted as they are read
                }
                return ((), ids.didSave(sequence: context.store.nextSaveSequence(), savedBy: environment.job))
            }
        } catch {
            report.rows = RowCounts(rejected: counted.rows.rejected)
            report.batches.rolledBack += 1
            throw failure(error)
        }
        counted.rows.rejected = report.rows.rejected
        report = counted
        report.batches.committed += 1
        environment.progress(report.rows)
    }

    /// A conflict under `error` becomes the step's error, with its record in the report.
    private mutating func failure(_ error: any Error) -> any Error {
        guard let conflict = error as? RowConflict else { return error }
        report = Self.adding(conflict.error.conflict, to: report, entity: environment.entity)
        return StepError("\(conflict.place): \(conflict.error)", report: report, cause: conflict.error)
    }
}

/// A conflict under `error` at a feed row: the batch rolls back and the step fails there.
struct RowConflict: Error {
    var place: String
    var error: MergeConflictError
}

/// The IDs a batch inserted and updated, for its `DidSave`.
struct SaveIDs {
    var inserted: [ObjectID] = []
    var updated: [ObjectID] = []

    func didSave(sequence: UInt64, savedBy: String) -> DidSave? {
        guard let entity = (inserted.first ?? updated.first)?.entity else { return nil }
        return DidSave(sequence: sequence, savedBy: savedBy, inserted: inserted.isEmpty ? [:] : [entity: inserted],
                       updated: updated.isEmpty ? [:] : [entity: updated])
    }
}

/// The state of one insert step while it runs.
struct InsertRun {
    let step: InsertStep
    let environment: StepEnvironment
    let store: Store
    let started = Date()
    var report: StepReport
    let feedName: String
    let nulls: Set<String>
    /// Field layout (joined field names) to the column each field goes to (nil: dropped).
    var layouts: [[String]: [Column?]] = [:]
    var rejected: RejectedRows?

    /// One converted row: the columns it sets and their values.
    struct PendingRow {
        var line: Int
        var columns: [String]
        var values: [DatabaseValue]
    }

    init(step: InsertStep, environment: StepEnvironment, store: Store) {
        self.step = step
        self.environment = environment
        self.store = store
        report = StepReport(kind: "insert", entity: environment.entity.name)
        switch step.source {
        case .rows:
            feedName = "rows"
            nulls = Set(step.nulls ?? [])
        case .file(let path, let format):
            feedName = displayPath(path)
            nulls = Set(step.nulls ?? (format == .csv || format == .tsv ? [""] : []))
        }
    }

    /// Reads, converts and hands the feed to `write` in batches of `batch_size` rows.
    mutating func writeAll(_ write: (inout InsertRun, [PendingRow]) throws -> Void) throws {
        var source = try makeSource()
        var batch: [PendingRow] = []
        batch.reserveCapacity(environment.batchSize)
        while let record = try nextRecord(&source) {
            guard let row = try convert(record) else { continue }
            batch.append(row)
            if batch.count >= environment.batchSize {
                if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
                try write(&self, batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty {
            if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
            try write(&self, batch)
        }
    }

    private func makeSource() throws -> RecordSource {
        switch step.source {
        case .rows(let rows):
            return .inline(rows.enumerated().map { index, row in
                FeedRecord(line: index + 1, fields: row.map(\.field), values: row.map(\.value))
            }.makeIterator())
        case .file(let path, let format):
            return .feed(try FeedReaders.open(path: path, format: format, displayPath: feedName))
        }
    }

    private func nextRecord(_ source: inout RecordSource) throws -> FeedRecord? {
        switch source {
        case .inline(var iterator):
            let record = iterator.next()
            source = .inline(iterator)
            return record
        case .feed(var reader):
            do {
                let record = try reader.next()
                source = .feed(reader)
                return record
            } catch {
                throw StepError(error.description, report: report)
            }
        }
    }

    /// Where a record is, for messages: `data/sessions.csv:1234`, or `inline row 2`.
    func place(_ line: Int) -> String {
        if case .rows = step.source { return "inline row \(line)" }
        return "\(feedName):\(line)"
    }

    /// The record as a row to insert, or nil when it was rejected under `bad_rows: skip`.
    private mutating func convert(_ record: FeedRecord) throws -> PendingRow? {
        let layout = try columns(for: record)
        var columns: [String] = []
        var values: [DatabaseValue] = []
        columns.reserveCapacity(layout.count)
        values.reserveCapacity(layout.count)
        for (index, column) in layout.enumerated() {
            guard let column else { continue }
            var value = record.values[index]
            if case .text(let text) = value, nulls.contains(text) { value = .null }
            switch ValueConverter.convert(value, to: column.type) {
            case .success(let converted):
                if converted == .null && column.notNull && column.defaultLiteral == nil && !isRowidAlias(column) {
                    return try reject(record, "column \(column.name): missing value in a not null column")
                }
                columns.append(column.name)
                values.append(converted.databaseValue)
            case .failure(let problem):
                return try reject(record, "column \(column.name): \(problem.message)")
            }
        }
        return PendingRow(line: record.line, columns: columns, values: values)
    }

    private func isRowidAlias(_ column: Column) -> Bool {
        column.type == .integer && environment.entity.primaryKey == [column.name]
    }

    private mutating func reject(_ record: FeedRecord, _ reason: String) throws -> PendingRow? {
        let message = "\(place(record.line)): \(reason)"
        guard step.badRows == .skip, case .file(let path, _) = step.source else {
            throw StepError(message, report: report)
        }
        if rejected == nil { rejected = try RejectedRows(feedPath: path) }
        try rejected?.append(record, reason: reason)
        report.rows.rejected += 1
        return nil
    }

    /// Maps a record's fields to columns once per layout; unknown fields are an error naming them.
    private mutating func columns(for record: FeedRecord) throws -> [Column?] {
        if let known = layouts[record.fields] { return known }
        let entity = environment.entity
        var unknown: [String] = []
        let layout: [Column?] = record.fields.map { field in
            guard let target = step.column(forField: field) else { return nil }
            guard let name = target else { return nil }
            guard let column = entity.column(named: name) else {
                unknown.append(field)
                return nil
            }
            return column
        }
        if !unknown.isEmpty {
            throw StepError("\(place(record.line)): field\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) match"
                + "\(unknown.count == 1 ? "es" : "") no column of \(entity.name) (columns: \(entity.columnNames.joined(separator: ", "))); "
                + "map them with columns: { FIELD: COLUMN } or drop them with columns: { FIELD: null }", report: report)
        }
        layouts[record.fields] = layout
        return layout
    }

    /// Writes one batch inside `db`'s transaction; constraint conflicts are resolved by the
    /// merge policy and recorded. Returns `counts` with the batch added, for the caller to keep
    /// once the batch is committed.
    func write(_ batch: [PendingRow], in db: Database, ids: inout SaveIDs, counting counts: StepReport) throws -> StepReport {
        let writer = SaveWriter(db: db, store: store, entity: environment.entity, policy: environment.mergePolicy,
                                job: environment.job, readSequence: 0, recompute: nil)
        var counts = counts
        for row in batch {
            let outcome: (id: ObjectID?, inserted: Bool, conflict: MergeConflict?)
            do {
                outcome = try writer.insert(columns: row.columns, values: row.values)
            } catch let error as MergeConflictError {
                throw RowConflict(place: place(row.line), error: error)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw StepError("\(place(row.line)): \(error.message ?? "constraint failed")", report: report)
            }
            if let conflict = outcome.conflict { counts = Self.adding(conflict, to: counts, entity: environment.entity) }
            guard let id = outcome.id else { continue }
            if outcome.inserted {
                counts.rows.inserted += 1
                ids.inserted.append(id)
            } else {
                counts.rows.updated += 1
                ids.updated.append(id)
            }
        }
        return counts
    }

    static func adding(_ conflict: MergeConflict, to report: StepReport, entity: Entity) -> StepReport {
        var report = report
        report.conflicts += 1
        report.conflictRecords.append(conflict.record(entity: entity))
        return report
    }

    mutating func finishRejected() throws {
        if let rejected {
            try rejected.finish()
        } else if step.badRows == .skip, case .file(let path, _) = step.source {
            // No rejects this time: remove a stale file from an earlier run.
            try? FileManager.default.removeItem(atPath: RejectedRows.path(forFeed: path))
        }
    }

    func abandonRejected() {
        rejected?.abandon()
    }
}

/// Where records come from: inline rows or a feed reader.
enum RecordSource {
    case inline(IndexingIterator<[FeedRecord]>)
    case feed(any FeedReader)
}
