/// Primary keys, compact for integer keys: consecutive keys are one range.
///
/// Public for the package's modules alone (`@_spi(BatchRunPackage)`), as `RowBatch`, so that a
/// save in BatchRunContext inlines its inserts.
@_spi(BatchRunPackage) public struct KeySet: Sendable {
    @usableFromInline package internal(set) var ranges: [ClosedRange<Int64>] = []
    @usableFromInline package internal(set) var others: Set<[StoreValue]> = []

    package var isEmpty: Bool { ranges.isEmpty && others.isEmpty }

    /// (`@inlinable`, as `insert(_:)`: a save records each row's key from another module.)
    @inlinable @inline(__always) package mutating func insert(integer value: Int64) {
        if let last = ranges.last {
            if last.contains(value) { return }
            if value == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...value
                return
            }
        }
        ranges.append(value...value)
    }

    /// Inserts each of `values` as `insert(integer:)` would, the range being grown kept out of
    /// the array until it ends (a save records a chunk's keys at once).
    ///
    /// ```swift
    /// var keys = KeySet()
    /// keys.insert(integers: [1, 2, 3, 7])   // ranges: 1...3, 7...7
    /// ```
    @inlinable package mutating func insert(integers values: some Sequence<Int64>) {
        var current = ranges.popLast()
        for value in values {
            if let range = current {
                if range.contains(value) { continue }
                if value == range.upperBound + 1 {
                    current = range.lowerBound...value
                    continue
                }
                ranges.append(range)
            }
            current = value...value
        }
        if let current { ranges.append(current) }
    }

    @inlinable package mutating func insert(_ id: ObjectID) {
        if case .integer(let value)? = id.singleKey {
            insert(integer: value)
        } else {
            others.insert(id.key)
        }
    }

    package func contains(_ id: ObjectID) -> Bool {
        if case .integer(let value)? = id.singleKey {
            return ranges.contains { $0.contains(value) }
        }
        return others.contains(id.key)
    }

    /// Every key, integer ranges spelled out (a delete rule's keys; a batch's worth).
    package var keys: [[StoreValue]] {
        ranges.flatMap { range in range.map { [StoreValue.integer($0)] } } + others
    }

    package init() {}
}
