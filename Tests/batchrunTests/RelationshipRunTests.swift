import Foundation
import GRDB
import Testing
import TestSupport

/// Issue 34: references between entities in job files (`integer references Airline on delete
/// cascade`), the real binary end to end on SQLite and PostgreSQL: a `delete` step follows each
/// column's rule inside its batch's transaction, and a `restrict` refuses the batch.
@Suite("Relationships in job files")
struct RelationshipRunTests {
    static let entities = """
        entities:
          Airline:
            columns:
              id: integer primary key
              name: text
          Flight:
            columns:
              id: integer primary key
              airline_id: integer references Airline on delete cascade
          Booking:
            columns:
              id: integer primary key
              flight_id: integer not null references Flight on delete cascade
          Crew:
            columns:
              id: integer primary key
              airline_id: integer references Airline on delete set null
          Gate:
            columns:
              code: text primary key
              airline_id: integer references Airline
        """

    static func file(_ jobs: String) -> String {
        "version: 1\nstore: var/air.sqlite\n" + entities + "\njobs:\n" + jobs
    }

    static let load = file("""
          load:
            steps:
              - insert: { entity: Airline, rows: [{ id: 1, name: Aer }, { id: 2, name: Blue }] }
              - insert: { entity: Flight, rows: [{ id: 10, airline_id: 1 }, { id: 11, airline_id: 1 }, { id: 12, airline_id: 2 }] }
              - insert: { entity: Booking, rows: [{ id: 100, flight_id: 10 }, { id: 102, flight_id: 12 }] }
              - insert: { entity: Crew, rows: [{ id: 1, airline_id: 1 }, { id: 2, airline_id: 2 }] }
              - insert: { entity: Gate, rows: [{ code: A1, airline_id: 2 }] }
          purge:
            needs: load
            steps:
              - delete: { entity: Airline, where: "id = 1" }
        """)

    static let refused = file("""
          close_blue:
            steps:
              - delete: { entity: Airline, where: "id = 2" }
        """)

    /// One count, read by the database's own client (psql) or GRDB, apart from batchrun.
    static func count(_ sql: String, store: String, in folder: TemporaryFolder) throws -> Int {
        if store.hasPrefix("postgresql://") { return Int(try PostgresServer.psql(store, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        return try DatabaseQueue(path: folder.path(store)).read { try Int.fetchOne($0, sql: sql) ?? -1 }
    }

    @Test("a delete step cascades and nullifies; restrict (the default) refuses the batch, nothing written", arguments: ["sqlite", "postgres"])
    func deleteSteps(_ kind: String) throws {
        let folder = try TemporaryFolder()
        try folder.write("load.yaml", Self.load)
        try folder.write("refused.yaml", Self.refused)
        let store = kind == "sqlite" ? "var/air.sqlite" : try PostgresServer.database("relrun")
        let check = try Batchrun.run(["check", "load.yaml"], in: folder.url)
        #expect(check.status == 0, "\(check.stderr)")

        let run = try Batchrun.run(["load.yaml", "--store", store, "--jobs", "1"], in: folder.url)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        func count(_ sql: String) throws -> Int { try Self.count(sql, store: store, in: folder) }
        #expect(try count("SELECT count(*) FROM airline") == 1)
        #expect(try count("SELECT count(*) FROM flight WHERE id = 12") == 1 && count("SELECT count(*) FROM flight") == 1)
        #expect(try count("SELECT count(*) FROM booking") == 1)
        #expect(try count("SELECT count(*) FROM crew WHERE airline_id IS NULL AND id = 1") == 1)
        #expect(try count("SELECT count(*) FROM crew WHERE airline_id = 2") == 1)

        let denied = try Batchrun.run(["refused.yaml", "--store", store], in: folder.url)
        #expect(denied.status == 1, "\(denied.stdout)\(denied.stderr)")
        #expect((denied.stdout + denied.stderr).contains("cannot delete Airline: 1 row still refers to it through Gate.airline_id, whose delete rule is deny"),
                "\(denied.stdout)\(denied.stderr)")
        #expect(try count("SELECT count(*) FROM airline") == 1)
        #expect(try count("SELECT count(*) FROM flight") == 1)
        #expect(try count("SELECT count(*) FROM crew WHERE airline_id = 2") == 1)
    }
}
