/// What changed in live results since the previous snapshot (`LiveResults`), as a table or
/// collection view applies a batch of updates: `deleted` are indexes in the previous
/// snapshot, `inserted` and `updated` indexes in the new one, `moves` from an index in the
/// previous snapshot to one in the new. The first snapshot has every object inserted.
public struct ResultsChange: Sendable, Hashable {
    /// An object still in the results at another place relative to the others.
    public struct Move: Sendable, Hashable {
        public let from: Int
        public let to: Int
    }

    public internal(set) var inserted: [Int] = []
    public internal(set) var deleted: [Int] = []
    /// Objects in both snapshots whose row the save changed (a moved one among them).
    public internal(set) var updated: [Int] = []
    /// The fewest moves that order the objects kept: the others keep their relative order.
    public internal(set) var moves: [Move] = []

    public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && updated.isEmpty && moves.isEmpty }
}
