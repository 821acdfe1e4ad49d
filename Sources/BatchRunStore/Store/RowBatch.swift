import Foundation

/// Typed values of up to `batch_size` rows, ready to bind: the feed side fills it (on its own
/// thread), the writer binds it. Plain arrays, so a batch moves between threads as a value and
/// costs a handful of allocations however many rows it holds.
///
/// Its appends, `cells(of:)` and `cellsEqual` are inlined into callers in other modules: a
/// feed's reader (BatchRunFeeds), a backend's row reader and a record's encoder fill it cell by
/// cell, and the resolver compares it row by row; as calls they cost an import 5% more
/// instructions (bench/split.sh). Swift 6.3 inlines an `@inlinable` member in another module
/// only when its type is `public`: the type is public for the package's modules alone
/// (`@_spi(BatchRunPackage) import BatchRunStore`), its members `package`.
@_spi(BatchRunPackage) public struct RowBatch: Sendable {
    public enum Kind: UInt8, Sendable { case null, integer, real, text, blob }

    /// One value: 16 bytes, so a row of cells is one contiguous run.
    public struct Cell: Sendable {
        /// The integer, the real's bit pattern, or a text's or blob's offset in `bytes`.
        public var number: Int64
        /// A text's or blob's length.
        public var length: Int32
        public var kind: Kind

        package static let null = Cell(number: 0, length: 0, kind: .null)

        @inlinable package init(number: Int64, length: Int32, kind: Kind) {
            self.number = number
            self.length = length
            self.kind = kind
        }
    }

    @usableFromInline package internal(set) var cells: [Cell] = []
    @usableFromInline package internal(set) var bytes: [UInt8] = []
    /// Per row: where its cells start, its feed line, its layout.
    @usableFromInline var rowStarts: [Int] = []
    @usableFromInline package internal(set) var lines: [Int] = []
    @usableFromInline package internal(set) var layouts: [Int] = []

    package init(rows: Int = 0, cellsPerRow: Int = 0) {
        cells.reserveCapacity(rows * cellsPerRow)
        rowStarts.reserveCapacity(rows)
        lines.reserveCapacity(rows)
        layouts.reserveCapacity(rows)
    }

    @inlinable package var count: Int { lines.count }
    /// The memory its values take: 16 bytes a cell, and the bytes of its texts and blobs.
    package var byteCount: Int { cells.count * MemoryLayout<Cell>.stride + bytes.count }
    @inlinable package var isEmpty: Bool { lines.isEmpty }

    @inlinable @inline(__always) package mutating func beginRow(line: Int, layout: Int) {
        rowStarts.append(cells.count)
        lines.append(line)
        layouts.append(layout)
    }

    /// Empties the batch, keeping its arrays' room for as many rows again.
    package mutating func removeAll() {
        cells.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        rowStarts.removeAll(keepingCapacity: true)
        lines.removeAll(keepingCapacity: true)
        layouts.removeAll(keepingCapacity: true)
    }

    /// Drops the row being filled (a rejected row).
    package mutating func dropLastRow() {
        guard let start = rowStarts.popLast() else { return }
        lines.removeLast()
        layouts.removeLast()
        cells.removeSubrange(start...)
    }

    @inlinable @inline(__always) package mutating func appendNull() { append(.null, 0, 0) }
    @inlinable @inline(__always) package mutating func appendInteger(_ value: Int64) { append(.integer, value, 0) }
    @inlinable @inline(__always) package mutating func appendReal(_ value: Double) { append(.real, Int64(bitPattern: value.bitPattern), 0) }

    @inlinable @inline(__always) package mutating func appendText(_ text: UnsafeBufferPointer<UInt8>) {
        append(.text, Int64(bytes.count), Int32(text.count))
        bytes.append(contentsOf: text)
    }

    @inlinable @inline(__always) package mutating func appendBlob(_ data: UnsafeBufferPointer<UInt8>) {
        append(.blob, Int64(bytes.count), Int32(data.count))
        bytes.append(contentsOf: data)
    }

    @inlinable @inline(__always) package mutating func append(_ value: StoreValue) {
        switch value {
        case .null: appendNull()
        case .integer(let int): appendInteger(int)
        case .real(let double): appendReal(double)
        case .text(let text):
            // A native string's bytes in place; another (bridged, a substring's copy) made contiguous first.
            if text.utf8.withContiguousStorageIfAvailable({ appendText($0) }) == nil {
                var text = text
                text.withUTF8 { appendText($0) }
            }
        case .blob(let data): data.withUnsafeBufferPointer { appendBlob($0) }
        }
    }

    @inlinable @inline(__always) mutating func append(_ kind: Kind, _ number: Int64, _ length: Int32) {
        cells.append(Cell(number: number, length: length, kind: kind))
    }

    /// The cells of a row.
    @inlinable @inline(__always) package func cells(of row: Int) -> Range<Int> {
        rowStarts[row]..<(row + 1 < rowStarts.count ? rowStarts[row + 1] : cells.count)
    }

    /// True when cell `index` of `one` and cell `other` of `two` hold equal values, as
    /// `StoreValue`s compare (kinds must match; reals compare as numbers).
    @inlinable @inline(__always)
    package static func cellsEqual(_ one: RowBatch, _ index: Int, _ two: RowBatch, _ other: Int) -> Bool {
        let first = one.cells[index], second = two.cells[other]
        guard first.kind == second.kind else { return false }
        switch first.kind {
        case .null: return true
        case .integer: return first.number == second.number
        case .real: return Double(bitPattern: UInt64(bitPattern: first.number)) == Double(bitPattern: UInt64(bitPattern: second.number))
        case .text, .blob: return bytesEqual(one, first, two, second)
        }
    }

    /// `cellsEqual` for two texts or two blobs.
    @usableFromInline
    static func bytesEqual(_ one: RowBatch, _ first: Cell, _ two: RowBatch, _ second: Cell) -> Bool {
        one.bytes.withUnsafeBytes { whole in
            two.bytes.withUnsafeBytes { other in
                let a = UnsafeRawBufferPointer(rebasing: whole[Int(first.number)..<(Int(first.number) + Int(first.length))])
                let b = UnsafeRawBufferPointer(rebasing: other[Int(second.number)..<(Int(second.number) + Int(second.length))])
                if a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) { return true }
                // Other bytes are another blob, and another text in ASCII; Swift compares
                // strings by canonical equivalence (é as one scalar or two) and decodes every
                // ill-formed sequence as U+FFFD.
                guard first.kind == .text, a.contains(where: { $0 >= 0x80 }) || b.contains(where: { $0 >= 0x80 }) else { return false }
                return String(decoding: a, as: UTF8.self) == String(decoding: b, as: UTF8.self)
            }
        }
    }

    /// One cell as a value (for the slow paths: conflicts, rejected rows).
    @inlinable package func value(at index: Int) -> StoreValue {
        let cell = cells[index]
        switch cell.kind {
        case .null: return .null
        case .integer: return .integer(cell.number)
        case .real: return .real(Double(bitPattern: UInt64(bitPattern: cell.number)))
        case .text:
            let start = Int(cell.number)
            return .text(String(decoding: bytes[start..<(start + Int(cell.length))], as: UTF8.self))
        case .blob:
            let start = Int(cell.number)
            return .blob(Array(bytes[start..<(start + Int(cell.length))]))
        }
    }
}
