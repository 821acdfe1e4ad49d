import Foundation
import Synchronization
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore
@testable import BatchRunPostgres
import TestSupport

/// The PostgreSQL backend against a real server (a throwaway cluster this test process starts):
/// opening with the contract's type mapping, contexts reading and writing through it, an
/// outside writer's change caught as a conflict, and cancellation of a running statement.
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    static let model = Model(entities: [
        Entity(name: "Reading", columns: [
            Column(name: "id", type: .integer, isPrimaryKey: true),
            Column(name: "sensor", type: .text, notNull: true),
            Column(name: "value", type: .real),
            Column(name: "taken_at", type: .datetime),
            Column(name: "ok", type: .boolean),
            Column(name: "raw", type: .blob),
            Column(name: "status", type: .text, notNull: true, defaultLiteral: "'open'"),
        ], primaryKey: ["id"]),
    ])

    @Test("placeholders become $n; literals, identifiers, comments, casts and dollar quotes are left alone")
    func placeholders() throws {
        let text = PostgresPlaceholders("SELECT '?', \"a?\", x::text, $$ :b ? $$ FROM t -- ? :c\nWHERE a = ? AND b = :b /* :d */ OR c = :b AND d = ?")
        #expect(text.sql == "SELECT '?', \"a?\", x::text, $$ :b ? $$ FROM t -- ? :c\nWHERE a = $1 AND b = $2 /* :d */ OR c = $2 AND d = $3")
        #expect(text.parameters == [.position(0), .name("b"), .position(1)])
        #expect(try text.values(positional: [1, 2], named: ["b": "x"]) == [1, "x", 2])
        #expect(throws: StoreError.self) { try text.values(positional: [1, 2], named: [:]) }
        #expect(PostgresPlaceholders("SELECT 'it''s ?' WHERE a = ?").sql == "SELECT 'it''s ?' WHERE a = $1")
    }

    @Test("a URL with a password is refused; the password comes from PGPASSWORD or ~/.pgpass")
    func passwords() throws {
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://u:secret@h/db", environment: [:]) }
        let pgpass = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pgpass) }
        try "# comment\nother:5432:*:u:no\nh:5433:db:u:from\\:file\n".write(to: pgpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pgpass.path)   // libpq ignores a file others may read
        #expect(try PostgresLocation(url: "postgresql://u@h:5433/db", environment: ["PGPASSFILE": pgpass.path]).password == "from:file")
        #expect(try PostgresLocation(url: "postgresql://u@h:5433/db", environment: ["PGPASSFILE": pgpass.path, "PGPASSWORD": "env"]).password == "env")
        #expect(try PostgresLocation(url: "postgresql://u@h/db", environment: [:]).password == nil)
    }

    @Test("opening creates the tables with the contract's types; a column dropped outside is added back; another type stops the open")
    func opening() throws {
        let url = try PostgresServer.database()
        _ = try Store(postgres: url, model: Self.model)
        let types = try PostgresServer.psql(url, """
            SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
            FROM information_schema.columns WHERE table_name = 'Reading'
            """)
        #expect(types == "id bigint, sensor text, value double precision, taken_at timestamp with time zone, ok boolean, raw bytea, status text")
        _ = try Store(postgres: url, model: Self.model)   // opens again over the existing table
        try PostgresServer.psql(url, "ALTER TABLE \"Reading\" DROP COLUMN raw")
        _ = try Store(postgres: url, model: Self.model)
        #expect(try PostgresServer.psql(url, "SELECT data_type FROM information_schema.columns WHERE table_name = 'Reading' AND column_name = 'raw'") == "bytea")
        try PostgresServer.psql(url, "ALTER TABLE \"Reading\" ALTER COLUMN ok TYPE text")
        #expect(throws: StoreError.self) { try Store(postgres: url, model: Self.model) }
    }

    @Test("objects inserted, fetched, updated and deleted through a context keep every value's type")
    func roundTrip() async throws {
        let url = try PostgresServer.database()
        let store = try Store(postgres: url, model: Self.model)
        let context = Context(store: store, name: "load")
        let taken = Date(timeIntervalSince1970: 1_769_847_300.25)
        let statuses = try await context.perform { context -> [StoreValue] in
            var objects: [ManagedObject] = []
            for id in 1...300 {
                let values: [String: StoreValue] = ["id": StoreValue(id), "sensor": "s\(id % 7)", "value": .real(Double(id) / 4),
                                                    "taken_at": StoreValue(taken), "ok": StoreValue(id % 2 == 0),
                                                    "raw": .blob([0, 255, UInt8(id % 256)])]
                objects.append(try context.insert(into: "Reading", values: values))
            }
            try context.insert(into: "Reading", values: ["sensor": "assigned"])   // the server assigns the key after the given ones
            try context.save()
            return try objects.map { try $0["status"] }
        }
        // The objects took their rows back from the bulk insert: the server's default is in them.
        #expect(statuses == Array(repeating: "open", count: 300))
        // Columns: id, sensor, value, taken_at, ok, raw, status.
        let rows = try await context.perform { context in
            context.retainsRegisteredObjects = true   // found again below, through registeredObjects
            return try context.fetch(FetchRequest(entity: "Reading")).map(\.values)
        }
        #expect(rows.count == 301)
        #expect(rows[0] == [1, "s1", .real(0.25), StoreValue(taken), 0, .blob([0, 255, 1]), "open"])
        #expect(rows[1] == [2, "s2", .real(0.5), StoreValue(taken), 1, .blob([0, 255, 2]), "open"])
        #expect(rows[300] == [301, "assigned", nil, nil, nil, nil, "open"])
        let saved = try await context.perform { context -> SaveResult in
            for object in context.registeredObjects where try object["id"].int! <= 10 { try object.set("status", to: "done") }
            for object in context.registeredObjects where try object["id"].int! > 290 { context.delete(object) }   // 11 rows
            return try context.save()
        }
        #expect(saved.updated == 10 && saved.deleted == 11 && saved.conflicts.isEmpty)
        #expect(try PostgresServer.psql(url, "SELECT count(*), count(*) FILTER (WHERE status = 'done') FROM \"Reading\"") == "290|10")
    }

    @Test("new objects go in through the bulk loader; a taken key in the run sends it row by row, where the policy resolves it")
    func objectsThroughCopy() async throws {
        let url = try PostgresServer.database()
        let store = try Store(postgres: url, model: Self.model)
        try PostgresServer.psql(url, "INSERT INTO \"Reading\" (id, sensor) VALUES (57, 'taken')")
        let context = Context(store: store, name: "load", mergePolicy: .objectTrump)
        let result = try await context.perform { context in
            for id in 1...120 { try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "s\(id)"]) }
            return try context.saveAndReset()
        }
        #expect(result.inserted == 119 && result.updated == 1 && result.conflicts.map(\.objectID) == [ObjectID(entity: "Reading", key: [57])])
        let clean = try await context.perform { context in
            for id in 200..<1_200 { try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "c"]) }
            return try context.saveAndReset()
        }
        #expect(clean.inserted == 1_000 && clean.conflicts.isEmpty)
        #expect(try PostgresServer.psql(url, "SELECT count(*), min(sensor) FILTER (WHERE id = 57) FROM \"Reading\"") == "1120|s57")
    }

    @Test("objects that leave the integer key out get the keys the server assigns")
    func assignedKeys() async throws {
        let store = try Store(postgres: try PostgresServer.database(), model: Self.model)
        let context = Context(store: store, name: "load")
        let ids = try await context.perform { context -> [ObjectID?] in
            let objects = try (1...3).map { try context.insert(into: "Reading", values: ["sensor": StoreValue("s\($0)")]) }
            try context.save()
            return objects.map(\.objectID)
        }
        #expect(ids == (1...3).map { ObjectID(entity: "Reading", key: [.integer(Int64($0))]) })
        let sensors = try await context.perform { context in
            try context.fetch(FetchRequest(entity: "Reading")).map { try $0["sensor"] }
        }
        #expect(sensors == ["s1", "s2", "s3"])
    }

    @Test("a row another program changed after the read is a conflict, resolved by the merge policy")
    func outsideWriter() async throws {
        let url = try PostgresServer.database()
        let store = try Store(postgres: url, model: Self.model)
        let context = Context(store: store, name: "job", mergePolicy: .objectTrump)
        try await context.perform { context in
            for id in 1...3 { try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "s", "value": 1.0]) }
            try context.saveAndReset()
            context.retainsRegisteredObjects = true   // found again below, through registeredObjects
            _ = try context.fetch(FetchRequest(entity: "Reading"))
        }
        try PostgresServer.psql(url, "UPDATE \"Reading\" SET sensor = 'outside' WHERE id = 2")
        let saved = try await context.perform { context -> SaveResult in
            for object in context.registeredObjects { try object.set("value", to: 2.0) }
            return try context.save()
        }
        #expect(saved.conflicts.count == 1)
        let conflict = try #require(saved.conflicts.first)
        #expect(conflict.objectID == ObjectID(entity: "Reading", key: [.integer(2)]) && conflict.outcome == .merged)
        #expect(try PostgresServer.psql(url, "SELECT string_agg(sensor || '=' || value, ',' ORDER BY id) FROM \"Reading\"")
                == "s=2,outside=2,s=2")
    }

    @Test("import lanes: each import's its own, at most 16 held at once however many are asked, given back for the next")
    func importLanesAreBounded() throws {
        let store = try Store(postgres: try PostgresServer.database(), model: Self.model)
        let first = store.backend.reserveImportLanes(64)
        #expect(first == Array(1...16))
        #expect(store.backend.reserveImportLanes(3).isEmpty)
        store.backend.releaseImportLanes([2, 5])
        #expect(store.backend.reserveImportLanes(3) == [2, 5])
        store.backend.releaseImportLanes(first)
        #expect(store.backend.reserveImportLanes(2) == [1, 2])
    }

    @Test("an interrupt cancels the statement running on the server")
    func interrupt() throws {
        let store = try Store(postgres: try PostgresServer.database(), model: Self.model)
        let interrupter = Interrupter()
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { interrupter.interrupt() }
        #expect(throws: (any Error).self) {
            try store.backend.read(interruptedBy: interrupter) { connection in try connection.execute("SELECT pg_sleep(20)") }
        }
        #expect(Date().timeIntervalSince(started) < 10)
        // The connection goes on: the next read runs.
        #expect(try store.backend.read(interruptedBy: nil) { try $0.value("SELECT 1 + 1") } == .integer(2))
    }

    @Test("stores opened and closed on many databases leave at most the pool's idle sessions open on the server")
    func idleSessionsAreBounded() throws {
        let urls = try (0..<12).map { _ in try PostgresServer.database("pool") }
        for url in urls {
            let store = try Store(postgres: url, model: Self.model)
            _ = try store.backend.read(interruptedBy: nil) { try $0.value("SELECT count(*) FROM \"Reading\"") }
        }   // each store closes as it goes: its sessions wait in the pool
        let names = urls.map { "'\($0.split(separator: "/").last!)'" }.joined(separator: ", ")
        // A closed session's server process ends a moment after the client closed it.
        var open = Int.max
        for _ in 0..<50 where open > PostgresSessionPool.maximumIdle {
            open = Int(try PostgresServer.psql(try PostgresServer.url,
                                               "SELECT count(*) FROM pg_stat_activity WHERE datname IN (\(names))"))!
            if open > PostgresSessionPool.maximumIdle { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(open <= PostgresSessionPool.maximumIdle)
        // The newest database's session is reused by the next store there.
        let again = try Store(postgres: urls.last!, model: Self.model)
        #expect(try again.backend.read(interruptedBy: nil) { try $0.value("SELECT count(*) FROM \"Reading\"") } == .integer(0))
    }

    @Test("a refused statement leaves its transaction usable, as its first statement (begun again) and after others (a savepoint)")
    func refusedStatements() throws {
        let url = try PostgresServer.database("refused")
        let store = try Store(postgres: url, model: Self.model)
        try PostgresServer.psql(url, "INSERT INTO \"Reading\" (id, sensor) VALUES (1, 'taken')")
        let insert = "INSERT INTO \"Reading\" (id, sensor) VALUES (?, ?)"
        let outcomes = try store.backend.write(interruptedBy: nil) { connection in
            let statement = try connection.prepare(insert)
            return [try connection.run(statement, values: [.integer(1), .text("first")], returned: nil),   // first in its transaction
                    try connection.run(statement, values: [.integer(2), .text("second")], returned: nil),
                    try connection.run(statement, values: [.integer(2), .text("again")], returned: nil),   // after another
                    try connection.run(statement, values: [.integer(3), .text("third")], returned: nil)]
        }
        #expect(outcomes.map(\.isDone) == [false, true, false, true])
        #expect(try PostgresServer.psql(url, "SELECT string_agg(id || sensor, ' ' ORDER BY id) FROM \"Reading\"") == "1taken 2second 3third")
        // Begun again, it is still one transaction: a failure after the refusal rolls back what followed it.
        struct Failed: Error {}
        #expect(throws: Failed.self) {
            try store.backend.write(interruptedBy: nil) { connection in
                let statement = try connection.prepare(insert)
                _ = try connection.run(statement, values: [.integer(1), .text("first")], returned: nil)
                _ = try connection.run(statement, values: [.integer(4), .text("fourth")], returned: nil)
                throw Failed()
            }
        }
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM \"Reading\"") == "3")
    }

    @Test("an import's rows (through COPY) carry every value as it was: integers of every length and sign, reals, text with tabs, backslashes and line breaks, NULL, bytes")
    func importedValues() throws {
        let url = try PostgresServer.database("copytext")
        let store = try Store(postgres: url, model: Self.model)
        let keys: [Int64] = [0, 7, 10, 99, 100, 12_345, -1, -98_765, 1_000_000_000_000_000_000, .max, .min]
        let texts = ["plain", "tab\there", "back\\slash", "line\nbreak", "cr\rend", "\\N", "ünï", "", "x", "y", "z"]
        let reals: [Double?] = [1.5, -0.25, 1e300, .leastNonzeroMagnitude, nil, 0, 3, -2.5e-7, 1, 2, 3]
        var batch = RowBatch()
        for (row, key) in keys.enumerated() {
            batch.beginRow(line: row + 1, layout: 0)
            batch.append(.integer(key))
            batch.append(.text(texts[row]))
            batch.append(reals[row].map(StoreValue.real) ?? .null)
            batch.append(row == 0 ? .blob([0, 255, 16, 92]) : .null)
            batch.append(.text("s"))
        }
        let outcome = try store.backend.write(interruptedBy: nil) { connection in
            try PostgresBulkLoader(entity: Self.model["Reading"]!).insert(Array(keys.indices)[...], of: batch, layout: 0,
                                                                           columns: ["id", "sensor", "value", "raw", "status"],
                                                                           assigningKeys: false, in: connection).outcome
        }
        #expect(outcome.isDone)
        let stored = try store.backend.read(interruptedBy: nil) { connection -> [[StoreValue]] in
            var rows: [[StoreValue]] = []
            try connection.forEachRow("SELECT id, sensor, value, raw FROM \"Reading\" ORDER BY id", []) { rows.append($0) }
            return rows
        }
        let expected = keys.indices.sorted { keys[$0] < keys[$1] }.map { row in
            [StoreValue.integer(keys[row]), .text(texts[row]), reals[row].map(StoreValue.real) ?? .null, row == 0 ? .blob([0, 255, 16, 92]) : .null]
        }
        #expect(stored == expected)
    }

    @Test("a write whose BEGIN failed is refused by the server instead of committing on its own; the BEGIN's failure is the one thrown")
    func failedBeginWritesNothing() throws {
        let url = try PostgresServer.database("begin")
        let store = try Store(postgres: url, model: Self.model)
        var thrown: (any Error)?
        do {
            try store.backend.write(interruptedBy: nil) { connection in
                let session = try #require(connection as? PostgresStoreConnection)
                try session.simple("COMMIT")
                // A BEGIN the server refuses (as a cancel reaching it would): the INSERT sent after
                // it runs outside any transaction.
                try session.began("BEGIN ISOLATION LEVEL NONSENSE")
                _ = try connection.execute("INSERT INTO \"Reading\" (id, sensor) VALUES (1, 'alone')")
            }
        } catch {
            thrown = error
        }
        #expect(thrown.map { "\($0)" }?.contains("NONSENSE") == true)
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM \"Reading\"") == "0")
        // The writer's session is usable afterwards.
        try store.backend.write(interruptedBy: nil) { connection in
            _ = try connection.execute("INSERT INTO \"Reading\" (id, sensor) VALUES (2, 'after')")
        }
        #expect(try PostgresServer.psql(url, "SELECT string_agg(id || sensor, ' ') FROM \"Reading\"") == "2after")
    }

    @Test("a session the server ends right after a transaction began fails the next statement as closed, without waiting")
    func sessionEndedAfterBegin() throws {
        let url = try PostgresServer.database("ended")
        let store = try Store(postgres: url, model: Self.model)
        let pid = try store.backend.write(interruptedBy: nil) { try $0.value("SELECT pg_backend_pid()")! }
        let error = #expect(throws: (any Error).self) {
            try store.backend.write(interruptedBy: nil) { connection in
                _ = try PostgresServer.psql(url, "SELECT pg_terminate_backend(\(pid.int64!))")
                _ = try connection.execute("INSERT INTO \"Reading\" (id, sensor) VALUES (1, 'x')")
            }
        }
        // Closed before the INSERT was sent, closing as it was written, or ended by the server
        // while it ran: three ways of saying the session is gone.
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("the connection to the server") || message.contains("terminating connection"), "\(message)")
        #expect(try PostgresServer.psql(url, "SELECT count(*) FROM \"Reading\"") == "0")
    }

    @Test("keys drawn ahead on a side session come after the ones drawn before, in order, and none is left unused when as many rows come")
    func keysDrawnAhead() throws {
        let url = try PostgresServer.database("keys")
        let store = try Store(postgres: url, model: Self.model)
        let sequence = try PostgresServer.psql(url, "SELECT pg_get_serial_sequence('\"Reading\"', 'id')")
        // The side session: another store's writer, its server process recorded.
        let other = try Store(postgres: url, model: Self.model)
        let sidePIDs = Mutex<[StoreValue]>([])
        let side: PostgresKeyReserve.SideSession = { body in
            try other.backend.write(interruptedBy: nil) { connection in
                let pid = try connection.value("SELECT pg_backend_pid()")!
                sidePIDs.withLock { $0.append(pid) }
                try body(connection)
            }
        }
        let writerPID = try store.backend.write(interruptedBy: nil) { connection in
            let keys = PostgresKeyReserve(sequence: sequence, side: side)
            #expect(try keys.take(5, in: connection) == [1, 2, 3, 4, 5])
            keys.prepare(4)
            #expect(try keys.take(3, in: connection) == [6, 7, 8])       // drawn ahead
            #expect(try keys.take(3, in: connection) == [9, 10, 11])     // one drawn ahead, two here
            return try connection.value("SELECT pg_backend_pid()")!
        }
        #expect(sidePIDs.withLock { $0 }.count == 1)
        #expect(sidePIDs.withLock { $0 }.first != writerPID)
        // Nothing was drawn and left unused.
        #expect(try PostgresServer.psql(url, "SELECT last_value FROM \(sequence)") == "11")
    }

    @Test("a queue claim fences its store: once another worker took the item over, the next write is rolled back, and the old claim can neither renew nor finish")
    func fencedByAQueueClaim() async throws {
        let url = try PostgresServer.database("fence")
        let queue = try PostgresQueue(url: url)
        try queue.submit(text: "version: 1", name: "a.yaml", params: ["cutoff": "2026-01-01"], directory: "/srv/jobs")
        let claim = try #require(try queue.claimNext(worker: "1@first", lease: 30))
        #expect(claim.name == "a.yaml" && claim.params == ["cutoff": "2026-01-01"] && claim.directory == "/srv/jobs" && !claim.takenOver)
        #expect(try queue.claimNext(worker: "2@second", lease: 30) == nil)   // held by its lease

        let store = try Store(StoreSpec(location: url), model: Self.model, fence: PostgresQueue.fence(item: claim.id, token: claim.token))
        let context = Context(store: store, name: "load")
        try await context.perform { context in
            try context.insert(into: "Reading", values: ["id": 1, "sensor": "a"])
            try context.save()
        }
        // The lease runs out; another worker takes the item over with the next token.
        try PostgresServer.psql(url, "UPDATE _batchrun_queue SET lease_until = now() - interval '1 second'")
        let second = try #require(try queue.claimNext(worker: "2@second", lease: 30))
        #expect(second.id == claim.id && second.token == claim.token + 1 && second.takenOver)

        let refused = await context.perform { context -> (any Error)? in
            do {
                try context.insert(into: "Reading", values: ["id": 2, "sensor": "b"])
                try context.save()
                return nil
            } catch {
                return error
            }
        }
        #expect("\(refused.map { "\($0)" } ?? "")" == "lost the lease of queue item \(claim.id): another worker took it over; nothing of this batch was committed")
        #expect(try PostgresServer.psql(url, "SELECT string_agg(id::text, ',') FROM \"Reading\"") == "1")
        #expect(try queue.renew(claim, lease: 30) == false)
        #expect(try queue.finish(claim, as: .done, status: 0, report: nil, log: "first\n", error: nil) == false)
        #expect(try queue.renew(second, lease: 30) == true)
        #expect(try queue.finish(second, as: .done, status: 0, report: "{}", log: "second\n", error: nil) == true)
        #expect(try queue.output(of: claim.id)?.log == "second\n")
        #expect(try queue.items().map(\.state) == [.done])
    }

    @Test("a session the server ended for a transaction left idle (25P03) or an idle session (57P05) is a lost connection, as when it closes the socket: the session is made again and an item's end retried")
    func idleEndedSessionIsALostConnection() {
        for state in ["25P03", "57P05"] {
            let ended = PostgresError(sqlState: state, message: "terminating connection due to idle-in-transaction timeout")
            #expect(ended.storeFailure == .connectionLost)
            #expect(ended.isServerFailure)
        }
        #expect(PostgresError(sqlState: "23505", message: "duplicate key").storeFailure == nil)
    }

    @Test("a worker paused while it writes an item's row (its lease, its progress) holds the row only until the queue's idle timeout: the item is then taken over")
    func pausedWriterOfAnItemsRow() throws {
        let url = try PostgresServer.database("paused")
        let paused = try PostgresQueue(url: url, idleTimeout: 1)
        try paused.submit(text: "version: 1", name: "a.yaml", params: [:], directory: "/srv/jobs")
        let claim = try #require(try paused.claimNext(worker: "1@first", lease: 0.5))
        let claimed = Date()   // the lease began before
        #expect(try paused.store.writeRecords { try $0.value("SHOW idle_in_transaction_session_timeout", [])?.string } == "1s")
        // A transaction on the item's row left open, as a process stopped between its UPDATE and
        // its COMMIT leaves it: the row stays locked, and a claim's SKIP LOCKED passes it by.
        let resume = Mutex(false)
        let ended = Mutex(false)
        let locked = Mutex<(rows: Int, at: Date)?>(nil)
        let holder = Thread {
            _ = try? paused.store.writeRecords { db in
                // Taken before the UPDATE: the server's idle time starts after it, so no claim
                // that returned within 0.9 s of this can have come after the timeout.
                let sent = Date()
                let rows = try db.execute("UPDATE _batchrun_queue SET progress = '{}' WHERE id = ? AND token = ?",
                                          [.integer(claim.id), .integer(claim.token)])
                locked.withLock { $0 = (rows, sent) }
                while !resume.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
            }
            ended.withLock { $0 = true }
        }
        holder.start()
        while locked.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.01) }
        let (rows, lockedAt) = try #require(locked.withLock { $0 })
        #expect(rows == 1)
        // Once the lease (0.5 s) and the idle timeout (1 s) have passed, the server has ended that
        // transaction and another worker takes the item over; without the timeout, not until the
        // holder goes on (here: after the wait below). Before, the locked row is passed by.
        let other = try PostgresQueue(url: url)
        while Date() < claimed.addingTimeInterval(0.6) { Thread.sleep(forTimeInterval: 0.02) }
        let early = try other.claimNext(worker: "2@second", lease: 30)
        if Date() < lockedAt.addingTimeInterval(0.9) { #expect(early == nil) }
        var taken: PostgresQueue.Claim? = early
        let deadline = Date().addingTimeInterval(30)
        while taken == nil, Date() < deadline {
            taken = try other.claimNext(worker: "2@second", lease: 30)
            if taken == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        resume.withLock { $0 = true }
        while !ended.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(taken?.id == claim.id && taken?.takenOver == true)
        // Nothing of the paused transaction committed.
        #expect(try PostgresServer.psql(url, "SELECT coalesce(progress, 'none') FROM _batchrun_queue") == "none")
    }
}
