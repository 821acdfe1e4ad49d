import Foundation
import GRDB
import Synchronization
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore
import BatchRunSQLite

/// The import's multi-row statements and set-based conflict resolution: every row written as
/// fed across chunk boundaries, failing chunks retried row by row, and conflicts recorded as
/// the one-row path records them.
@Suite("Multi-row imports")
struct MultiRowImportTests {
    func run(_ yaml: String, feed: (name: String, text: String)? = nil, setUp: ((Database) throws -> Void)? = nil) async throws
        -> (RunReport, Store, URL)
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-multirow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if let feed { try feed.text.write(to: folder.appendingPathComponent(feed.name), atomically: true, encoding: .utf8) }
        let file = try JobFileLoader().load(text: yaml, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        if let setUp { try store.pool.write(setUp) }
        return (await JobFileRun(file: file, store: store).run(), store, folder)
    }

    static let model = """
        version: 1
        store: s.sqlite
        entities:
          Reading:
            columns: { id: integer primary key, sensor: text not null, value: real, note: text }

        """

    @Test("chunks: full statements, then power-of-two pieces for a short run")
    func chunkSizes() throws {
        let statements = SQLiteBulkLoader(entity: Entity(name: "T", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true), Column(name: "a", type: .text),
        ], primaryKey: ["id"]))
        let queue = try DatabaseQueue()
        queue.inDatabase { db in statements.use(SQLiteConnection(db)) }
        #expect(statements.rowsPerStatement(columns: 2) == SQLiteBulkLoader.maximumRows)
        var pieces: [Int] = []
        var left = 600
        while left > 0 {
            let next = statements.nextChunk(left, columns: 2)
            pieces.append(next)
            left -= next
        }
        #expect(pieces == [128, 128, 128, 128, 64, 16, 8])
        // A wide row: the parameter limit decides (32,766 by default; Debian's SQLite allows 250,000).
        let wide = 5000
        #expect(statements.rowsPerStatement(columns: wide) * wide <= statements.parameterLimit)
        #expect((statements.rowsPerStatement(columns: wide) + 1) * wide > statements.parameterLimit)
    }

    @Test("rows across chunk boundaries and the short last chunk are written as fed, keys given or assigned",
          arguments: [true, false])
    func chunkBoundaries(keysGiven: Bool) async throws {
        let rows = 1000   // batches of 600 and 400: 4 x 128 + 64 + 16 + 8, then 3 x 128 + 16
        let header = keysGiven ? "id,sensor,value,note\n" : "sensor,value,note\n"
        let text = header + (1...rows).map { id in
            (keysGiven ? "\(id + 10)," : "") + "s\(id),\(Double(id) / 2),\(id % 7 == 0 ? "" : "n\(id)")"
        }.joined(separator: "\n") + "\n"
        let (report, store, folder) = try await run(Self.model + """
            jobs:
              load:
                batch_size: 600
                steps:
                  - insert: { entity: Reading, from: feed.csv }
            """, feed: ("feed.csv", text)) { db in
            try db.execute(sql: "INSERT INTO Reading (id, sensor) VALUES (1, 'before'), (10, 'before')")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(report.jobs[0].status == .ok, "\(report.jobs[0].error ?? "")")
        #expect(report.jobs[0].rows.inserted == rows && report.jobs[0].batches.committed == 2)
        let written = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, sensor, value, note FROM Reading WHERE sensor != 'before' ORDER BY id")
        }
        #expect(written.count == rows)
        for (offset, row) in written.enumerated() {
            let id = offset + 1
            #expect(row["id"] as Int == id + 10)   // given, or assigned after the largest key (10)
            #expect(row["sensor"] as String == "s\(id)" && row["value"] as Double == Double(id) / 2)
            #expect(row["note"] as String? == (id % 7 == 0 ? nil : "n\(id)"))
        }
    }

    @Test("NULL spellings of a CSV feed: empty by default, only NA with nulls: [NA], none with nulls: []",
          arguments: [("", [nil, "NA"] as [String?]), ("nulls: [NA], ", ["", nil]), ("nulls: [], ", ["", "NA"])])
    func nullSpellings(option: String, notes: [String?]) async throws {
        let (report, store, folder) = try await run(Self.model + """
            jobs:
              load:
                steps:
                  - insert: { entity: Reading, \(option)from: feed.csv }
            """, feed: ("feed.csv", "id,sensor,note\n1,a,\n2,b,NA\n"))
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(report.jobs[0].status == .ok, "\(report.jobs[0].error ?? "")")
        let found = try await store.pool.read { db in try String?.fetchAll(db, sql: "SELECT note FROM Reading ORDER BY id") }
        #expect(found == notes)
    }

    @Test("a unique violation inside a multi-row chunk: the chunk goes row by row, the row is resolved, the rest inserted")
    func uniqueViolationInChunk() async throws {
        let rows = (2...301).map { id in
            "{ id: \(id), email: \(id == 150 ? "taken@x" : id == 200 ? "e199@x" : "e\(id)@x"), name: n\(id) }"
        }
        let (report, store, folder) = try await run("""
            version: 1
            store: s.sqlite
            entities:
              Person:
                columns: { id: integer primary key, email: text not null, name: text }
                unique: [[email]]
            jobs:
              load:
                merge_policy: object-trump
                batch_size: 1000
                steps:
                  - insert: { entity: Person, rows: [\(rows.joined(separator: ", "))] }
            """) { db in
            try db.execute(sql: "INSERT INTO Person VALUES (1, 'taken@x', 'old')")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let job = report.jobs[0]
        #expect(job.status == .ok, "\(job.error ?? "")")
        #expect(job.rows.inserted == 298 && job.rows.updated == 2 && job.conflicts == 2)
        // Row 150 met row 1 on its email; row 200 met row 199, inserted by the same chunk.
        #expect(report.conflicts.map { $0.key["id"] } == [.integer(1), .integer(199)])
        #expect(report.conflicts.allSatisfy { $0.kind == .constraint && $0.outcome == .keptOurs })
        let names = try await store.pool.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, name FROM Person").map { ($0[0] as Int, $0[1] as String) })
        }
        #expect(names.count == 299 && names[1] == "n150" && names[199] == "n200" && names[150] == nil && names[301] == "n301")
    }

    @Test("set-based conflict resolution records what the one-row path records", arguments: MergePolicy.allCases)
    func setBasedMatchesOneRow(policy: MergePolicy) async throws {
        // Rows 1...300 exist, some with NULLs; the feed changes them and adds 301...310.
        let setUp: @Sendable (Database) throws -> Void = { db in
            for id in 1...300 {
                try db.execute(sql: "INSERT INTO Reading VALUES (?, ?, ?, ?)",
                               arguments: [id, "s\(id)", id % 3 == 0 ? nil : Double(id), id % 4 == 0 ? nil : "old\(id)"])
            }
        }
        let feed: [KeyValuePairs<String, StoreValue>] = (1...310).map { (id: Int) in
            ["id": .integer(Int64(id)), "sensor": .text(id % 5 == 0 ? "s\(id)" : "t\(id)"),
             "value": id % 6 == 0 ? .null : .real(Double(id) + 0.5), "note": id % 8 == 0 ? .null : .text("new\(id)")]
        }
        try await expectSetBasedMatchesOneRow(policy: policy, model: Self.model, entity: "Reading", setUp: setUp, feed: feed)
    }

    @Test("a batch whose keys fill half their range is looked up with one range scan: the stored rows between its keys are neither reported nor changed",
          arguments: MergePolicy.allCases)
    func denseKeysLookedUpByRange(policy: MergePolicy) async throws {
        // Rows 1...200 exist; the feed has the odd keys up to 199 and new keys 201...220 (110
        // keys over 219: one range scan reads the even rows too).
        // The statements of the first store set up (the run's), traced from its writer connection.
        let traced = StatementTrace()
        let setUp: @Sendable (Database) throws -> Void = { db in
            for id in 1...200 { try db.execute(sql: "INSERT INTO Reading VALUES (?, ?, ?, ?)", arguments: [id, "s\(id)", Double(id), "old\(id)"]) }
            traced.install(on: db)
        }
        let feed: [KeyValuePairs<String, StoreValue>] = (Array(stride(from: 1, through: 199, by: 2)) + Array(201...220)).map { (id: Int) in
            ["id": .integer(Int64(id)), "sensor": .text("t\(id)"), "value": .real(Double(id) + 0.5), "note": .text("new\(id)")]
        }
        try await expectSetBasedMatchesOneRow(policy: policy, model: Self.model, entity: "Reading", setUp: setUp, feed: feed)
        let statements = traced.statements.filter { $0.contains("\"Reading\"") }
        // Found up front (on the writer, or read ahead on the feed's thread), so resolved
        // set-based: a few statements, not one a row.
        #expect(!statements.contains { $0.hasPrefix("SELECT") && $0.contains(" IN (") }, "\(statements)")
        #expect(statements.count < 20, "\(statements.count) statements: \(statements.prefix(30))")
    }

    @Test("a batch's stored rows: keys that fill half their range read with one range scan, others by IN lists; each key found, no other")
    func storedRowsLookUp() throws {
        let entity = Entity(name: "Reading", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true), Column(name: "sensor", type: .text),
        ], primaryKey: ["id"])
        let queue = try DatabaseQueue()
        let traced = StatementTrace()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Reading (id INTEGER PRIMARY KEY, sensor TEXT)")
            for id in 1...300 { try db.execute(sql: "INSERT INTO Reading VALUES (?, ?)", arguments: [id, "s\(id)"]) }
            traced.install(on: db)
        }
        func batch(_ keys: [Int]) -> RowBatch {
            var batch = RowBatch()
            for key in keys {
                batch.beginRow(line: key, layout: 0)
                batch.appendInteger(Int64(key))
                batch.append(.text("new"))
            }
            return batch
        }
        for (keys, scan) in [(Array(stride(from: 1, through: 199, by: 2)) + Array(201...220), "BETWEEN"),
                             (Array(stride(from: 1, through: 300, by: 5)) + [1_000_000], " IN (")] {
            let rows = batch(keys)
            let stored = try queue.read { db in
                try StoredRows.lookUp(rows, keyPositions: [[0]], of: entity, in: SQLiteConnection(db))
            }
            let statements = traced.statements.filter { $0.hasPrefix("SELECT \"id\"") }
            #expect(statements.count == 1 && statements[0].contains(scan), "\(statements)")
            traced.clear()
            for (row, key) in keys.enumerated() {
                let found = stored.row(matching: rows, cell: rows.cells(of: row).lowerBound)
                #expect(found.map { stored.values(ofRow: $0) } == (key <= 300 ? [.integer(Int64(key)), .text("s\(key)")] : nil), "key \(key)")
            }
        }
    }

    /// A job `load` importing `feed.csv` into `Reading` under object-trump, 100 rows a batch.
    static let loadInBatchesOf100 = """
        jobs:
          load:
            batch_size: 100
            merge_policy: object-trump
            steps:
              - insert: { entity: Reading, from: feed.csv }
        """

    @Test("stored rows read ahead are used only while current: batches whose keys overlap the batch before record the store as that batch left it",
          arguments: [20, 100])
    func rowsReadAheadStayCurrent(shift: Int) async throws {
        // Rows 1...400 hold 0. Twenty batches of 100 rows, batch b (from 1) with keys
        // (b - 1) * shift + 1 ... + 100 and value b: with a shift of 20 each key is in five batches,
        // so the rows read ahead for a batch (on the feed's thread, while the batch before is being
        // written) are stale for the keys both share, and must be read again; with 100 they never overlap.
        let traced = StatementTrace()
        let setUp: @Sendable (Database) throws -> Void = { db in
            for id in 1...400 { try db.execute(sql: "INSERT INTO Reading VALUES (?, 's', 0, NULL)", arguments: [id]) }
            traced.install(on: db)   // the writer's statements from here on
        }
        var lines = ["id,sensor,value"]
        var current = [Int: (value: Double, byJob: Bool)](uniqueKeysWithValues: (1...400).map { ($0, (0, false)) })
        var expected: [MergeConflictRecord] = []
        for batch in 1...20 {
            for id in ((batch - 1) * shift + 1)...((batch - 1) * shift + 100) {
                lines.append("\(id),s,\(batch)")
                if let stored = current[id] {
                    expected.append(MergeConflictRecord(
                        job: "load", entity: "Reading", key: ["id": .integer(Int64(id))], kind: .constraint, policy: .objectTrump,
                        outcome: .keptOurs, changedBy: stored.byJob ? "load" : MergeConflict.outsideThisRun,
                        properties: [.init(name: "value", original: .null, store: .real(stored.value), ours: .real(Double(batch)),
                                           resolved: .real(Double(batch)))]))
                }
                current[id] = (Double(batch), true)
            }
        }
        let (report, store, folder) = try await run(Self.model + Self.loadInBatchesOf100, feed: ("feed.csv", lines.joined(separator: "\n") + "\n"),
                                                    setUp: setUp)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(report.status == .ok, "\(report.jobs.map(\.error))")
        let mismatched = zip(Array(report.conflicts), expected).filter { $0 != $1 }
        #expect(report.conflicts.count == expected.count && mismatched.isEmpty,
                "\(report.conflicts.count) conflicts, \(expected.count) expected; first differing: \(String(describing: mismatched.first))")
        let values = try await store.pool.read { db in try Double.fetchAll(db, sql: "SELECT value FROM Reading ORDER BY id") }
        #expect(values == current.keys.sorted().map { current[$0]!.value })
        if shift == 100 {
            // Nothing but the step's own batches committed, none in another's range: the rows read
            // ahead were used, and the writer looked up none itself.
            let lookups = traced.statements.filter { $0.hasPrefix("SELECT") && $0.contains("BETWEEN") }
            #expect(lookups.isEmpty, "the writer read stored rows itself: \(lookups.count) times")
        }
    }

    @Test("stored rows are not read ahead for an entity with unique columns besides its key: the writer reads each batch's itself")
    func noReadAheadWithUniqueColumns() async throws {
        let traced = StatementTrace()
        let setUp: @Sendable (Database) throws -> Void = { db in
            for id in 1...500 { try db.execute(sql: "INSERT INTO Reading VALUES (?, ?, 0, NULL)", arguments: [id, "s\(id)"]) }
            traced.install(on: db)
        }
        let lines = ["id,sensor,value"] + (1...500).map { "\($0),s\($0),1" }
        let model = Self.model.replacingOccurrences(of: "sensor: text not null", with: "sensor: text not null unique")
        let (report, _, folder) = try await run(model + Self.loadInBatchesOf100, feed: ("feed.csv", lines.joined(separator: "\n") + "\n"),
                                                setUp: setUp)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(report.status == .ok && report.conflicts.count == 500)
        // (Not the probe for any stored row in the batch's key range, `SELECT 1 ... LIMIT 1`.)
        let lookups = traced.statements.filter { $0.hasPrefix("SELECT") && $0.contains("BETWEEN") && !$0.hasPrefix("SELECT 1 ") }
        #expect(lookups.count == 5, "\(lookups.count) lookups on the writer for 5 batches")
    }

    /// The SQL one connection runs, from the first `install` on.
    final class StatementTrace: Sendable {
        private let state = Mutex<(installed: Bool, statements: [String])>((false, []))

        var statements: [String] { state.withLock { $0.statements } }

        func clear() { state.withLock { $0.statements = [] } }

        func install(on db: Database) {
            guard state.withLock({ state in defer { state.installed = true }; return !state.installed }) else { return }
            db.trace { [self] event in
                if case .statement(let statement) = event { state.withLock { $0.statements.append(statement.sql) } }
            }
        }
    }

    @Test("set-based resolution with a NOT NULL default, a repeated key and rows leaving columns out", arguments: MergePolicy.allCases)
    func setBasedWithDefaultsAndRepeats(policy: MergePolicy) async throws {
        let model = """
            version: 1
            store: s.sqlite
            entities:
              Ticket:
                columns: { id: integer primary key, status: text not null default 'open', score: real, note: text }

            """
        let setUp: @Sendable (Database) throws -> Void = { db in
            for id in 1...50 {
                try db.execute(sql: "INSERT INTO Ticket VALUES (?, 'closed', ?, ?)", arguments: [id, -Double(id), id % 2 == 0 ? nil : "old"])
            }
        }
        // Overwrite's INSERT OR REPLACE stores 'open' where the feed gives NULL for status; under
        // the policies that update in place a NULL there fails the batch, so they get a value.
        let nullStatus: StoreValue = [.overwrite, .storeTrump, .rollback].contains(policy) ? .null : .text("n/a")
        var feed: [KeyValuePairs<String, StoreValue>] = (1...60).map { (id: Int) in
            switch id % 3 {
            case 0: ["id": .integer(Int64(id)), "status": nullStatus, "score": .real(-0.0), "note": .text("n\(id)")]
            case 1: ["id": .integer(Int64(id)), "note": .null]
            default: ["id": .integer(Int64(id)), "status": .text("done"), "score": .real(Double(id))]
            }
        }
        feed.append(["id": .integer(3), "status": .text("again"), "note": .null])
        feed.append(["id": .integer(4), "score": .real(1.5)])
        try await expectSetBasedMatchesOneRow(policy: policy, model: model, entity: "Ticket", setUp: setUp, feed: feed)
    }

    /// Runs `feed` as inline rows under `policy`, and the same rows one at a time through the
    /// one-row path (`SaveWriter.insert`) on a store set up the same way: the same conflicts,
    /// the same rows, the same failure.
    private func expectSetBasedMatchesOneRow(policy: MergePolicy, model: String, entity entityName: String, setUp: @escaping @Sendable (Database) throws -> Void,
                                             feed: [KeyValuePairs<String, StoreValue>]) async throws {
        let inline = feed.map { row in
            "{ " + row.map { "\($0.key): " + ($0.value == .null ? "null" : $0.value.description) }.joined(separator: ", ") + " }"
        }
        let (report, store, folder) = try await run(model + """
            jobs:
              load:
                merge_policy: \(policy.rawValue)
                batch_size: 400
                steps:
                  - insert: { entity: \(entityName), rows: [\(inline.joined(separator: ", "))] }
            """, setUp: setUp)
        defer { try? FileManager.default.removeItem(at: folder) }

        let reference = try Store(path: folder.appendingPathComponent("reference.sqlite").path, model: store.model)
        try await reference.pool.write(setUp)
        let entity = store.model[entityName]!
        let expected: [MergeConflictRecord]
        var failure: String?
        do {
            expected = try await reference.pool.write { db in
                let writer = SaveWriter(db: SQLiteConnection(db), store: reference, entity: entity, policy: policy, job: "load", readSequence: 0,
                                        recompute: nil)
                var records: [MergeConflictRecord] = []
                for row in feed {
                    if let conflict = try writer.insert(columns: row.map(\.key), values: row.map(\.value)).conflict {
                        records.append(conflict.record(entity: entity))
                    }
                }
                return records
            }
        } catch let error as MergeConflictError {
            expected = []
            failure = "inline row 1: \(error)"
        } catch let error as DatabaseError {
            expected = []   // a NULL in a NOT NULL column: the batch fails with SQLite's message
            failure = error.message
        }
        let rows = "SELECT * FROM \(entity.tableName) ORDER BY id"
        let ours = try store.pool.read { db in try Row.fetchAll(db, sql: rows) }
        let before = try await reference.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(entity.tableName)") }
        if let failure {
            // The first conflict stops the batch under `error`, as a NULL in a NOT NULL column does: the same message, nothing written.
            #expect(report.jobs[0].status == .failed)
            #expect(report.jobs[0].error?.contains(failure) == true, "\(report.jobs[0].error ?? "")")
            #expect(ours.count == before)
            return
        }
        #expect(report.jobs[0].status == .ok, "\(report.jobs[0].error ?? "")")
        #expect(!expected.isEmpty && report.conflicts == expected)
        let theirs = try reference.pool.read { db in try Row.fetchAll(db, sql: rows) }
        #expect(ours == theirs)
    }
}
