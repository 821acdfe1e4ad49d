import BatchRunStore

/// The state behind one iteration of `LiveResults`, kept off every context's isolation (in
/// the iteration's own task): the results as last yielded, their positions by ID, and the
/// work of bringing them up to date with a save.
///
/// A save is applied by reading again only the rows it inserted or updated, with the
/// request's filter (`WHERE (filter) AND key IN (...)`, 500 keys a statement): those still
/// matching are sorted and merged into the objects the save did not touch, which keep their
/// order. The change is found with dictionaries keyed by ID and the heaviest increasing run
/// of the kept objects' old positions: O(n log n), not O(n·d). A request
/// with a `limit` is read again whole (a row leaving can let another in), and so is any
/// request after a save that lists no IDs.
final class LiveResultsState<Item: Sendable> {
    package let store: Store
    package let entity: Entity
    package let request: FetchRequest
    let makeItem: ([StoreValue]) throws -> Item
    /// The position of the section column, if the results are sectioned.
    let sectionIndex: Int?
    /// The request's sorts (column position, descending), then the key's columns ascending.
    package let order: [(index: Int, descending: Bool)]
    /// Keys re-read per statement.
    static var keysPerStatement: Int { 500 }

    private var ids: [ObjectID] = []
    private var rows: [[StoreValue]] = []
    private var items: [Item] = []
    private var positions: [ObjectID: Int] = [:]

    package init(store: Store, request: FetchRequest, sectionedBy column: String?,
         itemMaker: LiveResults<Item>.ItemMaker) throws {
        if let failure = request.failure { throw failure }
        guard let entity = store.model[request.entity] else { throw ContextError.unknownEntity(request.entity) }
        var request = request
        request.assigning = []   // live results are rows as stored
        _ = try ContextCore.assignedIndexes(request, entity: entity)   // an unknown sort column throws
        if let column {
            guard let index = entity.position(ofColumn: column) else { throw ContextError.unknownColumn(entity.name, column) }
            sectionIndex = index
        } else {
            sectionIndex = nil
        }
        self.store = store
        self.entity = entity
        self.request = request
        makeItem = try itemMaker(entity)
        order = request.sortedBy.map { (index: entity.position(ofColumn: $0.name)!, descending: $0.descending) }
            + entity.primaryKeyIndexes.map { (index: $0, descending: false) }
    }

    /// The first snapshot: every row of the request, all inserted.
    package func start() async throws -> ResultsSnapshot<Item> {
        rows = try await read(request)
        ids = rows.map(id(of:))
        items = try rows.map { try makeItem($0) }
        positions = Dictionary(zip(ids, ids.indices)) { first, _ in first }   // a table without a key constraint may repeat one
        return snapshot(ResultsChange(inserted: Array(ids.indices)))
    }

    /// Brings the results up to date with `save`; nil when they did not change.
    package func apply(_ save: DidSave) async throws -> ResultsSnapshot<Item>? {
        let deleted = save.deleted[entity.name] ?? [], updated = save.updated[entity.name] ?? []
        let inserted = save.inserted[entity.name] ?? []
        // A save without IDs began before this observation subscribed (nobody listened, so it
        // listed none): what it changed is unknown, and the results are read again whole.
        let unknown = save.isEmpty
        guard unknown || !deleted.isEmpty || !updated.isEmpty || !inserted.isEmpty else { return nil }
        var reread = Set(updated)
        reread.formUnion(inserted)
        var newRows: [[StoreValue]] = [], newItems: [Item] = [], newIDs: [ObjectID] = []
        if request.limit != nil || unknown {
            newRows = try await read(request)
            newIDs = newRows.map(id(of:))
            newItems.reserveCapacity(newRows.count)
            for (id, row) in zip(newIDs, newRows) {
                if let old = positions[id], rows[old] == row, !reread.contains(id) {
                    newItems.append(items[old])
                } else {
                    if positions[id] != nil { reread.insert(id) }   // changed: updated (and free to move)
                    newItems.append(try makeItem(row))
                }
            }
        } else {
            var touched = reread
            touched.formUnion(deleted)
            let keys = Array(reread)
            let size = max(1, Self.keysPerStatement / max(1, entity.primaryKey.count))
            var matching: [[StoreValue]] = []
            for start in stride(from: 0, to: keys.count, by: size) {
                matching += try await read(requestFor(keys[start..<min(start + size, keys.count)]))
            }
            matching.sort(by: sortsBefore)
            let capacity = rows.count + matching.count
            newRows.reserveCapacity(capacity)
            newItems.reserveCapacity(capacity)
            newIDs.reserveCapacity(capacity)
            var next = 0
            func takeMatching() throws {
                newRows.append(matching[next])
                newIDs.append(id(of: matching[next]))
                newItems.append(try makeItem(matching[next]))
                next += 1
            }
            for index in rows.indices where !touched.contains(ids[index]) {
                while next < matching.count, sortsBefore(matching[next], rows[index]) { try takeMatching() }
                newRows.append(rows[index])
                newIDs.append(ids[index])
                newItems.append(items[index])
            }
            while next < matching.count { try takeMatching() }
        }
        var newPositions: [ObjectID: Int] = [:]
        newPositions.reserveCapacity(newIDs.count)
        for (index, id) in newIDs.enumerated() { newPositions[id] = index }
        let change = Self.change(from: ids, positions: positions, to: newIDs, positions: newPositions, updated: reread)
        (rows, ids, items, positions) = (newRows, newIDs, newItems, newPositions)
        return change.isEmpty ? nil : snapshot(change)
    }

    /// The change from `old` to `new`: deleted, inserted, updated (those of `updated` in both)
    /// and the moves: objects in both, out of the heaviest run kept in order, where an object
    /// the save did not touch outweighs every touched one. Untouched objects keep their order,
    /// so they are all in the run: only objects the save changed move.
    package static func change(from old: [ObjectID], positions oldPositions: [ObjectID: Int], to new: [ObjectID],
                       positions newPositions: [ObjectID: Int], updated: Set<ObjectID>) -> ResultsChange {
        var change = ResultsChange()
        for (index, id) in old.enumerated() where newPositions[id] == nil { change.deleted.append(index) }
        var kept: [(from: Int, to: Int)] = [], weights: [Int] = []
        kept.reserveCapacity(min(old.count, new.count))
        weights.reserveCapacity(min(old.count, new.count))
        for (index, id) in new.enumerated() {
            if let from = oldPositions[id] {
                kept.append((from, index))
                weights.append(updated.contains(id) ? 1 : old.count + 1)
            } else {
                change.inserted.append(index)
            }
        }
        change.updated = updated.compactMap { id in oldPositions[id] != nil ? newPositions[id] : nil }.sorted()
        let inOrder = heaviestIncreasingRun(kept.map(\.from), weights: weights, below: old.count)
        for (position, move) in kept.enumerated() where !inOrder[position] {
            change.moves.append(ResultsChange.Move(from: move.from, to: move.to))
        }
        return change
    }

    /// Which elements of `values` (distinct, each below `bound`) make the increasing
    /// subsequence of the largest total weight: a Fenwick tree of the best run ending below
    /// each value, O(n log n).
    static func heaviestIncreasingRun(_ values: [Int], weights: [Int], below bound: Int) -> [Bool] {
        var tree = [(weight: Int, at: Int)](repeating: (0, -1), count: bound + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var best = (weight: 0, at: -1)
        for (position, value) in values.enumerated() {
            var prefix = (weight: 0, at: -1)
            var index = value   // the best run ending at a value below `value` (tree indexes are value + 1)
            while index > 0 {
                if tree[index].weight > prefix.weight { prefix = tree[index] }
                index -= index & -index
            }
            previous[position] = prefix.at
            let ending = (weight: prefix.weight + weights[position], at: position)
            if ending.weight > best.weight { best = ending }
            index = value + 1
            while index <= bound {
                if tree[index].weight < ending.weight { tree[index] = ending }
                index += index & -index
            }
        }
        var member = [Bool](repeating: false, count: values.count)
        var position = best.at
        while position >= 0 {
            member[position] = true
            position = previous[position]
        }
        return member
    }

    private func snapshot(_ change: ResultsChange) -> ResultsSnapshot<Item> {
        ResultsSnapshot(items: items, ids: ids, change: change, sections: sections())
    }

    /// Runs of equal values of the section column, in order.
    private func sections() -> [ResultsSection<Item>] {
        guard let column = sectionIndex, !rows.isEmpty else { return [] }
        var sections: [ResultsSection<Item>] = []
        var start = 0
        for index in 1...rows.count where index == rows.count || rows[index][column] != rows[start][column] {
            sections.append(ResultsSection(key: rows[start][column], range: start..<index, items: items[start..<index]))
            start = index
        }
        return sections
    }

    private func id(of row: [StoreValue]) -> ObjectID {
        let keys = entity.primaryKeyIndexes
        return keys.count == 1 ? ObjectID(entity: entity.name, single: row[keys[0]]) : ObjectID(entity: entity.name, key: keys.map { row[$0] })
    }

    /// Orders rows as the request's SQL does (`StoreValue`'s order: NULL first ascending, last
    /// descending; text by its characters), the key last.
    private func sortsBefore(_ lhs: [StoreValue], _ rhs: [StoreValue]) -> Bool {
        for (index, descending) in order where lhs[index] != rhs[index] {
            return descending ? StoreValue.sortsBefore(rhs[index], lhs[index]) : StoreValue.sortsBefore(lhs[index], rhs[index])
        }
        return false
    }

    /// The request narrowed to rows with these keys.
    private func requestFor(_ keys: ArraySlice<ObjectID>) -> FetchRequest {
        var narrowed = request
        let columns = entity.primaryKey.map(SQL.quote)
        var placeholders: [String] = []
        placeholders.reserveCapacity(keys.count)
        for (number, id) in keys.enumerated() {
            let names = id.key.indices.map { "_batchrun_live\(number)_\($0)" }
            for (name, value) in zip(names, id.key) { narrowed.params[name] = value }
            placeholders.append(names.count == 1 ? ":" + names[0] : "(" + names.map { ":" + $0 }.joined(separator: ", ") + ")")
        }
        let match = (columns.count == 1 ? columns[0] : "(" + columns.joined(separator: ", ") + ")")
            + " IN (" + placeholders.joined(separator: ", ") + ")"
        narrowed.whereClause = request.whereClause.map { "(\($0)) AND \(match)" } ?? match
        return narrowed
    }

    /// The rows of `request` as stored, read off every context's isolation.
    private func read(_ request: FetchRequest) async throws -> [[StoreValue]] {
        let entity = self.entity
        do {
            return try await store.backend.read { db in
                var rows: [[StoreValue]] = []
                try db.forEachRow(try db.prepare(request.sql(for: entity)), named: request.arguments(), positional: [],
                                  split: entity.columns.count, assigned: []) { values, _ in rows.append(values) }
                return rows
            }
        } catch {
            throw DatabaseFailure.publicError(error)
        }
    }
}
