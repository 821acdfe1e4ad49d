import Foundation
import GRDB

/// The coordinator: owns the SQLite file (WAL), the model, one serialized writer and
/// pooled snapshot readers.
///
/// Opening a store creates the file and its folder if missing, creates missing tables and
/// indexes, and verifies existing tables; nothing is created when any table lacks a column.
///
/// ```swift
/// let store = try Store(path: "var/nightly.sqlite", model: model)
/// let count = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Session") }
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    /// GRDB's pool: `read` gives a WAL snapshot, `write` the one serialized writer.
    public let pool: DatabasePool

    public init(path: String, model: Model, busyTimeout: Double = 5) throws {
        self.path = path
        self.model = model
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: error.localizedDescription)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        try pool.write { db in
            try Self.verify(model: model, in: db)
            for statement in SchemaSQL.statements(for: model) {
                try db.execute(sql: statement)
            }
        }
    }

    /// Checks that every existing table has every declared column; throws before anything is created.
    static func verify(model: Model, in db: Database) throws {
        var mismatches: [(entity: String, table: String, missing: [String])] = []
        for entity in model.entities where try db.tableExists(entity.tableName) {
            let existing = Set(try db.columns(in: entity.tableName).map { $0.name.lowercased() })
            let missing = entity.columnNames.filter { !existing.contains($0.lowercased()) }
            if !missing.isEmpty { mismatches.append((entity.name, entity.tableName, missing)) }
        }
        if !mismatches.isEmpty { throw StoreError.schemaMismatch(mismatches) }
    }
}
