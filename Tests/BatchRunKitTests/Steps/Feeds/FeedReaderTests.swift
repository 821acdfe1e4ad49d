import Foundation
import Testing
@testable import BatchRunKit
@testable import BatchRunFeeds
@_spi(BatchRunPackage) import BatchRunStore

@Suite("Feed readers and value conversion")
struct FeedReaderTests {
    func records(_ name: String, _ text: String, format: FeedFormat) throws -> [FeedRecord] {
        try FeedFiles.records(name, Array(text.utf8), format: format)
    }

    @Test("CSV: quotes, embedded commas, quotes and newlines, CRLF, blank lines")
    func csv() throws {
        let text = "id,note\r\n1,\"a, b\"\r\n2,\"say \"\"hi\"\"\"\r\n\r\n3,\"two\nlines\"\r\n4,\r\n"
        let rows = try records("f.csv", text, format: .csv)
        #expect(rows.map(\.values) == [[.text("1"), .text("a, b")], [.text("2"), .text("say \"hi\"")],
                                       [.text("3"), .text("two\nlines")], [.text("4"), .text("")]])
        #expect(rows.map(\.line) == [2, 3, 5, 7])
        #expect(rows[0].fields == ["id", "note"])
    }

    @Test("CSV: doubled quotes are undone only in the quoted fields that have them")
    func doubledQuotes() throws {
        let text = "a,b,c\nab\"c,\"x\"\"y\",\"\"\"\"\"\"\nq\"\"r,\"\",\"\"\"\"\r\n"
        let rows = try records("q.csv", text, format: .csv)
        #expect(rows.map(\.values) == [[.text("ab\"c"), .text("x\"y"), .text("\"\"")],
                                       [.text("q\"\"r"), .text(""), .text("\"")]])
    }

    @Test("CSV round trip: any values written with RFC 4180 quoting read back as they were, with their lines, across many buffer refills (3 fields, and 70: more than a row's bounds gathered at once)",
          arguments: [3, 70])
    func roundTrip(fields: Int) throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15   // xorshift: the same rows on every run
        func next(_ bound: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(bound))
        }
        let alphabet = ["a", "b", ",", "\"", "\n", "\r", "\r\n", "ü", " ", "7"]
        var text = (1...fields).map { "f\($0)" }.joined(separator: ",") + "\n", expected: [(line: Int, values: [String])] = [], line = 2
        for _ in 0..<(9_000 / fields) {
            let values = (0..<fields).map { _ in (0..<next(12)).map { _ in alphabet[next(alphabet.count)] }.joined() }
            let encoded = values.map { value in
                let quoted = value.utf8.contains { Array(",\"\n\r".utf8).contains($0) } || next(4) == 0
                return quoted ? "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : value
            }.joined(separator: ",") + (next(2) == 0 ? "\n" : "\r\n")
            expected.append((line, values))
            line += encoded.utf8.filter { $0 == UInt8(ascii: "\n") }.count
            text += encoded
        }
        let path = try FeedFiles.write("round.csv", Array(text.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: "round.csv", bufferSize: 64)
        var row = RawRow(), read: [(line: Int, values: [String])] = []
        while try reader.nextRow(into: &row) { read.append((row.line, (0..<row.count).map { row.string($0) })) }
        #expect(read.count == expected.count)
        for (got, want) in zip(read, expected) where got.line != want.line || got.values != want.values {
            Issue.record("line \(want.line): read \(got.values) on line \(got.line), expected \(want.values)")
            break
        }
    }

    @Test("CSV: a UTF-8 byte-order mark is skipped")
    func bom() throws {
        let path = try FeedFiles.write("bom.csv", [0xEF, 0xBB, 0xBF] + Array("id,name\n1,ann\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try FeedReaders.open(path: path, format: .csv, displayPath: "bom.csv")
        #expect(try reader.next()?.fields == ["id", "name"])
    }

    @Test("CSV errors name the file and line", arguments: [
        ("id,note\n1,\"open\n", "f.csv:2: unterminated quoted field (opened on this line)"),
        ("id,note\n1,a\n2\n", "f.csv:3: expected 2 fields (as in the header), found 1"),
        ("id,note\n1,\"a\"b\n", "f.csv:2: unexpected text after a closing quote in field 2"),
        ((1...70).map { "c\($0)" }.joined(separator: ",") + "\n" + (1...39).map(String.init).joined(separator: ",") + ",\"a\"b\n",
         "f.csv:2: unexpected text after a closing quote in field 40"),
        ("id,id\n1,2\n", "f.csv:1: header names field 'id' twice"),
    ])
    func csvErrors(text: String, message: String) throws {
        #expect {
            _ = try records("f.csv", text, format: .csv)
        } throws: { error in
            (error as? FeedError)?.description == message
        }
    }

    @Test("TSV uses tabs")
    func tsv() throws {
        #expect(try records("f.tsv", "a\tb\n1\tx,y\n", format: .tsv).map(\.values) == [[.text("1"), .text("x,y")]])
    }

    @Test("NDJSON and JSON arrays give typed values and lines")
    func json() throws {
        let nd = try records("f.ndjson", "{\"id\": 1, \"ok\": true, \"x\": 1.5, \"n\": null}\n\n{\"id\": 2, \"s\": \"t\"}\n", format: .ndjson)
        #expect(nd.map(\.line) == [1, 3])
        #expect(nd[0].fields == ["id", "n", "ok", "x"])
        #expect(nd[0].values == [.integer(1), .null, .integer(1), .real(1.5)])
        let array = try records("f.json", "[\n  {\"id\": 1},\n  {\"id\": 2,\n   \"s\": \"}\"}\n]\n", format: .json)
        #expect(array.map(\.line) == [2, 3])
        #expect(array[1].values == [.integer(2), .text("}")])
        #expect {
            _ = try records("bad.ndjson", "{\"id\": 1}\n{oops}\n", format: .ndjson)
        } throws: { error in
            (error as? FeedError)?.description == "bad.ndjson:2: not valid JSON"
        }
    }

    @Test("conversion to column types, with the contract's messages")
    func conversion() {
        #expect(ValueConverter.convert(text: "12", to: .integer) == .success(.integer(12)))
        #expect(ValueConverter.convert(text: "12.5", to: .real) == .success(.real(12.5)))
        #expect(ValueConverter.convert(text: "TRUE", to: .boolean) == .success(.integer(1)))
        #expect(ValueConverter.convert(text: "0", to: .boolean) == .success(.integer(0)))
        #expect(ValueConverter.convert(text: "2026-01-31T08:15:00Z", to: .datetime) == .success(.text("2026-01-31T08:15:00Z")))
        #expect(ValueConverter.convert(text: "2026-01-31 08:15:00.123+02:00", to: .datetime) == .success(.text("2026-01-31 08:15:00.123+02:00")))
        #expect(ValueConverter.convert(text: "abc", to: .real) == .failure(.init(message: "\"abc\" is not a real")))
        #expect(ValueConverter.convert(text: "1.5", to: .integer) == .failure(.init(message: "\"1.5\" is not an integer")))
        #expect(ValueConverter.convert(text: "yes", to: .boolean) == .failure(.init(message: "\"yes\" is not a boolean (true, false, 1 or 0)")))
        #expect(ValueConverter.convert(text: "2026-13-01", to: .datetime).isFailure)
        #expect(ValueConverter.convert(text: "31/01/2026", to: .datetime).isFailure)
        #expect(ValueConverter.convert(.integer(3), to: .real) == .success(.real(3)))
        #expect(ValueConverter.convert(.real(2.5), to: .integer).isFailure)
        #expect(ValueConverter.convert(.null, to: .integer) == .success(.null))
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}

@Suite("Feed readers on awkward input")
struct AwkwardFeedTests {
    func records(_ name: String, _ bytes: [UInt8], format: FeedFormat) throws -> [FeedRecord] {
        try FeedFiles.records(name, bytes, format: format)
    }

    @Test("a field larger than the read buffer, quoted and not")
    func hugeFields() throws {
        let big = String(repeating: "x", count: 700_000)
        let quoted = String(repeating: "a,\"b\"\n", count: 100_000)
        let text = "id,note\n1,\(big)\n2,\"\(quoted.replacingOccurrences(of: "\"", with: "\"\""))\"\n3,end\n"
        let rows = try records("big.csv", Array(text.utf8), format: .csv)
        #expect(rows.count == 3)
        #expect(rows[0].values[1] == .text(big))
        #expect(rows[1].values[1] == .text(quoted))
        #expect(rows.map(\.line) == [2, 3, 100_004])   // row 2 holds 100,000 line breaks
    }

    @Test("an empty file, a header only, and a file without a final newline")
    func edges() throws {
        #expect(try records("empty.csv", [], format: .csv).isEmpty)
        #expect(try records("header.csv", Array("id,name\n".utf8), format: .csv).isEmpty)
        #expect(try records("tail.csv", Array("id,name\n1,ann".utf8), format: .csv).map(\.values) == [[.text("1"), .text("ann")]])
        #expect(try records("empty.json", [], format: .json).isEmpty)
        #expect(try records("none.json", Array("[ ]".utf8), format: .json).isEmpty)
        #expect(try records("empty.ndjson", [], format: .ndjson).isEmpty)
    }

    @Test("a JSON array read in chunks: elements split across reads, nested values, strings with brackets")
    func jsonSplitAcrossReads() throws {
        var text = "[\n"
        for id in 1...5000 {
            text += (id == 1 ? "" : ",\n") + #"  {"id": \#(id), "note": "a ] b } c, \"q\"", "x": \#(Double(id) / 2)}"#
        }
        text += "\n]\n"
        #expect(text.utf8.count > 3 * 65_536)
        let rows = try records("split.json", Array(text.utf8), format: .json)
        #expect(rows.count == 5000)
        #expect(rows[4999].values == [.integer(5000), .text(#"a ] b } c, "q""#), .real(2500)])
        #expect(rows[0].line == 2 && rows[4999].line == 5001)
    }

    @Test("malformed JSON arrays name the line", arguments: [
        ("{\"id\": 1}", "bad.json:1: expected a JSON array of objects, found '{'"),
        ("[{\"id\": 1} {\"id\": 2}]", "bad.json:1: expected ',' or ']' between array elements, found '{'"),
        ("[{\"id\": 1},\n{\"id\": ", "bad.json:2: the JSON array is not closed (the file ends inside an element)"),
        ("[1, 2]", "bad.json:1: expected a JSON object"),
        ("[{\"id\": 1}] x", "bad.json:1: unexpected text after the JSON array"),
    ])
    func malformedJSON(text: String, message: String) throws {
        #expect {
            _ = try records("bad.json", Array(text.utf8), format: .json)
        } throws: { error in
            (error as? FeedError)?.description == message
        }
    }

    @Test("bytes to cells: integers with overflow, reals, booleans, datetimes, nulls")
    func cells() {
        func integer(_ text: String) -> Int64? { Array(text.utf8).withUnsafeBufferPointer { ValueConverter.integer($0) } }
        func real(_ text: String) -> Double? { Array(text.utf8).withUnsafeBufferPointer { ValueConverter.real($0) } }
        #expect(integer("-42") == -42 && integer("+7") == 7 && integer("9223372036854775807") == .max)
        #expect(integer("9223372036854775808") == nil && integer("1.5") == nil && integer("") == nil && integer("-") == nil)
        #expect(real("2.5") == 2.5 && real("-1e3") == -1000 && real(".5") == 0.5)
        #expect(real("abc") == nil && real("1.5x") == nil && real("inf") == nil && real("nan") == nil && real(" 1") == nil && real("0x10") == nil)
        let converter = CellConverter(column: Column(name: "n", type: .integer, notNull: true), isRowidKey: false)
        var batch = RowBatch()
        batch.beginRow(line: 1, layout: 0)
        let problems = ["12", "NA", "12.0", "x"].map { text in Array(text.utf8).withUnsafeBufferPointer { converter.append($0, nulls: NullMarkers(["NA"]), to: &batch) } }
        #expect(problems == [nil, "missing value in a not null column", nil, "\"x\" is not an integer"])
        #expect(batch.cells(of: 0).map { batch.value(at: $0) } == [.integer(12), .integer(12)])
    }

    @Test("reals without strtod: every plain decimal of up to 15 digits is the double strtod reads, bit for bit, -0 and all")
    func plainDecimalsAsStrtodReadsThem() {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "+0", "-0.0", "5.", ".5", "-.5", "+7.25", "0.1", "0.3", "123456789012345", "999999999999999",
                     "0.000000000000001", "9007199254740.993", "1.7976931348623157", "00000000000001.5"]
        for _ in 0..<200_000 {
            let count = Int.random(in: 1...15, using: &generator)
            var digits = String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let point = Int.random(in: -1...count, using: &generator)
            if point >= 0 { digits.insert(".", at: digits.index(digits.startIndex, offsetBy: point)) }
            texts.append(["", "-", "+"].randomElement(using: &generator)! + digits)
        }
        var mismatches: [String] = []
        for text in texts {
            let ours = Array(text.utf8).withUnsafeBufferPointer { ValueConverter.real($0) }
            let theirs = strtod(text, nil)
            if ours?.bitPattern != theirs.bitPattern { mismatches.append("\(text): \(String(describing: ours)) against \(theirs)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        // The fast path took the plain ones (16 digits and more go to strtod, and still read right).
        #expect(Array("0.1".utf8).withUnsafeBufferPointer { ValueConverter.plainDecimal($0) } == 0.1)
        #expect(Array("1234567890123456".utf8).withUnsafeBufferPointer { ValueConverter.plainDecimal($0) } == nil)
        #expect(Array("1e3".utf8).withUnsafeBufferPointer { ValueConverter.plainDecimal($0) } == nil)
        #expect(Array(".".utf8).withUnsafeBufferPointer { ValueConverter.real($0) } == nil)
        #expect(Array("1.2.3".utf8).withUnsafeBufferPointer { ValueConverter.real($0) } == nil)
    }

    @Test("booleans in any case, byte by byte, one rule for feeds and stored text", arguments: [("true", true), ("TRUE", true), ("True", true), ("1", true),
                                                           ("false", false), ("FaLsE", false), ("0", false)])
    func booleans(text: String, value: Bool) {
        #expect(ValueConverter.convert(text: text, to: .boolean) == .success(.integer(value ? 1 : 0)))
        #expect(StoreValue.text(text).bool == value)
    }

    @Test("not booleans", arguments: ["yes", "t", "2", "", "truee", "fals", "tru\u{0}", "\u{54}RU\u{C9}", "01"])
    func notBooleans(text: String) {
        #expect(ValueConverter.convert(text: text, to: .boolean)
                == .failure(ValueConverter.Problem(message: "\"\(text)\" is not a boolean (true, false, 1 or 0)")))
        #expect(StoreValue.text(text).bool == nil)
    }

    @Test("one set of rules for every feed: a field converts the same from CSV bytes, JSON text and inline rows",
          arguments: [("1e3", ColumnType.integer), ("12.0", .integer), ("0x10", .integer), ("inf", .real), (" 1", .real),
                      ("1e3", .real), ("TRUE", .boolean), ("yes", .boolean), ("2026-01-31T08:15:00Z", .datetime), ("2026-13-01", .datetime)])
    func oneSetOfRules(text: String, type: ColumnType) {
        let converter = CellConverter(column: Column(name: "c", type: type), isRowidKey: false)
        var batch = RowBatch()
        batch.beginRow(line: 1, layout: 0)
        let fromBytes = Array(text.utf8).withUnsafeBufferPointer { converter.append($0, nulls: NullMarkers([]), to: &batch) }
        let fromText = ValueConverter.convert(text: text, to: type)
        switch fromText {
        case .success(let value):
            #expect(fromBytes == nil)
            #expect(batch.cells(of: 0).map { batch.value(at: $0) } == [value])
        case .failure(let problem):
            #expect(fromBytes == problem.message)
        }
        #expect(ValueConverter.convert(.text(text), to: type) == fromText)
    }
}
