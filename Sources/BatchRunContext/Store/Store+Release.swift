import Foundation

extension Store {
    /// Lets go of `store` once every other reference to it is gone, waiting up to `timeout`
    /// seconds for them: the threads of a run that ended (a feed's reader, a job's thread) let go
    /// of it a moment after the run returns. The last reference closes the store; on SQLite that
    /// copies the WAL into the database file and removes it, so a process that exits next leaves
    /// the one file, whole (left to those threads, the process often exited first, and a copy of
    /// the file alone then lacked the last batches). True when this was the last reference.
    ///
    /// ```swift
    /// var store: Store? = opened.store
    /// opened = nil
    /// await Store.release(&store)
    /// ```
    @discardableResult
    package static func release(_ store: inout Store?, waitingUpTo timeout: Double = 2) async -> Bool {
        let deadline = ProcessInfo.processInfo.systemUptime + timeout   // monotonic
        var last = isKnownUniquelyReferenced(&store)
        while !last && store != nil && ProcessInfo.processInfo.systemUptime < deadline {
            // Not a blocking sleep: a task that still holds the store may need this thread.
            try? await Task.sleep(for: .milliseconds(1))
            last = isKnownUniquelyReferenced(&store)
        }
        store = nil
        return last
    }
}
