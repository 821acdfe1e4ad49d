#if PostgreSQL
import Logging
import NIOCore
import PostgresNIO

/// A `COPY ... FROM STDIN` through PostgresNIO 1.33.2's `copyFrom`, run so that no copy step
/// meets a session the server ended.
///
/// PostgresNIO stops the process (`preconditionFailure("Copy mode is only supported for
/// extended queries")`) when a copy step (`write`'s check that the server can take data,
/// `CopyDone`, `CopyFail`) reaches its state machine after the session left the query: the
/// machine is `.closing`/`.closed` from the moment it meets a FATAL error (a restart's or
/// `pg_terminate_backend`'s "terminating connection due to administrator command") or the
/// socket's end, while the handler that guards the steps lets them through until it is removed
/// from the pipeline, a later turn of the event loop. The earlier guard (an actor on the event
/// loop checking `connection.isClosed` before each step) did not hold: `write`, `copyFrom` and
/// its `CopyDone`/`CopyFail` are nonisolated async functions, which ran on the concurrency pool
/// and reached the loop through `eventLoop.execute`, a later turn than the check (the crash,
/// reproduced with that guard: `checkBackendCanReceiveCopyData` called from such a queued
/// `write`); and `isClosed` is the channel's state, which over TLS stays open while the machine
/// is already `.closing` (the TLS close waits for the server's close_notify).
///
/// Here:
/// - the whole COPY runs as a task whose executor is the connection's event loop
///   (`EventLoopTaskExecutor`), so `copyFrom`'s own steps run on the loop, each right after the
///   code before it, with no other turn of the loop in between;
/// - `PostgresSessionEnd`, a handler behind PostgresNIO's in the pipeline, records the moment
///   the machine leaves the query: PostgresNIO passes on the error it closes with (and the
///   channel's end), and a close asked for goes through it first;
/// - before each step, in the same turn, the COPY looks at that record; once the session ended
///   it waits for good instead of stepping (the caller is not kept waiting:
///   `PostgresStoreConnection.finished` fails its request when the connection closes). What
///   stays is one suspended task for each connection lost during a COPY.
///
/// ```swift
/// try PostgresCopyRun(connection: connection, logger: logger)
///     .copy(into: "flights", columns: names, pieces: 20) { index in buffer(index) }
///     .wait()
/// ```
struct PostgresCopyRun: Sendable {
    package let connection: PostgresConnection
    let logger: Logger

    /// The connection's channel, which PostgresNIO keeps to itself (an internal `let`, read by
    /// reflection); nil when a later PostgresNIO names it otherwise, and then imports do not COPY.
    package static func channel(of connection: PostgresConnection) -> (any Channel)? {
        Mirror(reflecting: connection).descendant("channel") as? any Channel
    }

    /// `COPY table (columns) FROM STDIN`, in text format or `binary`, of `pieces` pieces, each
    /// made by `piece` on the event loop as it is needed (made while the server reads the one
    /// before). A piece that throws ends the COPY with `CopyFail`, and the COPY fails with its error.
    package func copy(into table: String, columns: [String], binary: Bool = false, pieces: Int,
              piece: @escaping @Sendable (Int) throws -> ByteBuffer) -> EventLoopFuture<Void> {
        let loop = connection.eventLoop
        let done = loop.makePromise(of: Void.self)
        guard let channel = Self.channel(of: connection) else {
            done.fail(PostgresStoreConnection.closed)
            return done.futureResult
        }
        var columns = columns
        if binary, let last = columns.popLast() {
            // PostgresNIO 1.33 writes `WITH (FORMAT text)` itself, and has no other format. Its
            // statement is `COPY "table"("a","b") FROM STDIN WITH (FORMAT text)`, each name put
            // in between quotes as given (its documented warning): the last name ends the list
            // and the statement, and comments out the rest of its line, the only one. The
            // names are the model's columns, checked names without a quote or a line break
            // (`PostgresStoreConnection.copy` sends text otherwise).
            columns.append(last + "\") FROM STDIN WITH (FORMAT binary) --")
        }
        Task(executorPreference: EventLoopTaskExecutor(loop)) { [connection, logger, columns] in
            do {
                try await Self.run(connection, channel: channel, table: table, columns: columns, logger: logger,
                                   pieces: pieces, piece: piece)
                done.succeed()
            } catch {
                done.fail(error)
            }
        }
        return done.futureResult
    }

    /// Runs on the event loop throughout (the task's executor); nonisolated, so neither it nor
    /// `copyFrom` hops anywhere else.
    private static func run(_ connection: PostgresConnection, channel: any Channel, table: String, columns: [String],
                            logger: Logger, pieces: Int, piece: @Sendable (Int) throws -> ByteBuffer) async throws {
        channel.eventLoop.preconditionInEventLoop()
        let end = try PostgresSessionEnd.watching(channel)
        if end.ended { await parkLostCopy() }
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            for index in 0..<pieces {
                let buffer: ByteBuffer
                do {
                    buffer = try piece(index)
                } catch {
                    // `copyFrom` sends `CopyFail` as soon as this throws.
                    if end.ended { await parkLostCopy() }
                    throw error
                }
                // Checked in the same turn as the step after it (`write` runs its first part
                // synchronously on the loop).
                if end.ended { await parkLostCopy() }
                do {
                    try await writer.write(buffer)
                } catch {
                    // `copyFrom` sends `CopyFail` as soon as this throws.
                    if end.ended { await parkLostCopy() }
                    throw error
                }
            }
            // `copyFrom` sends `CopyDone` as soon as this returns.
            if end.ended { await parkLostCopy() }
        }
    }

    /// Never returns.
    private static func parkLostCopy() async -> Never {
        while true { try? await Task.sleep(for: .seconds(86_400)) }
    }
}
#endif
