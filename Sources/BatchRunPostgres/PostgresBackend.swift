#if PostgreSQL
import BatchRunStore
import Foundation
import PostgresNIO
import Synchronization

/// The PostgreSQL backend: one writer connection that serializes this process's writes (READ
/// COMMITTED transactions), sessions an import writes its batches over at once (`reserveImportLanes`,
/// committed in feed order by `ImportLanes`), pooled reader connections for snapshot reads (REPEATABLE READ, READ
/// ONLY), and a control connection (made at first use) that cancels a statement (`pg_cancel_backend`) when a
/// context is interrupted. Opening connects; `Store` then makes the tables hold the model with
/// the contract's type mapping (`SchemaMigration`), as on SQLite.
///
/// "Committed since" compares the server's snapshots (`pg_current_snapshot()`: the oldest
/// transaction running, the next transaction id, the ones in progress), taken before a read
/// and again inside the save's transaction: equal, no transaction took an id or ended in
/// between, so nothing was committed and a save may take the set-based fast path. Any
/// difference (even a commit that changed other tables) takes the checked path.
///
/// ```swift
/// let backend = try PostgresBackend(url: "postgresql://batch@db.internal/nightly")
/// try backend.write(interruptedBy: nil) { connection in try connection.execute("DELETE FROM \"Session\"") }
/// ```
package final class PostgresBackend: StoreBackend {
    /// The server's address, as the URL gives it (no password).
    package let location: PostgresLocation
    private let connections: Connections
    private let fence: WriteFence?

    /// `busyTimeout`: how long a write waits for a row or table lock another session holds
    /// (the writer's `lock_timeout`); then it fails as busy, and a job's retries try again.
    /// `fence`: checked as the last statement of every write transaction (`WriteFence`).
    /// `idleTimeout`: a transaction idle longer than this is ended by the server (`StoreSpec.idleTimeout`).
    package static func open(location: String, busyTimeout: Double, fence: WriteFence?, role: String?, idleTimeout: Double?) throws -> PostgresBackend {
        try PostgresBackend(url: location, busyTimeout: busyTimeout, fence: fence, role: role, idleTimeout: idleTimeout)
    }

    package static var foldsUnquotedNames: Bool { true }

    package var locationDescription: String { location.description }

    package static func connectionIdentity(location: String) throws -> String {
        try PostgresLocation(url: location).connectionIdentity
    }

    package static func makeExpressionChecker(location: String, model: Model) throws -> any ExpressionChecking {
        try PostgresExpressionChecker(url: location, model: model)
    }

    /// `role`: every session's role (`SET ROLE`), so the statements run with its rights;
    /// batchrun's own statements on its `_batchrun_` tables run as the URL's user
    /// (`PostgresStoreConnection.itemRole`).
    package init(url: String, busyTimeout: Double = 5, fence: WriteFence? = nil, role: String? = nil, idleTimeout: Double? = nil) throws {
        location = try PostgresLocation(url: url)
        self.fence = fence
        do {
            // random_page_cost: a save joins a batch's VALUES list to the table by its key. At the
            // default cost of a random page (4, a spinning disk) the planner hashes the whole table
            // for each batch instead of looking its rows up by key: 7 times slower on 100,000 rows,
            // and worse as the table grows. 1.1 is the usual setting for SSDs and cached data.
            // One statement for all settings: a small queue item opens a store for every run.
            // default_transaction_read_only: a write transaction begins `BEGIN READ WRITE`, sent
            // without waiting for its answer (`PostgresStoreConnection.began`); should that BEGIN
            // fail (a cancel reaching it), the statements sent after it run outside any transaction,
            // and read-only they cannot write: nothing commits on its own.
            var settings = ["lock_timeout": "\(Self.milliseconds(busyTimeout))ms", "random_page_cost": "1.1",
                            "default_transaction_read_only": "on"]
            if let idle = idleTimeout { settings["idle_in_transaction_session_timeout"] = "\(Self.milliseconds(idle))ms" }
            let statement = { (settings: [String: String]) in
                "SELECT " + settings.sorted { $0.key < $1.key }.map { "set_config('\($0.key)', '\($0.value)', false)" }
                    .joined(separator: ", ")
            }
            let setUp = statement(settings)
            // An import lane waits for a lock at most 200 ms: the holder may be a later batch of
            // the same import, which waits for this one's commit (`ImportLanes`); the batch then
            // goes to the writer, which waits the whole busy_timeout.
            settings["lock_timeout"] = "\(min(Self.milliseconds(busyTimeout), 200))ms"
            let laneSetUp = statement(settings)
            connections = try Connections(location: location, role: role, setUpWriter: { writer in try writer.simple(setUp) },
                                          setUpLane: { lane in try lane.simple(laneSetUp) })
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(path: location.description, reason: Self.describe(error, location: location))
        }
    }

    deinit {
        connections.closeAll()
    }

    // MARK: StoreBackend

    package func read<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        let (connection, pid) = try connections.takeReader()
        defer { connections.putBack(connection, pid: pid) }
        return try transaction(on: connection, pid: pid, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                               interruptedBy: interrupter, body)
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T {
        try await offThread { try self.read(interruptedBy: nil, body) }
    }

    package func write<T>(interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        try write(lane: 0, interruptedBy: interrupter, body)
    }

    /// Sessions besides the writer for one import, up to `maximumImportLanes` for all of this
    /// store's imports at once: its batches are COPYed over several sessions at once, so the
    /// server parses and inserts on several cores (a session's backend is one process, one
    /// core). A lane's session is set up as the writer's, but for waiting for a lock at most
    /// 200 ms. Sessions are kept for the next import once released.
    package func reserveImportLanes(_ count: Int) -> [Int] {
        connections.reserveLanes(count, of: Self.maximumImportLanes)
    }

    /// Import sessions a store holds at most, whatever its imports ask (`parallel:` up to 64, in
    /// as many jobs at once as `--jobs` allows): a queue item's job file cannot take more of the
    /// shared server's connections than this, the writer and the pooled readers.
    static let maximumImportLanes = 16

    package func releaseImportLanes(_ lanes: [Int]) {
        connections.releaseLanes(lanes)
    }

    package func openImportLane(_ lane: Int) {
        guard lane > 0 else { return }
        _ = try? connections.withWriter(lane: lane) { _, _ in }
    }

    /// Lane 0 is `write`'s session.
    package func write<T>(lane: Int, interruptedBy interrupter: Interrupter?, _ body: (any StoreConnection) throws -> T) throws -> T {
        try connections.withWriter(lane: lane) { connection, pid in
            try transaction(on: connection, pid: pid, begin: "BEGIN READ WRITE", interruptedBy: interrupter) { connection in
                let value = try body(connection)
                if let fence, try connection.value(fence.sql, SQLArguments(fence.arguments)) == nil {
                    throw StoreError.fenced(fence.refusal)
                }
                return value
            }
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1000).rounded()))
    }

    package func write<T: Sendable>(_ body: @escaping @Sendable (any StoreConnection) throws -> T) async throws -> T {
        try await offThread { try self.write(interruptedBy: nil, body) }
    }

    package var hasStoreWideWriteLock: Bool { false }

    /// The generation: a number for each server snapshot seen, the last one kept. 0: unknown.
    private let generations = Mutex<(snapshot: String, number: UInt64)>(("", 0))

    package var changeGeneration: UInt64 {
        // On a reader, outside any transaction: one round trip, and no wait for the writer.
        guard let (connection, pid) = try? connections.takeReader() else { return 0 }
        defer { connections.putBack(connection, pid: pid) }
        guard let snapshot = try? Self.snapshot(on: connection) else { return 0 }
        return number(of: snapshot)
    }

    /// The generation of a server snapshot: the last one's number, or the next for a new one.
    private func number(of snapshot: String) -> UInt64 {
        generations.withLock { generations in
            if generations.snapshot != snapshot {
                generations.snapshot = snapshot
                generations.number += 1
            }
            return generations.number
        }
    }

    package func generation(in connection: any StoreConnection) throws -> UInt64 {
        number(of: try Self.snapshot(on: connection) ?? "")
    }

    package func isUnchanged(since generation: UInt64, in connection: any StoreConnection) throws -> Bool {
        guard generation != 0 else { return false }
        let now = try Self.snapshot(on: connection)
        return generations.withLock { $0.number == generation && $0.snapshot == now }
    }

    private static func snapshot(on connection: any StoreConnection) throws -> String? {
        try connection.value("SELECT pg_current_snapshot()::text")?.string
    }

    package func describeFailure(_ error: any Error) -> String {
        Self.describe(error, location: location)
    }

    package static func describe(_ error: any Error, location: PostgresLocation) -> String {
        if let failure = error as? PostgresConnectFailure { return failure.message }
        if error is PSQLError { return "cannot reach the server at \(location)" }
        guard let error = error as? PostgresError else { return "\(error)" }
        switch error.storeFailure {
        case .busy: return "another transaction held a lock the store needed (\(error.databaseMessage))"
        case .rolledBackForAnother: return "the server rolled the transaction back for another's sake (\(error.databaseMessage))"
        case .diskFull: return "the server's disk is full"
        case .readOnly: return "the store cannot be written (\(error.databaseMessage))"
        default: break
        }
        if error.sqlState == nil { return "cannot reach the server at \(location) (\(error.message))" }
        return error.databaseMessage
    }

    package func makeBulkLoader(for entity: Entity) -> any BulkLoader {
        // Keys drawn ahead go on a reader session, outside any transaction (a reader's
        // transactions are read-only, and `nextval` writes).
        PostgresBulkLoader(entity: entity, sideSession: { [connections] body in
            let (connection, pid) = try connections.takeReader()
            defer { connections.putBack(connection, pid: pid) }
            try body(connection)
        })
    }

    /// The control connection, made at first use: most runs never cancel or listen.
    private func control() throws -> PostgresConnection {
        try connections.control { try Self.connect(location) }
    }

    /// On the control connection: PostgresNIO sends `LISTEN` with the first listener of a channel.
    /// When the server closes that connection (a restart), a new one is made in the background,
    /// with backoff, and listens again; `handler` is then called once, for what was missed.
    package func listen(channel: String, _ handler: @escaping @Sendable () -> Void) throws {
        try connections.listen(channel: channel, handler) { [location] in try Self.connect(location) }
    }

    // MARK: Transactions

    /// `body` in one transaction on `connection`; `interrupter` cancels its statement in flight
    /// (and any started afterwards throws without running).
    private func transaction<T>(on connection: PostgresStoreConnection, pid: Int32, begin: String, interruptedBy interrupter: Interrupter?,
                                _ body: (any StoreConnection) throws -> T) throws -> T {
        let control: @Sendable () throws -> PostgresConnection = { [connections, location] in try connections.control { try Self.connect(location) } }
        func run() throws -> T {
            try connection.began(begin)
            do {
                let value = try body(connection)
                try connection.commit()
                connection.transactionEnded(committed: true)
                return value
            } catch {
                try? connection.simple("ROLLBACK")
                connection.transactionEnded(committed: false)
                throw error
            }
        }
        guard let interrupter else { return try run() }
        let ended = TransactionEnd()
        defer { ended.mark() }
        return try interrupter.running(stoppedBy: {
            // The cancel request goes on the control connection, from a thread of its own, and
            // again every half second until the transaction is over: the server drops a cancel
            // that reaches the session while it waits for the client's next message (between
            // the messages of one statement, or two statements), and a statement in flight was
            // seen to run on for minutes after one.
            Thread.detachNewThread {
                var bindings = PostgresBindings()
                bindings.append(StoreValue.integer(Int64(pid)))
                while !ended.isMarked {
                    guard let connection = try? control(), !connection.isClosed else {
                        Backoff.wait(0.05, until: { ended.isMarked })
                        continue
                    }
                    _ = try? connection.query(PostgresQuery(unsafeSQL: "SELECT pg_cancel_backend($1::int)", binds: bindings),
                                             logger: Logger(label: "batchrun.postgres")).wait()
                    Backoff.wait(0.5, until: { ended.isMarked })
                }
            }
        }, orThrow: { PostgresInterrupted() }) {
            try run()
        }
    }

    // MARK: Connecting

    /// A new session, connected as libpq would (`PostgresConnector`: TLS by `sslmode`, a Unix
    /// socket, `connect_timeout`); throws a `PostgresConnectFailure` that says why it could not.
    package static func connect(_ location: PostgresLocation) throws -> PostgresStoreConnection {
        PostgresStoreConnection(try PostgresConnector.connect(location))
    }
}

/// The backend's connections: the writer, used under its lock by one transaction at a time, and
/// idle readers. A connection the server closed (a restart, a failover, a terminated session)
/// is replaced by a new session when it is next needed: the writer by one set up as the first
/// was, a reader by any idle one still open or a new one.
private final class Connections: @unchecked Sendable {
    // SAFETY: `writer` and `writerPID` are touched only inside `withWriter` (and `init`), under
    // `writerLock`; `readers` only under `lock`. A reader taken out is used by the thread that
    // took it alone, until it is put back. So no connection (not Sendable: it caches statement
    // texts) is used by two threads at once. Of the control connection only its
    // PostgresConnection leaves the lock, which is Sendable (its requests go through its
    // channel's event loop). `listeners`, `isClosing`, `watchedControl`, `lanes` (the array; each
    // lane guards its session) and `lanesInUse` are touched only under `lock`.
    private let writerLock = NSLock()
    private var writer: PostgresStoreConnection
    private var writerPID: Int32
    /// Import lanes 1, 2, ...: each a writer session of its own, under its own lock, made at first use.
    private var lanes: [Lane] = []
    /// Lane numbers an import holds (`reserveLanes`).
    private var lanesInUse: Set<Int> = []
    /// Sets a new writer session up (its settings) before its first transaction.
    private let setUpWriter: @Sendable (PostgresStoreConnection) throws -> Void
    /// Sets a new import lane's session up instead: the writer's settings, its own lock timeout.
    private let setUpLane: @Sendable (PostgresStoreConnection) throws -> Void
    private let lock = NSLock()
    private var readers: [(connection: PostgresStoreConnection, pid: Int32)] = []
    private var controlConnection: PostgresStoreConnection?

    private let location: PostgresLocation
    /// The role every session of this store takes (`--item-role`), nil: the URL's user.
    private let role: String?

    init(location: PostgresLocation, role: String?, setUpWriter: @escaping @Sendable (PostgresStoreConnection) throws -> Void,
         setUpLane: @escaping @Sendable (PostgresStoreConnection) throws -> Void) throws {
        self.location = location
        self.role = role
        self.setUpWriter = { [role] session in
            try setUpWriter(session)
            try session.take(role: role)
        }
        self.setUpLane = { [role] session in
            try setUpLane(session)
            try session.take(role: role)
        }
        (writer, writerPID) = try PostgresSessionPool.session(for: location)
        try self.setUpWriter(writer)
    }

    /// `body` on the writer (`lane` 0) or an import lane's session, made again first when the
    /// server closed it. A new session that cannot be made throws (a lost connection:
    /// `StoreFailure.connectionLost`), and the next call tries again.
    func withWriter<T>(lane: Int = 0, _ body: (PostgresStoreConnection, Int32) throws -> T) throws -> T {
        if lane > 0 {
            return try self.lane(lane).withSession(making: {
                let (session, pid) = try PostgresSessionPool.session(for: location)
                try setUpLane(session)
                return (session, pid)
            }, body)
        }
        writerLock.lock()
        defer { writerLock.unlock() }
        if writer.connection.isClosed {
            (writer, writerPID) = try makeWriter()
            Reconnection.noteNewSession()
        }
        return try body(writer, writerPID)
    }

    /// A new writer session, set up.
    private func makeWriter() throws -> (PostgresStoreConnection, Int32) {
        let (session, pid) = try PostgresSessionPool.session(for: location)
        try setUpWriter(session)
        return (session, pid)
    }

    /// Import lane `number` (1, 2, ...), made at first use.
    private func lane(_ number: Int) -> Lane {
        lock.withLock {
            while lanes.count < number { lanes.append(Lane()) }
            return lanes[number - 1]
        }
    }

    /// Up to `count` lane numbers no other import holds, the lowest first (their sessions
    /// reused), with at most `maximum` held at once.
    func reserveLanes(_ count: Int, of maximum: Int) -> [Int] {
        lock.withLock {
            let numbers = (1...maximum).filter { !lanesInUse.contains($0) }.prefix(max(0, count))
            lanesInUse.formUnion(numbers)
            return Array(numbers)
        }
    }

    func releaseLanes(_ numbers: [Int]) {
        lock.withLock { lanesInUse.subtract(numbers) }
    }

    /// One import lane: its session (none until first used), under its own lock.
    private final class Lane: @unchecked Sendable {
        // SAFETY: `session` is touched only under `lock`, by `withSession` and `take`.
        private let lock = NSLock()
        private var session: (connection: PostgresStoreConnection, pid: Int32)?

        func withSession<T>(making make: () throws -> (PostgresStoreConnection, Int32),
                            _ body: (PostgresStoreConnection, Int32) throws -> T) throws -> T {
            lock.lock()
            defer { lock.unlock() }
            if session == nil || session!.connection.connection.isClosed {
                if session != nil { Reconnection.noteNewSession() }
                session = try make()
            }
            return try body(session!.connection, session!.pid)
        }

        /// The session, taken out (for the pool when the store closes).
        func take() -> (connection: PostgresStoreConnection, pid: Int32)? {
            lock.withLock {
                defer { session = nil }
                return session
            }
        }
    }

    /// An idle reader still open, or a new session.
    func takeReader() throws -> (PostgresStoreConnection, Int32) {
        var replacing = false
        while let idle = lock.withLock({ readers.popLast() }) {
            if !idle.connection.connection.isClosed { return idle }
            replacing = true
        }
        let session = try PostgresSessionPool.session(for: location)
        if replacing { Reconnection.noteNewSession() }
        try session.0.take(role: role)
        return session
    }

    /// The control connection (only ever used for requests that are safe on a shared
    /// connection: a cancel, a listen), made under `lock` at first use, and again when the
    /// server closed it (a request on a closed connection would never be answered).
    func control(connecting: () throws -> PostgresStoreConnection) throws -> PostgresConnection {
        try lock.withLock {
            if let controlConnection, !controlConnection.connection.isClosed { return controlConnection.connection }
            let made = try connecting()
            controlConnection = made
            for listener in listeners { made.connection.addListener(channel: listener.channel) { _, _ in listener.handler() } }
            return made.connection
        }
    }

    /// Channels listened to on the control connection, and what each one calls (under `lock`).
    private var listeners: [(channel: String, handler: @Sendable () -> Void)] = []
    /// Set by `closeAll`: a control connection lost after it is not made again.
    private var isClosing = false
    /// The control connection whose closing `listenAgain` waits for.
    private var watchedControl: ObjectIdentifier?

    /// `handler` for each notification on `channel`, on this control connection and on each one
    /// made after the server closed it.
    func listen(channel: String, _ handler: @escaping @Sendable () -> Void,
                connecting: @escaping @Sendable () throws -> PostgresStoreConnection) throws {
        lock.withLock { listeners.append((channel, handler)) }
        let connection = try control(connecting: connecting)
        listenAgain(after: connection, connecting: connecting)
    }

    /// Once `connection` closes: a new control connection, tried after `Reconnection`'s pauses
    /// until one is made (its listeners added again by `control`),
    /// then each listener told once (a notification sent meanwhile was lost), and so on.
    private func listenAgain(after connection: PostgresConnection, connecting: @escaping @Sendable () throws -> PostgresStoreConnection) {
        // One watch per connection, however many channels listen on it.
        let watched = lock.withLock { () -> Bool in
            defer { watchedControl = ObjectIdentifier(connection) }
            return watchedControl == ObjectIdentifier(connection)
        }
        if watched { return }
        connection.closeFuture.whenComplete { [weak self] _ in
            Thread.detachNewThread { [weak self] in
                var pause = 0.0
                let lost = Date()
                while let self, !self.lock.withLock({ self.isClosing }) {
                    if let made = try? self.control(connecting: connecting) {
                        for listener in self.lock.withLock({ self.listeners }) { listener.handler() }
                        self.listenAgain(after: made, connecting: connecting)
                        return
                    }
                    pause = Reconnection.pause(lostFor: Date().timeIntervalSince(lost), previous: pause)
                    Backoff.wait(pause, until: { self.lock.withLock { self.isClosing } })
                }
            }
        }
    }

    /// A reader the server closed is not put back: released, it closes its end too.
    func putBack(_ connection: PostgresStoreConnection, pid: Int32) {
        guard !connection.connection.isClosed else { return }
        lock.withLock { readers.append((connection, pid)) }
    }

    /// The writer and the readers go to the process's session pool, for the next store.
    func closeAll() {
        writerLock.withLock { PostgresSessionPool.keep(writer, pid: writerPID, for: location) }
        for lane in lock.withLock({ lanes }) {
            if let (session, pid) = lane.take() { PostgresSessionPool.keep(session, pid: pid, for: location) }
        }
        for (reader, pid) in lock.withLock({ readers }) { PostgresSessionPool.keep(reader, pid: pid, for: location) }
        let control = lock.withLock { () -> PostgresStoreConnection? in
            isClosing = true
            return controlConnection
        }
        if let control { _ = try? control.connection.close().wait() }
    }
}

/// Whether a transaction that may be cancelled is over: its cancel requests stop then.
private final class TransactionEnd: Sendable {
    private let ended = Atomic<Bool>(false)

    var isMarked: Bool { ended.load(ordering: .acquiring) }

    func mark() {
        ended.store(true, ordering: .releasing)
    }
}

/// A statement stopped by an interrupt before it reached the server.
struct PostgresInterrupted: StoreDatabaseError, CustomStringConvertible {
    package var storeFailure: StoreFailure? { .interrupted }
    package var databaseMessage: String { "interrupted" }
    package var description: String { "the statement was interrupted before it ran (the context was interrupted)" }
}
#endif
