import Synchronization

/// What the thread of a `--keep` prune tells the worker's loop: whether one is under way, and
/// what the last one did.
final class PruneOutcome: Sendable {
    private let state = Mutex<(running: Bool, said: String?)>((false, nil))

    /// True when no prune was under way: this one starts.
    func start() -> Bool {
        state.withLock { state in
            if state.running { return false }
            state.running = true
            return true
        }
    }

    func end(_ said: String?) {
        state.withLock { $0 = (false, said) }
    }

    func take() -> String? {
        state.withLock { state in
            defer { state.said = nil }
            return state.said
        }
    }
}
