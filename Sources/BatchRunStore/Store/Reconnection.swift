import Foundation

/// Work that is run again when the connection to the server was lost (`StoreFailure.connectionLost`):
/// after a pause of 0.1 s for the first 5 s of the loss, then doubling up to 0.5 s (with
/// jitter; `pause(lostFor:previous:)`), for up to `window` seconds from the first loss; the backend makes a new session at the next try. Past the window, the
/// last error comes back as `ReconnectGaveUp`, which says so. `work` must start from a fresh read:
/// the transaction in flight was rolled back with the connection.
///
/// ```swift
/// var reconnection = Reconnection(window: store.reconnectWindow)
/// let rows = try reconnection.run(isCancelled: { false }) { try store.readRecords { db in ... } }
/// reconnection.reconnects   // 1 after a server restart that `run` rode out
/// ```
package struct Reconnection {
    /// Seconds from the first lost connection to giving up (the store's `reconnect`).
    package let window: Double
    /// Losses ridden out: each time work succeeded after the connection was lost.
    package private(set) var reconnects = 0

    package init(window: Double) {
        self.window = window
    }

    /// `work`, tried again while the connection is lost, until it succeeds, fails otherwise,
    /// `isCancelled` says so (also during a pause) or the window is 0 (its error thrown as it is),
    /// or the window has passed.
    /// `alreadyDone`, asked before each new try (on a new session), returns `work`'s outcome
    /// when the lost try had done it after all (a COMMIT whose answer was lost): it is not tried again.
    package mutating func run<T>(isCancelled: () -> Bool = { false }, alreadyDone: () throws -> T? = { nil },
                                 _ work: () throws -> T) throws -> T {
        var lostSince: Date?
        var pause = 0.0
        // Sessions the backend made again on this thread for `work` (one the server had closed
        // while nothing used it is replaced without an error): a reconnect too.
        let sessions = NewSessions()
        let key = Self.threadKey
        let outer = Thread.current.threadDictionary[key]
        Thread.current.threadDictionary[key] = sessions
        defer { Thread.current.threadDictionary[key] = outer }
        while true {
            do {
                if lostSince != nil, let value = try alreadyDone() {
                    reconnects += 1
                    return value
                }
                let value = try work()
                if lostSince != nil || sessions.count > 0 {
                    reconnects += 1
                    BatchRunMetrics.reconnect()
                }
                return value
            } catch where Self.isConnectionLost(error) {
                let since = lostSince ?? Date()
                lostSince = since
                let left = window - Date().timeIntervalSince(since)
                if isCancelled() || window <= 0 { throw error }
                if left <= 0 { throw ReconnectGaveUp(cause: Self.underlying(error), window: window) }
                pause = Self.pause(lostFor: Date().timeIntervalSince(since), previous: pause)
                // A cancel during the pause is seen within `Backoff.checkInterval`: its error, as above.
                guard Backoff.wait(min(left, pause * Double.random(in: 0.75...1.25)), until: isCancelled) else { throw error }
            }
        }
    }

    /// Tells the work running on this thread under `run` (if any) that a session the server
    /// had closed was made again for it (the backend calls this).
    package static func noteNewSession() {
        (Thread.current.threadDictionary[threadKey] as? NewSessions)?.count += 1
    }

    private static let threadKey = "batchrun.reconnection"

    /// Counts `noteNewSession` calls; used by its thread alone.
    private final class NewSessions {
        var count = 0
    }

    /// The longest pause between two tries: a server back after a restart is found within it.
    package static let longestPause = 0.5

    /// The pause before the next try when the connection has been lost for `lostFor` seconds and
    /// the last pause was `previous` (0 before the first): 0.1 s for the first 5 s, when a
    /// restart or a failover is likely to end (a pause that had doubled would find the server
    /// back up to 0.5 s late; a refused try costs a loopback or LAN server a few microseconds),
    /// then doubling from there up to `longestPause`, so workers that wait longer leave the
    /// server alone while it recovers.
    package static func pause(lostFor: Double, previous: Double) -> Double {
        if lostFor < 5 { return 0.1 }
        return min(max(previous, 0.1) * 2, longestPause)
    }

    /// True when `error` (or the error beneath it: a step's, a context's) is a lost connection.
    package static func isConnectionLost(_ error: any Error) -> Bool {
        let error = underlying(error)
        return !(error is ReconnectGaveUp) && StoreFailure(of: error) == .connectionLost
    }

    /// The error beneath wrappers that say where it happened.
    private static func underlying(_ error: any Error) -> any Error {
        if let wrapped = error as? any UnderlyingError, let cause = wrapped.underlyingError { return underlying(cause) }
        return error
    }
}

/// An error that wraps another (a step's error around the store's).
package protocol UnderlyingError: Error {
    var underlyingError: (any Error)? { get }
}

/// The connection stayed lost for longer than the store's `reconnect` window.
package struct ReconnectGaveUp: StoreDatabaseError, CustomStringConvertible {
    package let cause: any Error
    package let window: Double

    package var storeFailure: StoreFailure? { .connectionLost }

    package var databaseMessage: String { description }

    package var description: String {
        let message = (cause as? any StoreDatabaseError)?.databaseMessage ?? "\(cause)"
        let seconds = window == window.rounded() ? String(Int(window)) : String(window)
        return "\(message); the connection to the server could not be made again within reconnect (\(seconds)s)"
    }
}
