import Synchronization

/// Numbers the store's saves and hands each `DidSave` to every subscriber.
package final class SaveNotifications: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        var published: UInt64 = 0
        var subscribers: [Int: AsyncStream<DidSave>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state = Mutex(State())

    /// The number of the last save.
    var currentSequence: UInt64 { state.withLock { $0.sequence } }

    /// The number for the save being committed now; call on the writer, inside the transaction.
    package func nextSequence() -> UInt64 {
        state.withLock { state in
            state.sequence += 1
            return state.sequence
        }
    }

    /// The number of the last save handed to subscribers (numbers of rolled-back saves are skipped).
    package var publishedSequence: UInt64 { state.withLock { $0.published } }

    package var hasSubscribers: Bool { state.withLock { !$0.subscribers.isEmpty } }

    package func subscribe() -> AsyncStream<DidSave> {
        let (stream, continuation) = AsyncStream<DidSave>.makeStream()
        let id = state.withLock { state in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    package func publish(_ save: DidSave) {
        let subscribers = state.withLock { state in
            state.published = max(state.published, save.sequence)
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(save) }
    }

    package func finish() {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.finish() }
    }

    package init() {
    }
}
