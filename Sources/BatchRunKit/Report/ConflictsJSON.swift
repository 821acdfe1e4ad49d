/// The JSON report's `conflicts` array written directly, in the layout `JSONEncoder` gives it
/// (pretty-printed, keys sorted): a run with 200,000 conflicts spent three quarters of its time
/// in `JSONEncoder` for them.
enum ConflictsJSON {
    /// `records` as the elements of the report's top-level `conflicts` array (indented for it).
    static func elements(_ records: [MergeConflictRecord]) -> String {
        var out = ""
        out.reserveCapacity(records.count * 400)
        for (index, record) in records.enumerated() {
            if index > 0 { out += ",\n" }
            out += "    {\n"
            out += "      \"changed_by\" : "; string(record.changedBy, to: &out); out += ",\n"
            out += "      \"entity\" : "; string(record.entity, to: &out); out += ",\n"
            out += "      \"job\" : "; string(record.job, to: &out); out += ",\n"
            out += "      \"key\" : {\n"
            for (offset, name) in record.key.keys.sorted().enumerated() {
                if offset > 0 { out += ",\n" }
                out += "        "; string(name, to: &out); out += " : "; value(record.key[name]!, to: &out)
            }
            out += "\n      },\n"
            out += "      \"kind\" : "; string(record.kind, to: &out); out += ",\n"
            out += "      \"outcome\" : "; string(record.outcome, to: &out); out += ",\n"
            out += "      \"policy\" : "; string(record.policy, to: &out); out += ",\n"
            out += "      \"properties\" : ["
            for (offset, property) in record.properties.enumerated() {
                out += offset > 0 ? ",\n" : "\n"
                out += "        {\n"
                out += "          \"name\" : "; string(property.name, to: &out); out += ",\n"
                out += "          \"original\" : "; value(property.original, to: &out); out += ",\n"
                out += "          \"ours\" : "; value(property.ours, to: &out); out += ",\n"
                out += "          \"resolved\" : "; value(property.resolved, to: &out); out += ",\n"
                out += "          \"store\" : "; value(property.store, to: &out); out += "\n"
                out += "        }"
            }
            out += record.properties.isEmpty ? "\n\n      ]\n" : "\n      ]\n"
            out += "    }"
        }
        return out
    }

    static func value(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .integer(let int): out += String(int)
        case .real(let double):
            guard double.isFinite else { out += "null"; return }
            // As JSONEncoder writes a Double: shortest form, no ".0" on a whole number.
            var text = String(double)
            if text.hasSuffix(".0") { text.removeLast(2) }
            out += text
        case .text(let text): string(text, to: &out)
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped; slashes as they are.
    static func string(_ text: String, to out: inout String) {
        out += "\""
        var plain = true
        for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            plain = false
            break
        }
        if plain {
            out += text
        } else {
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                case let control where control.value < 0x20:
                    let hex = String(control.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
