/// An import's conflicts recorded straight from its batches' cells.
extension ConflictRecords {
    /// Cell `index` of `batch` as a value of these records (text copied in; a blob as its hex
    /// text, as the report writes one).
    package mutating func value(_ batch: RowBatch, at index: Int) -> Value {
        let cell = batch.cells[index]
        switch cell.kind {
        case .null: return .null
        case .integer: return .integer(cell.number)
        case .real: return .real(Double(bitPattern: UInt64(bitPattern: cell.number)))
        case .text: return text(utf8: batch.bytes[Int(cell.number)..<(Int(cell.number) + Int(cell.length))])
        case .blob: return value(batch.value(at: index))
        }
    }
}
