import Foundation
import GRDB

/// Runs an `insert`: records from inline rows or a streamed feed, converted to the columns'
/// types, written in batches with one reused prepared statement per column set.
/// Constraint conflicts are resolved in SQL by the merge policy.
public enum InsertRunner {
    public static func run(_ step: InsertStep, in environment: StepEnvironment, access: some StoreAccess) throws -> StepReport {
        var run = InsertRun(step: step, environment: environment)
        do {
            if step.replace {
                // Hot swap: one transaction deletes the old rows and writes the new ones.
                try access.write { db in
                    try db.execute(sql: "DELETE FROM \(SQL.quote(environment.entity.tableName))")
                    run.report.rows.deleted = db.changesCount
                    let batchAccess = TransactionAccess(db: db)
                    try run.writeAll(access: batchAccess)
                }
                run.report.batches = BatchCounts(committed: 1)
            } else {
                try run.writeAll(access: access)
            }
            try run.finishRejected()
        } catch {
            run.abandonRejected()
            run.report.runSeconds = Date().timeIntervalSince(run.started)
            if var stepError = error as? StepError {
                stepError.report = run.report
                throw stepError
            }
            throw StepError(StepErrors.describe(error), report: run.report)
        }
        run.report.runSeconds = Date().timeIntervalSince(run.started)
        return run.report
    }
}

/// The state of one insert step while it runs.
struct InsertRun {
    let step: InsertStep
    let environment: StepEnvironment
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

    init(step: InsertStep, environment: StepEnvironment) {
        self.step = step
        self.environment = environment
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

    mutating func writeAll(access: some StoreAccess) throws {
        var source = try makeSource()
        var batch: [PendingRow] = []
        batch.reserveCapacity(environment.batchSize)
        while let record = try nextRecord(&source) {
            guard let row = try convert(record) else { continue }
            batch.append(row)
            if batch.count >= environment.batchSize {
                try write(batch, access: access)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try write(batch, access: access) }
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
        let message = "\(feedName):\(record.line): \(reason)"
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
            throw StepError("\(feedName):\(record.line): field\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) match"
                + "\(unknown.count == 1 ? "es" : "") no column of \(entity.name) (columns: \(entity.columnNames.joined(separator: ", "))); "
                + "map them with columns: { FIELD: COLUMN } or drop them with columns: { FIELD: null }", report: report)
        }
        layouts[record.fields] = layout
        return layout
    }

    private mutating func write(_ batch: [PendingRow], access: some StoreAccess) throws {
        if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
        var counts = (inserted: 0, updated: 0, conflicts: 0)
        do {
            try access.write { db in
                counts = (0, 0, 0)
                for row in batch {
                    let statement = try db.cachedStatement(sql: insertSQL(columns: row.columns))
                    let before = db.lastInsertedRowID
                    do {
                        try statement.execute(arguments: StatementArguments(row.values))
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                        throw StepError("\(feedName):\(row.line): constraint conflict under merge policy \(environment.mergePolicy.rawValue): \(error.message ?? "constraint failed")", report: report)
                    }
                    if db.changesCount == 0 {
                        counts.conflicts += 1
                    } else if db.lastInsertedRowID != before || environment.mergePolicy == .error {
                        counts.inserted += 1
                    } else {
                        counts.updated += 1
                        counts.conflicts += 1
                    }
                }
            }
        } catch {
            report.batches.rolledBack += 1
            throw error
        }
        report.rows.inserted += counts.inserted
        report.rows.updated += counts.updated
        report.conflicts += counts.conflicts
        report.batches.committed += 1
        environment.progress(report.rows)
    }

    /// `INSERT` for a column set; not-null columns with a default get it for a NULL value.
    func insertSQL(columns: [String]) -> String {
        let entity = environment.entity
        let table = SQL.quote(entity.tableName)
        let placeholders = columns.map { name -> String in
            if let column = entity.column(named: name), column.notNull, let literal = column.defaultLiteral {
                return "coalesce(?, \(literal))"
            }
            return "?"
        }
        let values = "(\(SQL.quoteList(columns))) VALUES (\(placeholders.joined(separator: ", ")))"
        let updatable = columns.filter { !entity.primaryKey.contains($0) }
        switch environment.mergePolicy {
        case .error:
            return "INSERT INTO \(table) \(values)"
        case .overwrite:
            return "INSERT OR REPLACE INTO \(table) \(values)"
        case .rollback:
            return "INSERT INTO \(table) \(values) ON CONFLICT DO NOTHING"
        case .objectTrump, .recompute:
            guard !updatable.isEmpty else { return "INSERT INTO \(table) \(values) ON CONFLICT DO NOTHING" }
            let set = updatable.map { "\(SQL.quote($0)) = excluded.\(SQL.quote($0))" }.joined(separator: ", ")
            return "INSERT INTO \(table) \(values) ON CONFLICT DO UPDATE SET \(set)"
        case .storeTrump:
            guard !updatable.isEmpty else { return "INSERT INTO \(table) \(values) ON CONFLICT DO NOTHING" }
            let set = updatable.map { "\(SQL.quote($0)) = coalesce(\(SQL.quote($0)), excluded.\(SQL.quote($0)))" }
                .joined(separator: ", ")
            return "INSERT INTO \(table) \(values) ON CONFLICT DO UPDATE SET \(set)"
        }
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
