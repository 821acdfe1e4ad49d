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
        for (entity, ids) in save.inserted.merging(save.updated, uniquingKeysWith: +).merging(save.deleted, uniquingKeysWith: +) {
            for id in ids { byEntity[entity, default: KeySet()].insert(id.key) }
        }
        guard !byEntity.isEmpty else { return }
        entries.withLock { entries in
            for (entity, keys) in byEntity {
                entries.append(Entry(sequence: save.sequence, job: save.savedBy, entity: entity, keys: keys))
            }
        }
    }

    /// The job of this run that last changed the row in a save numbered above `sequence`.
    func lastWriter(of id: ObjectID, after sequence: UInt64) -> String? {
        entries.withLock { entries in
            entries.last { $0.sequence > sequence && $0.entity == id.entity && $0.keys.contains(id.key) }?.job
        }
    }
}

/// Primary keys, compact for integer keys.
struct KeySet {
    private var ranges: [ClosedRange<Int64>] = []
    private var others: Set<[ParamValue]> = []

    mutating func insert(_ key: [ParamValue]) {
        guard key.count == 1, case .integer(let value) = key[0] else {
            others.insert(key)
            return
        }
        if let last = ranges.last {
            if last.contains(value) { return }
            if value == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...value
                return
            }
        }
        ranges.append(value...value)
    }

    func contains(_ key: [ParamValue]) -> Bool {
        if key.count == 1, case .integer(let value) = key[0] {
            return ranges.contains { $0.contains(value) }
        }
        return others.contains(key)
    }
}
