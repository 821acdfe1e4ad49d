import Foundation
import GRDB
import Synchronization
import Testing
@testable import BatchRunKit

/// Imports through the job-file runner: what a bad row leaves behind, and hot swaps.
@Suite("Imports")
struct ImportTests {
    func run(_ yaml: String, feed: (name: String, text: String)? = nil) async throws -> (RunReport, Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if let feed { try feed.text.write(to: folder.appendingPathComponent(feed.name), atomically: true, encoding: .utf8) }
        let file = try JobFileLoader().load(text: yaml, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        return (await JobFileRun(file: file, store: store).run(), store, folder)
    }

    static let model = """
        version: 1
        store: s.sqlite
        entities:
          Reading:
            columns: { id: integer primary key, sensor: text not null, value: real, at: datetime }

        """

    @Test("a bad row fails the step at its line; the batches before it stay, nothing of its batch is written",
          arguments: [("csv", "id,sensor,value,at\n"), ("ndjson", ""), ("json", "")])
    func badRow(format: String, header: String) async throws {
        var lines: [String] = []
        for id in 1...25 {
            let value = id == 17 ? "\"warm\"" : "\(Double(id) / 4)"
            switch format {
            case "csv": lines.append("\(id),s\(id % 3),\(id == 17 ? "warm" : "\(Double(id) / 4)"),2026-01-\(String(format: "%02d", id))")
            default: lines.append(#"{"id": \#(id), "sensor": "s\#(id % 3)", "value": \#(value), "at": "2026-01-\#(String(format: "%02d", id))"}"#)
            }
        }
        let text = format == "json" ? "[\n" + lines.joined(separator: ",\n") + "\n]\n" : header + lines.joined(separator: "\n") + "\n"
        let (report, store, folder) = try await run(Self.model + """
            jobs:
              load:
                batch_size: 5
                steps:
                  - insert: { entity: Reading, from: feed.\(format) }
            """, feed: ("feed.\(format)", text))
        defer { try? FileManager.default.removeItem(at: folder) }
        let line = format == "csv" ? 18 : format == "json" ? 18 : 17
        #expect(report.jobs[0].status == .failed)
        #expect(report.jobs[0].error?.hasSuffix("/feed.\(format):\(line): column value: \"warm\" is not a real") == true,
                "\(report.jobs[0].error ?? "")")
        let count = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Reading") }
        #expect(count == 15)
        #expect(report.jobs[0].rows.inserted == 15 && report.jobs[0].batches.committed == 3)
    }

    @Test("a malformed CSV line fails the step naming its line; earlier batches stay")
    func malformedLine() async throws {
        let text = "id,sensor,value,at\n" + (1...12).map { "\($0),s,1.5,2026-01-01" }.joined(separator: "\n") + "\n13,\"open,1,2026-01-01\n"
        let (report, store, folder) = try await run(Self.model + """
            jobs:
              load:
                batch_size: 4
                steps:
                  - insert: { entity: Reading, from: feed.csv }
            """, feed: ("feed.csv", text))
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(report.jobs[0].error?.hasSuffix("/feed.csv:14: unterminated quoted field (opened on this line)") == true)
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Reading") } == 12)
    }

    @Test("hot swap: a reader polling on another connection sees all old rows or all new rows, never a mix")
    func hotSwap() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-swap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newRows = 60_000
        let feed = "id,sensor,value,at\n" + (1...newRows).map { "\($0),new,\($0),2026-02-01" }.joined(separator: "\n") + "\n"
        try feed.write(to: folder.appendingPathComponent("feed.csv"), atomically: true, encoding: .utf8)
        let file = try JobFileLoader().load(text: Self.model + """
            jobs:
              swap:
                batch_size: 1000
                steps:
                  - insert: { entity: Reading, from: feed.csv, replace: true }
            """, path: folder.appendingPathComponent("job.yaml").path)
        let store = try Store(path: file.store.path, model: file.model)
        try await store.pool.write { db in
            for id in 1...5000 { try db.execute(sql: "INSERT INTO Reading VALUES (?, 'old', 0, '2026-01-01')", arguments: [id]) }
        }
        let seen = Mutex<Set<String>>([])
        let stop = Mutex(false)
        let reader = Thread {
            var configuration = Configuration()
            configuration.readonly = true
            guard let queue = try? DatabaseQueue(path: file.store.path, configuration: configuration) else { return }
            while !stop.withLock({ $0 }) {
                if let row = try? queue.read({ db in
                    try Row.fetchOne(db, sql: "SELECT count(*) AS n, sum(sensor = 'old') AS old, sum(sensor = 'new') AS new FROM Reading")
                }) {
                    let state = "\(row["n"] as Int) old=\(row["old"] as Int? ?? 0) new=\(row["new"] as Int? ?? 0)"
                    seen.withLock { _ = $0.insert(state) }
                }
            }
        }
        reader.start()
        let report = await JobFileRun(file: file, store: store).run()
        // Let the reader see the swapped rows (a busy machine may not schedule it at once).
        let deadline = Date().addingTimeInterval(10)
        while !seen.withLock({ $0.contains("\(newRows) old=0 new=\(newRows)") }) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        stop.withLock { $0 = true }
        #expect(report.status == .ok)
        #expect(report.jobs[0].rows.deleted == 5000 && report.jobs[0].rows.inserted == newRows)
        let states = seen.withLock { $0 }
        #expect(states.isSubset(of: ["5000 old=5000 new=0", "\(newRows) old=0 new=\(newRows)"]), "\(states)")
        #expect(states.contains("\(newRows) old=0 new=\(newRows)"))
    }
}
