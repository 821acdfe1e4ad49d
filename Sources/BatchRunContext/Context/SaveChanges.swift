@_spi(BatchRunPackage) import BatchRunStore

/// What one save changed, gathered as it writes, for the one save path (`ContextCore.commit`):
/// counts, conflicts, and the keys per entity and kind, always as compact key sets (for
/// naming who changed a row) and, when someone wants them, as `ObjectID`s for the `DidSave`.
package struct SaveChanges {
    package enum Kind { case inserted, updated, deleted }

    /// The keys of one kind of change to one entity.
    private struct Slot {
        var kind: Kind
        var entity: String
        var keys = KeySet()
        var ids: [ObjectID] = []
    }

    /// True when a `didSaves()` subscriber or a per-save block will read the IDs.
    package let wantsIDs: Bool
    /// True when a per-save block will read the save's conflicts: an import, whose caller
    /// reports them on its own, makes `conflicts` only then.
    let wantsConflicts: Bool
    package var inserted = 0
    package var updated = 0
    package var deleted = 0
    package var conflicts: [MergeConflict] = []
    /// Rows `overwrite` deleted because they held an inserted row's unique value under another
    /// key: recorded and counted as deleted (their delete rules run), and the saving context
    /// drops them as it drops a cascade's.
    private(set) var replacedRows: [ObjectID] = []
    /// Almost always one slot: a batch changes one entity one way.
    private var slots: [Slot] = []
    private var lastSlot = 0

    package init(wantsIDs: Bool, wantsConflicts: Bool = true) {
        self.wantsIDs = wantsIDs
        self.wantsConflicts = wantsConflicts
    }

    /// Records a changed row (counted by the caller).
    package mutating func record(_ id: ObjectID, _ kind: Kind) {
        let slot = slot(kind, id.entity)
        slots[slot].keys.insert(id)
        if wantsIDs { slots[slot].ids.append(id) }
    }

    /// Records and counts rows `overwrite` deleted for holding an inserted row's unique value.
    mutating func recordReplaced(_ ids: [ObjectID]) {
        guard !ids.isEmpty else { return }
        for id in ids { record(id, .deleted) }
        deleted += ids.count
        replacedRows += ids
    }

    /// Records changed rows that all belong to `entity` (a bulk statement's batch).
    /// Integer keys go in sorted: a batch's objects come in no order (a context's registry is a
    /// dictionary), and unsorted keys made one range each for the change log to keep.
    package mutating func record(contentsOf batch: [ObjectID], entity: String, _ kind: Kind) {
        guard !batch.isEmpty else { return }
        let slot = slot(kind, entity)
        var integers: [Int64] = []
        integers.reserveCapacity(batch.count)
        for id in batch {
            if case .integer(let value)? = id.singleKey { integers.append(value) } else { slots[slot].keys.insert(id) }
        }
        for value in integers.sorted() { slots[slot].keys.insert(integer: value) }
        if wantsIDs { slots[slot].ids.append(contentsOf: batch) }
    }

    /// Records a row of an entity keyed by its integer rowid, without making an `ObjectID`
    /// unless one is wanted (the import's hot loop).
    package mutating func record(rowid: Int64, entity: String, _ kind: Kind) {
        let slot = slot(kind, entity)
        slots[slot].keys.insert(integer: rowid)
        if wantsIDs { slots[slot].ids.append(ObjectID(entity: entity, single: .integer(rowid))) }
    }

    /// Records rows of an entity keyed by their integer rowids, all at once (an import's chunk).
    ///
    /// ```swift
    /// changes.record(rowids: 1_001...2_000, entity: "Reading", .inserted)
    /// ```
    package mutating func record(rowids: some Collection<Int64>, entity: String, _ kind: Kind) {
        let slot = slot(kind, entity)
        slots[slot].keys.insert(integers: rowids)
        if wantsIDs { slots[slot].ids.append(contentsOf: rowids.map { ObjectID(entity: entity, single: .integer($0)) }) }
    }

    private mutating func slot(_ kind: Kind, _ entity: String) -> Int {
        if lastSlot < slots.count, slots[lastSlot].kind == kind, slots[lastSlot].entity == entity { return lastSlot }
        if let index = slots.firstIndex(where: { $0.kind == kind && $0.entity == entity }) {
            lastSlot = index
        } else {
            slots.append(Slot(kind: kind, entity: entity))
            lastSlot = slots.count - 1
        }
        return lastSlot
    }

    /// The keys per entity, for the store's change log.
    package var changedKeys: [(entity: String, keys: KeySet, isDelete: Bool)] {
        slots.map { ($0.entity, $0.keys, $0.kind == .deleted) }
    }

    /// The one-column keys of `entity`'s rows this save deleted, those it inserted again (a hot
    /// swap's) left out: the rows a delete rule acts for.
    func deletedKeys(of entity: String) -> [StoreValue] {
        let deleted = slots.filter { $0.kind == .deleted && $0.entity == entity }.flatMap { $0.keys.keys }
        guard !deleted.isEmpty else { return [] }
        // One set of the inserted keys (a key set's `contains` scans its ranges: once per deleted
        // key it would be quadratic for a hot swap of scattered keys).
        let inserted = Set(slots.filter { $0.kind == .inserted && $0.entity == entity }.flatMap { $0.keys.keys })
        return deleted.compactMap { key in
            guard key.count == 1, !inserted.contains(key) else { return nil }
            return key[0]
        }
    }

    /// The entities this save deleted rows of.
    var entitiesWithDeletes: Set<String> { Set(slots.filter { $0.kind == .deleted }.map(\.entity)) }

    package func didSave(sequence: UInt64, savedBy: String) -> DidSave {
        func ids(_ kind: Kind) -> [String: [ObjectID]] {
            Dictionary(slots.filter { $0.kind == kind && !$0.ids.isEmpty }.map { ($0.entity, $0.ids) }, uniquingKeysWith: +)
        }
        return DidSave(sequence: sequence, savedBy: savedBy, inserted: ids(.inserted), updated: ids(.updated),
                       deleted: ids(.deleted))
    }
}
