import Foundation
import Testing
@testable import BatchRunKit
import TestSupport

/// The library's side of schema changes (JOBFILE.md section 13): `Store(path:model:)` and
/// `Store(postgres:model:)` make them as they open, `Store.schemaChanges(for:)` previews
/// them without making any, on both backends.
@Suite("Schema changes through the library")
struct SchemaChangeStoreTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        func open(_ location: String, _ model: Model) throws -> Store {
            switch self {
            case .sqlite: try Store(path: location, model: model)
            case .postgres: try Store(postgres: location, model: model)
            }
        }

        func newLocation() throws -> String {
            switch self {
            case .sqlite: FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-schema-\(UUID().uuidString)/s.sqlite").path
            case .postgres: try PostgresServer.database("lib")
            }
        }

        func table(_ name: String) -> String { self == .postgres ? name.lowercased() : name }
    }

    static func model(_ columns: [Column], uniques: [[String]] = [], indexes: [[String]] = [], table: String) -> Model {
        Model(entities: [Entity(name: "Reading", table: table, columns: [Column(name: "id", type: .integer, isPrimaryKey: true)] + columns,
                                primaryKey: ["id"], uniques: uniques, indexes: indexes)])
    }

    func count(_ store: Store, _ sql: String) throws -> Int {
        try store.readRecords { db in try db.value(sql)?.int ?? -1 }
    }

    @Test("a preview changes nothing; opening makes the changes and records them; defaults fill the rows", arguments: Backend.allCases)
    func previewThenOpen(_ backend: Backend) throws {
        let location = try backend.newLocation()
        let table = backend.table("Reading")
        let old = Self.model([Column(name: "value", type: .real)], table: table)
        let store = try backend.open(location, old)
        try store.writeRecords { db in
            for id in 1...5 { try db.execute("INSERT INTO \(SQL.quote(table)) (id, value) VALUES (?, ?)", [StoreValue.integer(Int64(id)), StoreValue.real(Double(id))]) }
        }
        var renamed = Column(name: "amount", type: .real)
        renamed.renamedFrom = "value"
        let new = Self.model([renamed, Column(name: "unit", type: .text, notNull: true, defaultLiteral: "'kg'"),
                              Column(name: "code", type: .text, isUnique: true)], indexes: [["unit", "amount"]], table: table)
        let preview = try store.schemaChanges(for: new).map(\.description)
        #expect(preview == ["Reading: renamed column value to amount", "Reading: added column unit text not null default 'kg'",
                            "Reading: added column code text", "Reading: created unique (code)", "Reading: created index on (unit, amount)"])
        #expect(try store.readRecords { db in try db.columnNames(of: table) } == ["id", "value"])
        let opening = Date()
        let opened = try backend.open(location, new)
        let openedAt = Date()
        #expect(try opened.schemaChanges(for: new).isEmpty)
        #expect(try count(opened, "SELECT count(*) FROM \(SQL.quote(table)) WHERE unit = 'kg' AND amount = id") == 5)
        #expect(try count(opened, "SELECT count(*) FROM _batchrun_schema WHERE run_id IS NULL AND file IS NULL") == 5)
        // When: DateText's text, to the nearest millisecond, of a time while the store opened.
        let appliedAt = try opened.readRecords { db in try db.rows("SELECT applied_at FROM _batchrun_schema").compactMap { $0[0].string } }
        #expect(appliedAt.count == 5)
        for text in appliedAt {
            let date = try #require(DateText.date(text), "\(text)")
            #expect(text.count == 24 && text.dropFirst(19).hasPrefix(".") && text.hasSuffix("Z") && DateText.text(date) == text, "\(text)")
            #expect(date.timeIntervalSince(opening) >= -0.0005 && date.timeIntervalSince(openedAt) <= 0.0005,
                    "\(text) is not between \(DateText.text(opening)) and \(DateText.text(openedAt))")
        }
        // Opening again with the new model changes nothing more.
        _ = try backend.open(location, new)
        #expect(try count(opened, "SELECT count(*) FROM _batchrun_schema") == 5)
    }

    @Test("every refusal is listed at once, and the preview throws the same", arguments: Backend.allCases)
    func refusalsAtOnce(_ backend: Backend) throws {
        let location = try backend.newLocation()
        let table = backend.table("Reading")
        let store = try backend.open(location, Self.model([Column(name: "value", type: .real), Column(name: "tag", type: .text)], table: table))
        try store.writeRecords { db in
            _ = try db.execute("INSERT INTO \(SQL.quote(table)) (id, value, tag) VALUES (1, 1.0, 'a'), (2, 2.0, 'a')")
        }
        let new = Self.model([Column(name: "value", type: .text), Column(name: "tag", type: .text),
                              Column(name: "must", type: .integer, notNull: true)], uniques: [["tag"]], table: table)
        for attempt in [{ _ = try store.schemaChanges(for: new) }, { _ = try backend.open(location, new) }] {
            #expect {
                try attempt()
            } throws: { error in
                let text = "\(error)"
                return text.contains("column value is declared text") && text.contains("cannot add column must integer not null")
                    && text.contains("cannot create unique (tag): 2 rows share tag = 'a'") && text.hasSuffix("the store's schema was not changed")
            }
        }
        #expect(try store.readRecords { db in try db.columnNames(of: table) } == ["id", "value", "tag"])
    }
}
