import Synchronization

/// Which job changed which rows during this run, so a conflict can name who changed the row.
///
/// Kept compact: integer keys are stored as ranges (a batch of consecutive ids is one range),
/// other keys as sets. Looked up only when a conflict is found.
final class ChangeLog: Sendable {
    private struct Entry {
        var sequence: UInt64
        var job: String
        var entity: String
        var keys: KeySet
    }

    private let entries = Mutex<[Entry]>([])

    func record(_ save: DidSave) {
        var byEntity: [String: KeySet] = [:]
        for changes in [save.inserted, save.updated, save.deleted] {
            for (entity, ids) in changes where !ids.isEmpty {
                var keys = byEntity[entity] ?? KeySet()
                for id in ids { keys.insert(id) }
                byEntity[entity] = keys
            }
        }
        guard !byEntity.isEmpty else { return }
        entries.withLock { entries in
            for (entity, keys) in byEntity {
                entries.append(Entry(sequence: save.sequence, job: save.savedBy, entity: entity, keys: keys))
            }
        }
    }

    /// Records a save's changed keys directly, for savers that skip building IDs.
    func record(sequence: UInt64, job: String, entity: String, keys: KeySet) {
        guard !keys.isEmpty else { return }
        entries.withLock { $0.append(Entry(sequence: sequence, job: job, entity: entity, keys: keys)) }
    }

    /// The job of this run that last changed the row in a save numbered above `sequence`.
    func lastWriter(of id: ObjectID, after sequence: UInt64) -> String? {
        entries.withLock { entries in
            entries.last { $0.sequence > sequence && $0.entity == id.entity && $0.keys.contains(id) }?.job
        }
    }
}

/// Primary keys, compact for integer keys.
struct KeySet {
    private var ranges: [ClosedRange<Int64>] = []
    private var others: Set<[StoreValue]> = []

    var isEmpty: Bool { ranges.isEmpty && others.isEmpty }

    mutating func insert(integer value: Int64) {
        if let last = ranges.last {
            if last.contains(value) { return }
            if value == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...value
                return
            }
        }
        ranges.append(value...value)
    }

    mutating func insert(_ id: ObjectID) {
        if case .integer(let value)? = id.singleKey {
            insert(integer: value)
        } else {
            others.insert(id.key)
        }
    }

    func contains(_ id: ObjectID) -> Bool {
        if case .integer(let value)? = id.singleKey {
            return ranges.contains { $0.contains(value) }
        }
        return others.contains(id.key)
    }
}
