@testable import BatchRunKit
import BatchRunSQLite
import Foundation
import Synchronization
import Testing

/// How many statements a fetch by many IDs runs, counted by SQLite's trace.
@Suite("Fetching many IDs")
struct ExistingObjectsStatementTests {
    /// Statements seen by the trace, from any thread.
    final class Statements: Sendable {
        let seen = Mutex<[String]>([])
        func selects(of table: String) -> [String] {
            seen.withLock { $0.filter { $0.contains("SELECT") && $0.contains("\"\(table)\"") } }
        }
    }

    @Test("existingObjects reads 4,165 IDs with one statement on SQLite (existingObject ran one per ID)")
    func oneStatement() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-ids-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("ids.sqlite").path
        let statements = Statements()
        SQLiteBackend.statementTraces.withLock { $0[path] = { sql in statements.seen.withLock { $0.append(sql) } } }
        defer { _ = SQLiteBackend.statementTraces.withLock { $0.removeValue(forKey: path) } }
        let model = Model(entities: [Entity(name: "Ledger", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true), Column(name: "amount", type: .real),
        ], primaryKey: ["id"])])
        let store = try Store(path: path, model: model)
        let context = Context(store: store, name: "ids")
        try await context.perform { context in
            for id in 1...5_000 { try context.insert(into: "Ledger", values: ["id": StoreValue(id), "amount": 1.5]) }
            try context.saveAndReset()
        }
        let before = statements.selects(of: "Ledger").count
        let ids = (1...4_165).map { ObjectID(entity: "Ledger", key: [StoreValue($0 * 1)]) }
        let found = try await context.perform { context in
            context.retainsRegisteredObjects = true   // kept, to be found again below without a statement
            return try context.existingObjects(with: ids).count { $0 != nil }
        }
        #expect(found == 4_165)
        let selects = statements.selects(of: "Ledger").dropFirst(before)
        #expect(selects.count == 1, "\(selects.count) statements")
        // Asked again, the registered objects need no statement at all.
        _ = try await context.perform { context in try context.existingObjects(with: ids).count }
        #expect(statements.selects(of: "Ledger").count == before + 1)
    }
}
