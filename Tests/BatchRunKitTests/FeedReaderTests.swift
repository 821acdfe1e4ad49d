import Foundation
import Testing
@testable import BatchRunKit

@Suite("Feed readers and value conversion")
struct FeedReaderTests {
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-feed-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: url)
        return url.path
    }

    func records(_ name: String, _ text: String, format: FeedFormat) throws -> [FeedRecord] {
        var reader = try FeedReaders.open(path: try file(name, Array(text.utf8)), format: format, displayPath: name)
        var result: [FeedRecord] = []
        while let record = try reader.next() { result.append(record) }
        return result
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

    @Test("CSV: a UTF-8 byte-order mark is skipped")
    func bom() throws {
        let path = try file("bom.csv", [0xEF, 0xBB, 0xBF] + Array("id,name\n1,ann\n".utf8))
        var reader = try FeedReaders.open(path: path, format: .csv, displayPath: "bom.csv")
        #expect(try reader.next()?.fields == ["id", "name"])
    }

    @Test("CSV errors name the file and line", arguments: [
        ("id,note\n1,\"open\n", "f.csv:2: unterminated quoted field (opened on this line)"),
        ("id,note\n1,a\n2\n", "f.csv:3: expected 2 fields (as in the header), found 1"),
        ("id,note\n1,\"a\"b\n", "f.csv:2: unexpected text after a closing quote in field 2"),
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
