import Synchronization

/// Which job of this run changed which rows, so a conflict can name who changed the row,
/// kept so that memory does not grow with the work:
///
/// - every save's keys stay in `recent` only while a context that read before that save is
///   still open (it may still meet the save as an optimistic conflict);
/// - after that, inserted and updated keys join `owners` (the job that last inserted or
///   updated each key, for constraint conflicts; see `KeyOwners`: ranges of whole 64-key
///   chunks, and a bit mask per job for chunks written in part), and deleted keys are dropped.
///
/// A batch-update or delete over a whole table therefore keeps a few ranges, not a key per row,
/// and one over a scattered half of the table 8 bytes and a job number per 64 keys.
package final class ChangeLog: Sendable {
    private struct Entry {
        var sequence: UInt64
        var job: String
        var entity: String
        var keys: KeySet
        var isDelete: Bool
    }

    private struct State {
        /// Saves that an open context may still conflict with, oldest first.
        var recent: [Entry] = []
        /// Per entity: who last inserted or updated each key, for saves no open context can meet.
        var owners: [String: KeyOwners] = [:]
        /// The read sequences of open contexts (a context that read and has not saved or reset),
        /// with how many contexts hold each.
        var openReads: [UInt64: Int] = [:]
        /// The last save number recorded.
        var latest: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Records a save's keys, inside its transaction (`forget` takes them back if it rolls back).
    package func record(sequence: UInt64, job: String, changes: [(entity: String, keys: KeySet, isDelete: Bool)]) {
        state.withLock { state in
            for change in changes where !change.keys.isEmpty {
                state.recent.append(Entry(sequence: sequence, job: job, entity: change.entity, keys: change.keys,
                                          isDelete: change.isDelete))
            }
            state.latest = max(state.latest, sequence)
            Self.prune(&state)
        }
    }

    /// Takes back the keys of a save whose transaction rolled back.
    package func forget(sequences: [UInt64]) {
        guard !sequences.isEmpty else { return }
        let forgotten = Set(sequences)
        state.withLock { state in state.recent.removeAll { forgotten.contains($0.sequence) } }
    }

    /// A context read at `sequence`: saves after it are kept until `close(read:)`.
    package func open(read sequence: UInt64) {
        state.withLock { $0.openReads[sequence, default: 0] += 1 }
    }

    /// The context that read at `sequence` saved, reset or went away.
    package func close(read sequence: UInt64) {
        state.withLock { state in
            guard let count = state.openReads[sequence] else { return }
            state.openReads[sequence] = count > 1 ? count - 1 : nil
            Self.prune(&state)
        }
    }

    /// The job of this run that last changed the row in a save numbered above `sequence`
    /// (an optimistic conflict: the caller's read at `sequence` is open, so those saves are kept).
    package func lastWriter(of id: ObjectID, after sequence: UInt64) -> String? {
        state.withLock { state in
            state.recent.last { $0.sequence > sequence && $0.entity == id.entity && $0.keys.contains(id) }?.job
        }
    }

    /// The job of this run that last inserted or updated the row (a constraint conflict).
    package func lastWriter(of id: ObjectID) -> String? {
        lastWriters(of: [id], entity: id.entity)[0]
    }

    /// `lastWriter(of:)` of rows of one entity, under one lock (a batch's constraint conflicts).
    package func lastWriters(of ids: [ObjectID], entity: String) -> [String?] {
        assert(ids.allSatisfy { $0.entity == entity }, "rows of another entity")
        return state.withLock { state in
            let recent = state.recent.lazy.filter { !$0.isDelete && $0.entity == entity }
            let owners = state.owners[entity]
            return ids.map { id in
                if let entry = recent.last(where: { $0.keys.contains(id) }) { return entry.job }
                return owners?.owner(of: id)
            }
        }
    }

    /// How many entries and key ranges are kept (for tests of the bound).
    package var size: (recent: Int, ownerRanges: Int) {
        state.withLock { state in (state.recent.count, state.owners.values.map(\.rangeCount).reduce(0, +)) }
    }

    /// Moves every save that no open context can meet out of `recent`.
    private static func prune(_ state: inout State) {
        let oldestOpen = state.openReads.keys.min() ?? state.latest
        guard let first = state.recent.first, first.sequence <= oldestOpen else { return }
        let settled = state.recent.prefix { $0.sequence <= oldestOpen }
        for entry in settled where !entry.isDelete {
            state.owners[entry.entity, default: KeyOwners()].assign(entry.keys, to: entry.job)
        }
        state.recent.removeFirst(settled.count)
    }

    package init() {
    }
}
