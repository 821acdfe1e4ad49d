import Foundation
import Testing
@testable import BatchRunKit
import BatchRunSQLite

/// The kind of a store is read from its location in one place, and what differs between
/// databases (table-name folding, expression checking) comes from the backend it names.
@Suite("Store locations")
struct StoreSpecTests {
    @Test("a location names its kind: PostgreSQL URLs, everything else a file")
    func kindFromLocation() {
        #expect(StoreSpec(location: "postgresql://batch@db/nightly").kind == .postgres)
        #expect(StoreSpec(location: "postgres://batch@db/nightly").kind == .postgres)
        #expect(StoreSpec(location: "var/postgresql.sqlite").kind == .sqlite)
        #expect(StoreSpec(location: "/tmp/postgres://x").kind == .sqlite)
        #expect(StoreSpec(location: "var/x.sqlite", busyTimeout: 2).busyTimeout == 2)
    }

    @Test("an entity without table: is named as its database folds unquoted names")
    func tableNameFolding() throws {
        let text = """
            version: 1
            store: x.sqlite
            entities:
              Session: { columns: { id: integer primary key } }
              Other: { table: MixedCase, columns: { id: integer primary key } }
            jobs:
              j: { steps: [ { delete: { entity: Session, where: "id < 0" } } ] }
            """
        let onFile = try JobFileLoader(environment: [:]).load(text: text, path: "/tmp/j.yaml")
        #expect(onFile.model["Session"]?.tableName == "Session")
        var loader = JobFileLoader(storeOverride: "postgresql://batch@127.0.0.1:1/none", environment: [:])
        loader.checksExpressionsOnServer = false   // nothing listens there: the file is only parsed
        let onServer = try loader.load(text: text, path: "/tmp/j.yaml")
        #expect(onServer.store.kind == .postgres)
        #expect(onServer.model["Session"]?.tableName == "session")
        #expect(onServer.model["Other"]?.tableName == "MixedCase")
    }

    @Test("each backend checks expressions, with one problem type")
    func expressionCheckerFromSpec() throws {
        let model = Model(entities: [Entity(name: "T", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"])])
        let checker = try StoreSpec(location: "unused.sqlite").makeExpressionChecker(model: model)
        #expect(try checker.check(sql: "SELECT 1 FROM \"T\" WHERE id = :id").get() == ["id"])
        guard case .failure(let problem) = checker.check(sql: "SELECT nope FROM \"T\"") else {
            Issue.record("an unknown column was accepted")
            return
        }
        #expect(problem.message == "no such column: nope")
        #expect(!FileManager.default.fileExists(atPath: "unused.sqlite"))
    }

    @Test("a fence on an SQLite store is refused, not ignored")
    func fenceOnSQLite() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Model(entities: [Entity(name: "T", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"])])
        let fence = WriteFence(sql: "SELECT 1", arguments: [], refusal: "lost")
        #expect(throws: StoreError.self) {
            _ = try Store(StoreSpec(location: folder.appendingPathComponent("s.sqlite").path), model: model, fence: fence)
        }
    }
}
