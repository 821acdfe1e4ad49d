import Foundation
import Testing
@testable import BatchRunKit

/// Compressed feeds read through the real `gzip` and `zstd` programs' output: every format
/// gives the records the plain file gives; truncated, corrupt and non-compressed bytes are
/// errors naming the feed; a reader opened at a checkpoint goes on from there.
@Suite("Compressed feeds (gzip, zstd)")
struct CompressedFeedTests {
    /// A feed of `rows` rows in `format`, quoted fields with delimiters and line breaks in CSV.
    static func feed(_ format: FeedFormat, rows: Int = 20_000) -> String {
        let ids = 1...rows
        switch format {
        case .csv: return "id,name,note\n" + ids.map { "\($0),n\($0),\"a, \"\"b\"\"\nc\($0)\"\n" }.joined()
        case .tsv: return "id\tname\tnote\n" + ids.map { "\($0)\tn\($0)\tt\($0)\n" }.joined()
        case .ndjson: return ids.map { "{\"id\": \($0), \"name\": \"n\($0)\", \"note\": \"x\\ny\"}\n" }.joined()
        case .json: return "[\n" + ids.map { "{\"id\": \($0), \"name\": \"n\($0)\"}" }.joined(separator: ",\n") + "\n]\n"
        }
    }

    /// `text` written to `folder/name` and compressed there by the program (`gzip` or `zstd`).
    static func compressed(_ text: String, name: String, in folder: URL, compression: FeedCompression) throws -> String {
        let plain = folder.appendingPathComponent(name).path
        try text.write(toFile: plain, atomically: true, encoding: .utf8)
        let program = compression == .gzip ? "gzip" : "zstd"
        try Self.runProgram(program, ["-q", "-k", "-f", plain])
        return plain + (compression == .gzip ? ".gz" : ".zst")
    }

    static func runProgram(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(program) \(arguments) failed")
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-compressed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func read(_ path: String, format: FeedFormat, compression: FeedCompression, startingAt: FeedOffset? = nil,
                     limit: Int = .max) throws -> (records: [FeedRecord], next: FeedOffset) {
        var reader = try FeedReaders.open(path: path, format: format, displayPath: "feed", startingAt: startingAt, compression: compression)
        var records: [FeedRecord] = []
        while records.count < limit, let record = try reader.next() { records.append(record) }
        return (records, reader.nextRecord)
    }

    static let cases: [(FeedFormat, FeedCompression)] = FeedFormat.allCases.flatMap { format in [(format, .gzip), (format, .zstd)] }

    @Test("every format, gzip and zstd: the records (values and lines) of the plain file", arguments: cases)
    func sameRecords(format: FeedFormat, compression: FeedCompression) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.compressed(Self.feed(format), name: "feed.\(format.rawValue)", in: folder, compression: compression)
        let plain = try Self.read(FeedCompression.strip(path), format: format, compression: .none).records
        let unpacked = try Self.read(path, format: format, compression: compression).records
        #expect(plain.count == 20_000)
        #expect(unpacked.map(\.values) == plain.map(\.values))
        #expect(unpacked.map(\.line) == plain.map(\.line))
    }

    @Test("a reader opened at a checkpoint of a compressed feed reads on from there: no record twice, none missed", arguments: cases)
    func resumeAtCheckpoint(format: FeedFormat, compression: FeedCompression) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.compressed(Self.feed(format), name: "feed.\(format.rawValue)", in: folder, compression: compression)
        let whole = try Self.read(path, format: format, compression: compression).records
        let first = try Self.read(path, format: format, compression: compression, limit: 12_345)
        let rest = try Self.read(path, format: format, compression: compression, startingAt: first.next).records
        #expect((first.records + rest).map(\.values) == whole.map(\.values))
        #expect((first.records + rest).map(\.line) == whole.map(\.line))
    }

    @Test("gzip members one after another (cat a.gz b.gz) read as one feed")
    func gzipMembers() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try Self.compressed("id,name\n1,a\n2,b\n", name: "a.csv", in: folder, compression: .gzip)
        let second = try Self.compressed("3,c\n", name: "b.csv", in: folder, compression: .gzip)
        let joined = folder.appendingPathComponent("joined.csv.gz").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second))
        try bytes.write(to: URL(fileURLWithPath: joined))
        #expect(try Self.read(joined, format: .csv, compression: .gzip).records.map(\.values)
                == [[.text("1"), .text("a")], [.text("2"), .text("b")], [.text("3"), .text("c")]])
    }

    @Test("a truncated, corrupt or plain-text compressed feed is an error naming the feed and what is wrong",
          arguments: [(FeedCompression.gzip, "truncated"), (.zstd, "truncated"), (.gzip, "corrupt"), (.zstd, "corrupt"),
                      (.gzip, "plain"), (.zstd, "plain"), (.gzip, "empty"), (.zstd, "empty")])
    func badStreams(compression: FeedCompression, damage: String) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.compressed(Self.feed(.csv), name: "feed.csv", in: folder, compression: compression)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        switch damage {
        case "truncated": bytes = bytes.prefix(bytes.count * 2 / 3)
        case "corrupt": bytes[bytes.count - 2] ^= 0x5A   // in the check at the end (gzip's length, zstd's checksum)
        case "plain": bytes = Data(Self.feed(.csv).utf8)
        default: bytes = Data()
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        let expected = switch damage {
        case "truncated": "the \(compression == .gzip ? "gzip" : "zstd") stream is truncated"
        case "empty": "stream is empty"
        default: "stream is corrupt"
        }
        do {
            _ = try Self.read(path, format: .csv, compression: compression)
            Issue.record("a \(damage) \(compression) feed was read without an error")
        } catch {
            #expect("\(error)".hasPrefix("feed:"), "\(error)")
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test("a feed whose first read fails (a cancel, a plain file named .gz) is an error, not an empty feed, in every format",
          arguments: FeedFormat.allCases)
    func firstReadFails(format: FeedFormat) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.compressed(Self.feed(format, rows: 10), name: "feed.\(format.rawValue)", in: folder, compression: .gzip)
        let plain = folder.appendingPathComponent("plain.\(format.rawValue).gz").path
        try Self.feed(format, rows: 10).write(toFile: plain, atomically: true, encoding: .utf8)
        let cases: [(String, FeedWatch?, String)] = [(path, FeedWatch(isCancelled: { true }, budget: nil), "the job was cancelled"),
                                                     (plain, nil, "the gzip stream is")]
        for (file, watch, expected) in cases {
            do {
                var reader = try FeedReaders.open(path: file, format: format, displayPath: "feed", compression: .gzip, watch: watch)
                let record = try reader.next()
                Issue.record("\(format) read \(record.map { "\($0.values)" } ?? "no records, as if empty") without an error")
            } catch {
                #expect("\(error)".hasPrefix("feed:") && "\(error)".contains(expected), "\(error)")
            }
        }
    }

    @Test("the format comes from the suffix before the compression suffix; the compression from the last one")
    func names() {
        #expect(FeedFormat(path: "data/flights.csv.gz") == .csv)
        #expect(FeedFormat(path: "x.NDJSON.ZST") == .ndjson)
        #expect(FeedFormat(path: "x.jsonl.gz") == .ndjson)
        #expect(FeedFormat(path: "x.gz") == nil)
        #expect(FeedFormat(path: "x.tsv") == .tsv)
        #expect(FeedCompression(path: "x.tsv.gz") == .gzip)
        #expect(FeedCompression(path: "x.json.zst") == .zstd)
        #expect(FeedCompression(path: "x.json") == .none)
        #expect(FeedCompression(path: "dir.gz/x") == .none)
        #expect(FeedCompression.strip("a/b.csv.zst") == "a/b.csv")
    }
}
