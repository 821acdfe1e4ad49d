import Foundation
import Testing
@testable import BatchRunKit

/// Bounds on hostile input: job files (aliases, nesting, size) and feeds (a field, a record),
/// and a feed that changes under the reader.
@Suite("Input limits")
struct InputLimitTests {
    func loadError(_ text: String) -> String? {
        do {
            _ = try JobFileLoader(environment: [:]).load(text: text, path: "j.yaml")
            return nil
        } catch {
            return error.description
        }
    }

    /// Nested aliases, each level `width` times the one below, `levels` deep.
    static func aliasBomb(levels: Int, width: Int = 10) -> String {
        var text = "version: 1\nparams:\n  l0: &l0 [\(Array(repeating: "\"lol\"", count: width).joined(separator: ", "))]\n"
        for level in 1..<levels {
            text += "  l\(level): &l\(level) [\(Array(repeating: "*l\(level - 1)", count: width).joined(separator: ", "))]\n"
        }
        return text
    }

    @Test("a billion laughs is refused at the alias, in milliseconds")
    func aliasBomb() {
        let started = Date()
        let error = loadError(Self.aliasBomb(levels: 10))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(error == "j.yaml:6:47: error: alias *l2 expands past the limit: aliases may add at most 10000 nodes to a job file")
    }

    @Test("aliases within the bound are fine")
    func fewAliases() {
        let text = """
            version: 1
            params: { a: &a 1 }
            defaults: &d { batch_size: 10 }
            """
        #expect(YAMLLimits.check(text) == nil)
        #expect(YAMLLimits.check(Self.aliasBomb(levels: 3)) == nil)
    }

    @Test("nesting past 64 levels is refused where it goes too deep, also through an alias")
    func nesting() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(loadError("version: 1\nx: \(deep)\n") == "j.yaml:2:67: error: nesting deeper than 64 levels; a job file needs far fewer")
        let half = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(loadError("a: &a \(half)\nb: \(String(repeating: "[", count: 30))*a\(String(repeating: "]", count: 30))\n")
                == "j.yaml:2:34: error: alias *a nests deeper than 64 levels; a job file needs far fewer")
    }

    @Test("a job file over 1 MiB is refused unread")
    func fileSize() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).yaml").path
        try Data(("version: 1\n# " + String(repeating: "x", count: 1 << 20) + "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: JobFileError.self) { try JobFileLoader().load(path: path) }
        do {
            _ = try JobFileLoader().load(path: path)
        } catch {
            #expect(error.description == "\(path):1:1: error: the job file is larger than 1024 KiB, the limit for a job file; put large data in a feed (insert from:)")
        }
    }

    func feedError(_ name: String, _ bytes: [UInt8], format: FeedFormat) -> String? {
        do {
            _ = try FeedFiles.records(name, bytes, format: format)
            return nil
        } catch {
            return (error as? FeedError)?.description ?? "\(error)"
        }
    }

    @Test("a feed field over 1 MiB is an error naming the file, line and bound")
    func longField() {
        let long = String(repeating: "x", count: (1 << 20) + 1)
        #expect(feedError("f.csv", Array("id,note\n1,ok\n2,\(long)\n".utf8), format: .csv)
                == "f.csv:3: field 2 is longer than 1 MiB, the limit for one feed field")
        #expect(feedError("f.ndjson", Array("{\"id\": 1}\n{\"id\": 2, \"note\": \"\(long)\"}\n".utf8), format: .ndjson)
                == "f.ndjson:2: field note is longer than 1 MiB, the limit for one feed field")
        #expect(feedError("f.csv", Array("id,note\n1,\(String(repeating: "x", count: 1 << 20))\n".utf8), format: .csv) == nil)
        // The bound is on the value: 600,000 quotes, written doubled (1.2 MB in the file), fit.
        let quotes = String(repeating: "\"\"", count: 600_000)
        #expect(feedError("f.csv", Array("id,note\n1,\"\(quotes)\"\n".utf8), format: .csv) == nil)
        #expect(feedError("f.csv", Array("id,note\n1,\"\(quotes)\(String(repeating: "q", count: 500_000))\"\n".utf8), format: .csv)
                == "f.csv:2: field 2 is longer than 1 MiB, the limit for one feed field")
    }

    @Test("a record over 4 MiB (an unclosed quote, a file with no line break) is an error", arguments: [
        (FeedFormat.csv, "f.csv", "id,note\n1,\"never closed\n", "f.csv:2: the record starting on this line is longer than 4 MiB, the limit for one feed record"),
        (.tsv, "f.tsv", "id\tnote\n1\t", "f.tsv:2: the record starting on this line is longer than 4 MiB, the limit for one feed record"),
        (.ndjson, "f.ndjson", "{\"id\": 1}\n{\"note\": \"", "f.ndjson:2: the record starting on this line is longer than 4 MiB, the limit for one feed record"),
        (.json, "f.json", "[{\"id\": 1},\n {\"note\": \"", "f.json:2: the record starting on this line is longer than 4 MiB, the limit for one feed record"),
    ])
    func longRecord(format: FeedFormat, name: String, prefix: String, message: String) {
        // Fields of 512 KiB, so only the record's bound applies.
        let filler = Array(repeating: String(repeating: "y", count: 1 << 19), count: 10).joined(separator: format == .tsv ? "\t" : ",")
        #expect(feedError(name, Array((prefix + filler).utf8), format: format) == message)
    }

    static let truncationCases: [(FeedFormat, String)] = [(.csv, "f.csv"), (.tsv, "f.tsv"), (.ndjson, "f.ndjson"), (.json, "f.json")]

    static func feed(_ format: FeedFormat, rows: Int) -> String {
        let note = String(repeating: "z", count: 90)
        switch format {
        case .csv: return "id,note\n" + (1...rows).map { "\($0),\(note)\n" }.joined()
        case .tsv: return "id\tnote\n" + (1...rows).map { "\($0)\t\(note)\n" }.joined()
        case .ndjson: return (1...rows).map { "{\"id\": \($0), \"note\": \"\(note)\"}\n" }.joined()
        case .json: return "[\n" + (1...rows).map { "{\"id\": \($0), \"note\": \"\(note)\"}" }.joined(separator: ",\n") + "\n]\n"
        }
    }

    @Test("a feed truncated while being read is an error saying so", arguments: truncationCases)
    func truncated(format: FeedFormat, name: String) throws {
        let path = try FeedFiles.write(name, Array(Self.feed(format, rows: 10_000).utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        var reader = try FeedReaders.open(path: path, format: format, displayPath: name)
        _ = try reader.next()
        #expect(truncate(path, 300_000) == 0)
        var read = 1
        do {
            while try reader.next() != nil { read += 1 }
            Issue.record("read \(read) records of a truncated feed without an error")
        } catch {
            #expect(error.description.hasPrefix("\(name):"))
            #expect(error.description.hasSuffix(": the feed was truncated while being read (\(size) bytes when opened, it ended after 300000)"),
                    "\(error)")
        }
    }

    @Test("a feed deleted while being read is read to its end (the open file stays readable)", arguments: truncationCases)
    func deleted(format: FeedFormat, name: String) throws {
        let path = try FeedFiles.write(name, Array(Self.feed(format, rows: 10_000).utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try FeedReaders.open(path: path, format: format, displayPath: name)
        _ = try reader.next()
        try FileManager.default.removeItem(atPath: path)
        var read = 1
        while try reader.next() != nil { read += 1 }
        #expect(read == 10_000)
    }
}
