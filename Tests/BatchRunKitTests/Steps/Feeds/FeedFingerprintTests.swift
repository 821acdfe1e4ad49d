import Foundation
import Testing
@testable import BatchRunKit

/// The fingerprint an import takes after each batch comes from the bytes its reader holds
/// (issue 50); a resume takes it from the file. They must agree at every record.
@Suite("Feed fingerprints from the reader's bytes")
struct FeedFingerprintTests {
    /// The hash of the window before `offset`, read from the file as a resume does.
    func fileHash(_ path: String, before offset: Int64, window: Int64 = FeedFingerprint.tailWindow) throws -> UInt64 {
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        return FeedFingerprint.hash(handle.fileDescriptor, from: max(0, offset - window), count: min(window, offset))
    }

    func feed(_ format: FeedFormat, rows: Int) -> [UInt8] {
        var text = ""
        switch format {
        case .csv, .tsv:
            text = "id,note\n"
            for id in 1...rows { text += "\(id),\"row \(id)\(id % 5 == 0 ? "\nsecond line" : "")\"\n" }
        case .ndjson:
            for id in 1...rows { text += "{\"id\": \(id), \"note\": \"row \(id)\"}\n" }
        case .json:
            text = "[\n" + (1...rows).map { "  {\"id\": \($0), \"note\": \"row \($0)\"}" }.joined(separator: ",\n") + "\n]\n"
        }
        return Array(text.utf8)
    }

    @Test("At every record of a CSV, NDJSON and JSON feed read over many buffer refills, the reader's hash of the bytes before it is the file's",
          arguments: [FeedFormat.csv, .ndjson, .json])
    func everyRecord(format: FeedFormat) throws {
        let path = try FeedFiles.write("prints.\(format)", feed(format, rows: 12_000))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader: any FeedReader = format == .csv
            ? try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: "prints.csv", bufferSize: 1000)
            : try FeedReaders.open(path: path, format: format, displayPath: "prints")
        var checked = 0
        repeat {
            let offset = reader.nextRecord.offset
            let held = reader.hashOfBytes(beforeNextRecord: Int(FeedFingerprint.tailWindow))
            #expect(held == (try fileHash(path, before: offset)), "at byte \(offset)")
            if held != (try fileHash(path, before: offset)) { return }
            checked += 1
        } while try reader.next() != nil
        #expect(checked == 12_001)
    }

    @Test("A reader gone on from a resume point holds no bytes before it: the window is then read from the file, and from memory once it has read past it")
    func afterResume() throws {
        let path = try FeedFiles.write("resume.csv", feed(.csv, rows: 3_000))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var first = try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: "resume.csv", bufferSize: 512)
        for _ in 0..<1_500 { _ = try first.next() }
        let place = first.nextRecord
        var resumed = try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: "resume.csv", bufferSize: 512,
                                    startingAt: place)
        #expect(resumed.hashOfBytes(beforeNextRecord: 4096) == nil)
        let fingerprinter = FeedFingerprinter(path: path, compressed: false, confinement: nil)
        let position = try #require(fingerprinter.position(at: resumed.nextRecord, rejectedBytes: 0) {
            resumed.hashOfBytes(beforeNextRecord: $0)
        })
        #expect(position.tailHash == (try fileHash(path, before: place.offset)))
        while resumed.nextRecord.offset < place.offset + 4096 { _ = try resumed.next() }
        #expect(resumed.hashOfBytes(beforeNextRecord: 4096) == (try fileHash(path, before: resumed.nextRecord.offset)))
    }

    @Test("A position the fingerprinter took matches the file until the file changes; one written before tailWindow was recorded (64 KB) still matches")
    func matches() throws {
        let bytes = feed(.csv, rows: 20_000)
        let path = try FeedFiles.write("match.csv", bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = try CSVReader(path: path, delimiter: UInt8(ascii: ","), displayPath: "match.csv")
        for _ in 0..<15_000 { _ = try reader.next() }
        let fingerprinter = FeedFingerprinter(path: path, compressed: false, confinement: nil)
        let position = try #require(fingerprinter.position(at: reader.nextRecord, rejectedBytes: 0) {
            reader.hashOfBytes(beforeNextRecord: $0)
        })
        #expect(position.tailWindow == FeedFingerprint.tailWindow)
        #expect(position.feedSize == Int64(bytes.count))
        #expect(FeedFingerprint.matches(position, path: path))

        var legacy = position
        legacy.tailWindow = nil
        legacy.tailHash = try fileHash(path, before: position.offset, window: FeedFingerprint.legacyTailWindow)
        #expect(FeedFingerprint.matches(legacy, path: path))
        legacy.tailHash = position.tailHash   // the 4 KB hash is not the 64 KB one
        #expect(!FeedFingerprint.matches(legacy, path: path))

        // The same size, another byte before the position: refused.
        var changed = bytes
        let at = Int(position.offset) - 10
        changed[at] = changed[at] == UInt8(ascii: "9") ? UInt8(ascii: "8") : UInt8(ascii: "9")
        let sameTime: [FileAttributeKey: Any] = [.modificationDate: Date(timeIntervalSince1970: position.feedModified)]
        try Data(changed).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes(sameTime, ofItemAtPath: path)
        #expect(!FeedFingerprint.matches(position, path: path))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes(sameTime, ofItemAtPath: path)
        #expect(FeedFingerprint.matches(position, path: path))   // the time put back: only the byte was refused
    }
}
