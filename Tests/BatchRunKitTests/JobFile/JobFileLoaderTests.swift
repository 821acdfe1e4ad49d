import Foundation
import Testing
@testable import BatchRunKit

@Suite("Loading job files")
struct JobFileLoaderTests {
    static let text = """
        version: 1
        store: { sqlite: ../var/x.sqlite, busy_timeout: 250ms }
        entities:
          Session:
            table: sessions
            columns:
              id: integer primary key
              user: text not null unique
              duration: real default 0
              ok: boolean not null default TRUE
              at: datetime
            unique: [[user, at]]
            indexes: [[at], [user, duration]]
          Pair:
            columns: { a: integer, b: text }
            primary_key: [a, b]
        defaults: { batch_size: 250, merge_policy: store-trump, timeout: 2m, retries: 3 }
        params: { cutoff: "2026-01-01", limit: 5, ratio: 0.5, flag: true }
        jobs:
          load:
            description: the loader
            steps:
              - insert: { entity: Session, rows: [{ id: 1, user: ann }], batch_size: 10, nulls: [NA] }
          stats:
            needs: load
            merge_policy: rollback
            atomic: true
            timeout: 500ms
            on_success: echo ok
            on_failure: echo failed
            on_complete: echo done
            steps:
              - fetch:
                  entity: Session
                  select: { n: "count(*)", avg: "avg(duration)" }
                  where: "at < :cutoff"
                  as: s
          after:
            needs: [stats]
            steps:
              - fetch:
                  entity: Session
                  select: [user]
                  where: "duration > :avg AND user <> :who"
                  params: { avg: "${s.avg}", who: "name ${env.USER_FOR_TEST}" }
                  order_by: ["-user"]
                  limit: 3
                  output: out.ndjson
              - delete: { entity: Pair, where: all }
              - batch-update: { entity: Session, where: "id = 1", set: { duration: "duration + 1" }, direct: true }
        """

    func load(_ params: [String: String] = [:]) throws -> JobFile {
        try JobFileLoader(params: params, environment: ["USER_FOR_TEST": "zed"]).load(text: Self.text, path: "/work/jobs/x.yaml")
    }

    @Test("typed values: store, model, defaults, params, jobs and steps")
    func typedValues() throws {
        let file = try load()
        #expect(file.store == StoreSpec(path: "/work/var/x.sqlite", busyTimeout: 0.25))
        let session = try #require(file.model["Session"])
        #expect(session.tableName == "sessions")
        #expect(session.primaryKey == ["id"])
        #expect(session.column(named: "user") == Column(name: "user", type: .text, notNull: true, isUnique: true))
        #expect(session.column(named: "ok")?.defaultLiteral == "TRUE")
        #expect(session.uniques == [["user", "at"]])
        #expect(session.indexes == [["at"], ["user", "duration"]])
        #expect(file.model["Pair"]?.primaryKey == ["a", "b"])
        #expect(file.defaults == JobDefaults(batchSize: 250, mergePolicy: .storeTrump, timeout: 120, retries: 3))
        #expect(file.params == ["cutoff": .text("2026-01-01"), "limit": .integer(5), "ratio": .real(0.5), "flag": .integer(1)])

        let load = try #require(file.job(named: "load"))
        #expect(load.mergePolicy == .storeTrump && load.batchSize == 250 && load.timeout == 120 && load.retries == 3)
        #expect(load.description == "the loader")
        guard case .insert(let insert) = load.steps[0] else { Issue.record("not an insert"); return }
        #expect(insert.batchSize == 10 && insert.nulls == ["NA"])
        #expect(load.batchSize(for: load.steps[0]) == 10)

        let stats = try #require(file.job(named: "stats"))
        #expect(stats.needs == ["load"] && stats.mergePolicy == .rollback && stats.atomic && stats.timeout == 0.5)
        #expect(stats.hooks == Hooks(onSuccess: "echo ok", onFailure: "echo failed", onComplete: "echo done"))

        let after = try #require(file.job(named: "after"))
        guard case .fetch(let fetch) = after.steps[0] else { Issue.record("not a fetch"); return }
        #expect(fetch.orderBy == [FetchStep.Order(name: "user", descending: true)])
        #expect(fetch.limit == 3 && fetch.output == .ndjson("/work/jobs/out.ndjson"))
        #expect(fetch.params["avg"]?.parts == [.reference(.output(name: "s", column: "avg"))])
        guard case .delete(let delete) = after.steps[1], case .batchUpdate(let update) = after.steps[2] else {
            Issue.record("steps out of order"); return
        }
        #expect(delete.whereClause == nil)
        #expect(update.direct && update.set == [.init(column: "duration", expression: "duration + 1")])
    }

    @Test("store: a bare postgresql:// or postgres:// URL names the database, as --store does; any other string is an SQLite path",
          arguments: ["postgresql://batch@db.internal:5432/nightly", "postgres://batch@db.internal/nightly", "var/postgresql.sqlite"])
    func bareStoreURL(store: String) throws {
        var loader = JobFileLoader(environment: [:])
        loader.checksExpressionsOnServer = false
        let text = "version: 1\nstore: \(store)\nentities:\n  T:\n    columns: { id: integer primary key }\njobs:\n  j:\n    steps:\n      - insert: { entity: T, rows: [{ id: 1 }] }\n"
        let file = try loader.load(text: text, path: "/jobs/j.yaml")
        if store.hasPrefix("postgres") {
            #expect(file.store.kind == .postgres && file.store.path == store)
        } else {
            #expect(file.store.kind == .sqlite && file.store.path == "/jobs/var/postgresql.sqlite")
        }
    }

    @Test("--param overrides are typed like plain YAML scalars")
    func paramOverrides() throws {
        let file = try load(["cutoff": "2026-02-01", "limit": "7", "extra": "x y"])
        #expect(file.params["cutoff"] == .text("2026-02-01"))
        #expect(file.params["limit"] == .integer(7))
        #expect(file.params["extra"] == .text("x y"))
    }

    @Test("params resolve outputs, environment and file params")
    func resolution() throws {
        let file = try load()
        let after = try #require(file.job(named: "after"))
        let params = JobFileRun.resolvedParams(after.steps[0], file: file, outputs: ["s": ["avg": .real(4.5), "n": .integer(3)]])
        #expect(params["avg"] == .real(4.5))
        #expect(params["cutoff"] == .text("2026-01-01"))
        let template = try ParamTemplate.parse("name ${env.HOME}-${params.cutoff}").get()
        #expect(template.resolve { reference in
            switch reference {
            case .environment: return .text("/root")
            case .parameter: return .integer(2026)
            case .output: return nil
            }
        } == .text("name /root-2026"))
    }

    @Test("every error is collected in one pass, in source order")
    func allErrors() throws {
        let broken = Self.text
            .replacingOccurrences(of: "merge_policy: rollback", with: "merge_policy: roll-back")
            .replacingOccurrences(of: "needs: load", with: "needs: laod")
            .replacingOccurrences(of: "timeout: 500ms", with: "timeout: soon")
        do {
            _ = try JobFileLoader(environment: ["USER_FOR_TEST": "zed"]).load(text: broken, path: "x.yaml")
            Issue.record("loaded a broken file")
        } catch {
            let messages = error.diagnostics.map(\.message)
            #expect(messages.count == 3)
            #expect(messages[0].hasPrefix("job stats needs unknown job 'laod'; did you mean 'load'?"))
            #expect(messages[1].hasPrefix("unknown merge policy 'roll-back'; did you mean 'rollback'?"))
            #expect(messages[2].hasPrefix("timeout must be a duration"))
            let lines = error.diagnostics.compactMap(\.location?.line)
            #expect(lines == lines.sorted())
        }
    }

    @Test("`was OLD` names a column's earlier name; schema_changes is apply or refuse; a rename that would drop or repeat is an error at its column")
    func renamesAndSchemaChanges() throws {
        func file(_ columns: String, top: String = "") -> String {
            """
            version: 1
            store: s.sqlite
            \(top)
            entities:
              P:
                columns:
            \(columns)
            jobs:
              j: { steps: [{ delete: { entity: P, where: all } }] }
            """
        }
        let loaded = try JobFileLoader().load(text: file("      id: integer primary key\n      full_name: text not null default '' was name",
                                                         top: "schema_changes: refuse"), path: "x.yaml")
        let column = try #require(loaded.model["P"]?.columns.last)
        #expect(column.renamedFrom == "name" && column.notNull && column.defaultLiteral == "''")
        #expect(loaded.refusesSchemaChanges)
        #expect(try !JobFileLoader().load(text: file("      id: integer primary key"), path: "x.yaml").refusesSchemaChanges)
        let broken: [(String, String, String)] = [
            ("      id: integer primary key\n      a: text was name\n      name: text", "",
             "column a says it was name, but name is still declared; a rename keeps one column (batchrun never drops a column)"),
            ("      id: integer primary key\n      a: text was old\n      b: text was old", "", "columns a and b both say they were old"),
            ("      id: integer primary key\n      a: text was a", "", "column a cannot say it was itself"),
            ("      id: integer primary key\n      a: text was", "", "'was' needs the column's earlier name"),
            ("      id: integer primary key", "schema_changes: refused", "schema_changes must be apply or refuse, found 'refused'; did you mean 'refuse'?"),
        ]
        for (columns, top, message) in broken {
            do {
                _ = try JobFileLoader().load(text: file(columns, top: top), path: "x.yaml")
                Issue.record("loaded: \(columns)")
            } catch {
                #expect(error.diagnostics.map(\.message).contains { $0.hasPrefix(message) }, "\(error.diagnostics.map(\.message))")
                #expect(error.diagnostics.allSatisfy { $0.location != nil })
            }
        }
    }

    @Test("suggestions: synonyms, separators and small typos")
    func suggestions() {
        #expect(Suggestion.closest(to: "job", in: JobFileBuilder.topKeys) == "jobs")
        #expect(Suggestion.closest(to: "object_trump", in: MergePolicy.names) == "object-trump")
        #expect(Suggestion.closest(to: "filter", in: JobFileBuilder.fetchKeys) == "where")
        #expect(Suggestion.closest(to: "update", in: JobFileBuilder.stepKinds) == "batch-update")
        #expect(Suggestion.closest(to: "entitiy", in: JobFileBuilder.fetchKeys) == "entity")
        #expect(Suggestion.closest(to: "zzzzzz", in: JobFileBuilder.fetchKeys) == nil)
    }

    @Test("durations", arguments: [("500ms", 0.5), ("30s", 30), ("5m", 300), ("1h", 3600), ("1.5s", 1.5), ("14d", 1_209_600)])
    func durations(text: String, seconds: Double) {
        #expect(NodeReader.seconds(text) == seconds)
    }

    @Test("bad durations", arguments: ["5", "5 min", "-1s", "s", "1w", "0s", "d"])
    func badDurations(text: String) {
        #expect(NodeReader.seconds(text) == nil)
    }

    @Test("a rendered diagnostic shows the line and a caret under the column")
    func rendering() {
        let diagnostic = Diagnostic(at: SourceLocation(file: "f.yaml", line: 2, column: 5), "bad")
        #expect(diagnostic.rendered(source: "a: 1\nbb: cc\n") == "f.yaml:2:5: error: bad\nbb: cc\n    ^")
    }
}
