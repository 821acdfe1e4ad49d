#if PostgreSQL
import BatchRunStore
import Foundation
import PostgresNIO

/// `StoreValue`s to and from PostgreSQL: a real goes as `double precision`, any other value as
/// untyped text, which the server reads as the type the statement needs (as it reads a quoted
/// literal); results come in binary and are read by their column's type.
///
/// ```swift
/// var bindings = PostgresBindings()
/// bindings.append(StoreValue.integer(7))           // '7', read by the server as bigint, boolean, ...
/// bindings.append(StoreValue.real(6.9))            // double precision: `bigint_column > $1` compares numbers
/// let value = try PostgresValues.storeValue(cell)  // bigint -> .integer, timestamptz -> ISO 8601 text
/// ```
enum PostgresValues {
    /// One cell of a row whose columns are known only at run time.
    package static func storeValue(_ cell: PostgresCell) throws -> StoreValue {
        guard var bytes = cell.bytes else { return .null }
        switch cell.dataType {
        case .int8: return .integer(bytes.readInteger(as: Int64.self)!)
        case .int4: return .integer(Int64(bytes.readInteger(as: Int32.self)!))
        case .int2: return .integer(Int64(bytes.readInteger(as: Int16.self)!))
        case .float8: return .real(Double(bitPattern: bytes.readInteger(as: UInt64.self)!))
        case .float4: return .real(Double(Float(bitPattern: bytes.readInteger(as: UInt32.self)!)))
        case .bool: return .integer(bytes.readInteger(as: UInt8.self)! != 0 ? 1 : 0)
        case .bytea: return .blob(bytes.readBytes(length: bytes.readableBytes) ?? [])
        case .timestamptz, .timestamp:
            // Microseconds since 2000-01-01 00:00:00 UTC, as the contract's ISO 8601 text.
            let micros = bytes.readInteger(as: Int64.self)!
            let date = Date(timeIntervalSince1970: 946_684_800 + Double(micros) / 1_000_000)
            return StoreValue(date)
        case .numeric:
            // A whole number (display scale 0, as sum() of bigints gives) is an integer, as
            // SQLite's sum() is; anything with decimals (avg(), round(x, 1)) a real.
            let text = try cell.decode(Decimal.self).description
            let scale = bytes.getInteger(at: bytes.readerIndex + 6, as: Int16.self) ?? 1
            if scale == 0, let integer = Int64(text) { return .integer(integer) }
            return .real(Double(text) ?? .nan)
        case .text, .varchar, .bpchar, .name:
            // UTF-8 in either format; read directly (decoding as String went through PostgresNIO's
            // generic decoding: a fifth of a batch-update's client time).
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        default:
            // any other type PostgreSQL can show as text
            if cell.format == .text { return .text(bytes.readString(length: bytes.readableBytes) ?? "") }
            if let value = computedValue(cell.dataType, &bytes) { return value }
            if let text = try? cell.decode(String.self) { return .text(text) }
            return .blob(bytes.readBytes(length: bytes.readableBytes) ?? [])
        }
    }

    /// A binary cell of a type a fetch's select may compute but no column of batchrun's has
    /// (a date, a time, an interval, JSON, a UUID), as its text; nil for any other type. Kept
    /// out of `storeValue`'s switch, whose cases are tried in order for every cell read.
    private static func computedValue(_ type: PostgresDataType, _ bytes: inout ByteBuffer) -> StoreValue? {
        switch type {
        case .date:
            // Days since 2000-01-01, as the text SQLite's date() gives: 2026-11-30.
            let days = bytes.readInteger(as: Int32.self)!
            if days == .max { return .text("infinity") }
            if days == .min { return .text("-infinity") }
            return .text(DateText.day(daysSince1970: Int64(days) + 10_957) ?? "\(days) days after 2000-01-01")
        case .time:
            // Microseconds since midnight, as SQLite's time() gives (a fraction only when there is one).
            return .text(PostgresTemporalText.time(microseconds: bytes.readInteger(as: Int64.self)!))
        case .timetz:
            let microseconds = bytes.readInteger(as: Int64.self)!
            return .text(PostgresTemporalText.time(microseconds: microseconds, zoneWest: bytes.readInteger(as: Int32.self)!))
        case .interval:
            let microseconds = bytes.readInteger(as: Int64.self)!, days = bytes.readInteger(as: Int32.self)!
            return .text(PostgresTemporalText.interval(microseconds: microseconds, days: days, months: bytes.readInteger(as: Int32.self)!))
        case .json:
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        case .jsonb:
            // A version byte (1, the only one so far), then the JSON's text.
            guard bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == 1 else { return nil }
            bytes.moveReaderIndex(forwardBy: 1)
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        case .uuid:
            // 16 bytes, as 8-4-4-4-12 hexadecimal digits.
            var text = ""
            for (index, byte) in (bytes.readBytes(length: 16) ?? []).enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text += "-" }
                text += (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
            return .text(text)
        case .oid:
            return .integer(Int64(bytes.readInteger(as: UInt32.self)!))
        default:
            return nil
        }
    }

    /// A value as the text PostgreSQL reads for any type it fits.
    package static func text(_ value: StoreValue) -> String? {
        switch value {
        case .null: return nil
        case .integer(let int): return String(int)
        case .real(let double):
            if double.isNaN { return "NaN" }
            if double.isInfinite { return double > 0 ? "Infinity" : "-Infinity" }
            return "\(double)"
        case .text(let text): return text
        case .blob(let bytes):
            let digits: [UInt8] = Array("0123456789abcdef".utf8)
            var hex: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
            hex.reserveCapacity(2 + bytes.count * 2)
            for byte in bytes {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0f)])
            }
            return String(decoding: hex, as: UTF8.self)
        }
    }
}

extension PostgresValues {
    /// An array's text (`{1,NULL,"a \\"b\\""}`), which the server reads as an array of the type
    /// it is cast to: elements as `text(_:)` gives them, quoted with `"` and `\` escaped.
    package static func arrayLiteral(_ values: some Sequence<StoreValue>) -> String {
        var literal = "{"
        var first = true
        for value in values {
            if !first { literal.append(",") }
            first = false
            switch value {
            case .null:
                literal.append("NULL")
            case .integer(let int):
                literal.append(String(int))
            default:
                let element = text(value) ?? ""
                literal.append("\"")
                if element.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                    for character in element {
                        if character == "\"" || character == "\\" { literal.append("\\") }
                        literal.append(character)
                    }
                } else {
                    literal.append(element)
                }
                literal.append("\"")
            }
        }
        literal.append("}")
        return literal
    }
}

extension PostgresBindings {
    /// Binds a real as `double precision`, NULL as NULL, anything else as untyped text (OID 0).
    ///
    /// A real keeps its type: as untyped text, `arr_delay > $1` with `arr_delay` a bigint made
    /// the server read `'6.89'` as a bigint, which fails (`invalid input syntax for type bigint`),
    /// and a whole real (`7.0`) would have compared as a rounded integer had it parsed. Typed,
    /// the server compares numbers, as SQLite does. An integer stays untyped, so it still reads as
    /// a `boolean` (`active = :flag` with `flag: true`, which is 1) or a `text` where the column
    /// is one (SQLite's affinity does the same); text stays untyped, so `'2026-01-01'` reads as the
    /// `timestamptz` a `datetime` column holds.
    package mutating func append(_ value: StoreValue) {
        if case .real(let double) = value { return append(double) }
        guard let text = PostgresValues.text(value) else { return appendNull() }
        append(UntypedText(value: text))
    }
}

/// Text with no type: the server infers it from where the parameter is used, as libpq's
/// untyped parameters.
private struct UntypedText: PostgresDynamicTypeEncodable {
    var value: String
    var psqlType: PostgresDataType { .null }   // OID 0: unspecified
    var psqlFormat: PostgresFormat { .text }

    func encode<E: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<E>) {
        byteBuffer.writeString(value)
    }
}

/// A statement's failure as the server told it: SQLSTATE and message (PostgresNIO's own error
/// prints neither, to keep values out of logs; batchrun's reports show the server's message).
package struct PostgresError: StoreDatabaseError, CustomStringConvertible {
    /// The server's SQLSTATE; nil when the server was not reached.
    let sqlState: String?
    package let message: String
    /// Where in the statement the server found the error: a character offset from 1.
    package var position: Int?
    /// The connection went away under the statement (closed by the server, a network error),
    /// rather than the client refusing the request.
    var lostConnection = false

    /// Runs `work`, turning PostgresNIO's error into this one.
    package static func translating<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as PSQLError {
            let lost = [PSQLError.Code.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .messageDecodingFailure,
                        .unexpectedBackendMessage].contains(error.code)
            throw PostgresError(sqlState: error.serverInfo?[.sqlState],
                                message: error.serverInfo?[.message] ?? "the connection to the server failed (\(error.code))",
                                position: error.serverInfo?[.position].flatMap { Int($0) }, lostConnection: lost)
        }
    }

    package var description: String { message }

    package var storeFailure: StoreFailure? {
        switch sqlState {
        case "57014": return .interrupted   // query_canceled
        case "55P03": return .busy   // lock_not_available
        case "40001", "40P01": return .rolledBackForAnother   // serialization_failure, deadlock_detected
        case "53100": return .diskFull
        case "25006": return .readOnly   // read_only_sql_transaction
        // admin_shutdown (a restart, pg_terminate_backend), crash_shutdown, cannot_connect_now,
        // idle_session_timeout; idle_in_transaction_session_timeout (a paused process's session,
        // ended by `StoreSpec.idleTimeout`): the session is gone, as when the server closes it
        case "57P01", "57P02", "57P03", "57P05", "25P03": return .connectionLost
        case let state? where state.hasPrefix("08"): return .connectionLost   // connection exceptions
        case nil where lostConnection: return .connectionLost
        default: return nil
        }
    }

    package var databaseMessage: String { message }

    /// The session or the server failed, not the statement: the server was not reached or
    /// ended the session (connection exceptions 08, operator intervention 57P, insufficient
    /// resources 53, system errors 58, a transaction idle past its limit 25P03), so nothing can
    /// be said of the statement itself.
    var isServerFailure: Bool {
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState.hasPrefix("53") || sqlState.hasPrefix("58")
            || sqlState == "25P03"
    }
}
#endif
