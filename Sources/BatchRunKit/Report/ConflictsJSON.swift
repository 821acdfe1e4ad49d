/// The JSON report's `conflicts` array written directly as UTF-8, in the layout `JSONEncoder`
/// gives it (pretty-printed, keys sorted), and handed on in chunks: a run with 200,000
/// conflicts spent three quarters of its time in `JSONEncoder` for them, and a report held
/// whole in memory (116 MB for those) was copied once more on its way to the file.
struct ConflictsJSON {
    private var bytes: [UInt8] = []

    /// `records` as the elements of the report's top-level `conflicts` array (indented for it),
    /// given to `write` a megabyte or so at a time.
    static func write(_ records: [MergeConflictRecord], to write: ([UInt8]) throws -> Void) rethrows {
        var json = ConflictsJSON()
        json.bytes.reserveCapacity(1 << 20 + 4096)
        for (index, record) in records.enumerated() {
            json.append(record, first: index == 0)
            if json.bytes.count >= 1 << 20 {
                try write(json.bytes)
                json.bytes.removeAll(keepingCapacity: true)
            }
        }
        if !json.bytes.isEmpty { try write(json.bytes) }
    }

    private mutating func append(_ record: MergeConflictRecord, first: Bool) {
        raw(first ? "    {\n" : ",\n    {\n")
        raw("      \"changed_by\" : "); string(record.changedBy)
        raw(",\n      \"entity\" : "); string(record.entity)
        raw(",\n      \"job\" : "); string(record.job)
        raw(",\n      \"key\" : {\n")
        if record.key.count == 1, let (name, key) = record.key.first {
            raw("        "); string(name); raw(" : "); value(key)
        } else {
            for (offset, name) in record.key.keys.sorted().enumerated() {
                raw(offset > 0 ? ",\n        " : "        "); string(name); raw(" : "); value(record.key[name]!)
            }
        }
        raw("\n      },\n      \"kind\" : "); string(record.kind.rawValue)
        raw(",\n      \"outcome\" : "); string(record.outcome.rawValue)
        raw(",\n      \"policy\" : "); string(record.policy.rawValue)
        raw(",\n      \"properties\" : [")
        for (offset, property) in record.properties.enumerated() {
            raw(offset > 0 ? ",\n        {\n" : "\n        {\n")
            raw("          \"name\" : "); string(property.name)
            raw(",\n          \"original\" : "); value(property.original)
            raw(",\n          \"ours\" : "); value(property.ours)
            raw(",\n          \"resolved\" : "); value(property.resolved)
            raw(",\n          \"store\" : "); value(property.store)
            raw("\n        }")
        }
        raw(record.properties.isEmpty ? "\n\n      ]\n    }" : "\n      ]\n    }")
    }

    private mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .integer(let int): integer(int)
        case .real(let double):
            guard double.isFinite else { return raw("null") }
            // As JSONEncoder writes a Double: shortest form, no ".0" on a whole number.
            let text = String(double)
            bytes.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
        case .text(let text): string(text)
        }
    }

    /// An integer's decimal digits, without making a string of them.
    private mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped; slashes as they are.
    /// Only ASCII bytes are escaped, so UTF-8 sequences pass through whole.
    private mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(0x22)
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                bytes.append(contentsOf: utf8)
                bytes.append(0x22)
                return
            }
            for byte in utf8 {
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                case ..<0x20:
                    let hex = String(byte, radix: 16)
                    bytes.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                default: bytes.append(byte)
                }
            }
            bytes.append(0x22)
        }
    }
}
