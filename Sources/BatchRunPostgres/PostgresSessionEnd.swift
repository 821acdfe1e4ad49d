#if PostgreSQL
import NIOCore

/// A handler at the end of a PostgresNIO connection's pipeline that records when the session
/// has ended as PostgresNIO's state machine sees it, for `PostgresCopyRun`. PostgresNIO's
/// handler, on leaving a query for good (a FATAL error from the server, a protocol error, the
/// socket's end), sets its machine to closing or closed and then passes the error (or the
/// channel's end) on to the handler after it, in the same turn of the loop; a close asked for on
/// the channel passes here before it reaches PostgresNIO's handler. Read and written on the
/// channel's event loop only.
///
/// ```swift
/// let end = try PostgresSessionEnd.watching(channel)   // on the channel's event loop
/// if end.ended { ... }                                 // no more copy steps
/// ```
final class PostgresSessionEnd: ChannelDuplexHandler {
    package typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    /// True once the session ended (or began to close).
    package private(set) var ended = false

    /// The channel's watcher, added at the end of its pipeline at the first call; on the
    /// channel's event loop.
    package static func watching(_ channel: any Channel) throws -> PostgresSessionEnd {
        let pipeline = channel.pipeline.syncOperations
        if let existing = try? pipeline.handler(type: PostgresSessionEnd.self) {
            return existing
        }
        let end = PostgresSessionEnd()
        end.ended = !channel.isActive
        try pipeline.addHandler(end, position: .last)
        return end
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ended = true
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended = true
        context.fireChannelInactive()
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        ended = true
        context.close(mode: mode, promise: promise)
    }
}
#endif
