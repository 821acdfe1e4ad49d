import Foundation
import Testing
import TestSupport

/// Section 16's metrics read back by the test's own Prometheus-text parser: `run
/// --metrics-file` and `worker --metrics`, with exact counts after a known set of items.
@Suite("Metrics")
struct MetricsTests {
    /// 200 rows of Row in batches of 50, one Counter row inserted and then updated (`failing`:
    /// the update breaks Counter's NOT NULL, and its job fails as it runs).
    static func jobFile(store: String, failing: Bool = false) -> String {
        let rows = (1...200).map { "{ id: \($0), item: 1 }" }.joined(separator: ", ")
        return """
            version: 1
            store: \(store)
            entities:
              Row:
                columns: { id: integer primary key, item: integer not null }
              Counter:
                columns: { id: integer primary key, n: integer not null }
            jobs:
              load:
                batch_size: 50
                steps:
                  - insert: { entity: Row, rows: [\(rows)] }
              seed:
                steps:
                  - insert: { entity: Counter, rows: [{ id: 1, n: 0 }] }
              bump:
                needs: seed
                steps:
                  - batch-update: { entity: Counter, set: { n: "\(failing ? "CASE WHEN n >= 0 THEN NULL ELSE n END" : "n + 1")" } }
            """
    }

    /// Batches committed, summed over the jobs of a JSON report.
    static func batchesCommitted(_ report: [String: Any]) -> Int {
        (report["jobs"] as? [[String: Any]] ?? []).reduce(0) { $0 + (($1["batches"] as? [String: Int])?["committed"] ?? 0) }
    }

    @Test("run --metrics-file writes the run's rows per entity and change, and one batch observation per batch committed")
    func metricsFile() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.jobFile(store: "store.sqlite"))
        let result = try Batchrun.run(["run", "job.yaml", "--metrics-file", "out/run.prom", "--report", "report.json"], in: folder.url)
        #expect(result.status != 0, "the folder out/ does not exist: the file cannot be written")
        #expect(result.stderr.contains("could not write the metrics out/run.prom"))
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: folder.path("store.sqlite"))
        let ok = try Batchrun.run(["run", "job.yaml", "--metrics-file", "out/run.prom", "--report", "report.json"], in: folder.url)
        #expect(ok.status == 0, "\(ok.stderr)")
        let samples = PrometheusSamples(try String(contentsOfFile: folder.path("out/run.prom"), encoding: .utf8))
        #expect(samples.value("batchrun_rows_total", ["entity": "Row", "change": "inserted"]) == 200)
        #expect(samples.value("batchrun_rows_total", ["entity": "Counter", "change": "inserted"]) == 1)
        #expect(samples.value("batchrun_rows_total", ["entity": "Counter", "change": "updated"]) == 1)
        #expect(samples.types["batchrun_rows_total"] == "counter")
        #expect(samples.types["batchrun_batch_duration_seconds"] == "histogram")
        let batches = Self.batchesCommitted(try folder.json("report.json"))
        #expect(batches >= 6)   // 4 of Row, 1 insert and 1 update of Counter
        #expect(samples.value("batchrun_batch_duration_seconds_count") == Double(batches))
        #expect(samples.value("batchrun_batch_duration_seconds_bucket", ["le": "+Inf"]) == Double(batches))
        #expect(!FileManager.default.fileExists(atPath: folder.path("out/run.prom.tmp")))
    }

    @Test("worker --metrics serves /metrics on loopback: items done and failed, rows per entity, item and batch histograms, slots, queue counts")
    func workerMetrics() throws {
        let folder = try TemporaryFolder()
        for number in 1...2 { try folder.write("ok\(number).yaml", Self.jobFile(store: "ok\(number).sqlite")) }
        try folder.write("bad.yaml", Self.jobFile(store: "bad.sqlite", failing: true))
        let submitted = try Batchrun.run(["submit", "q", "ok1.yaml", "ok2.yaml", "bad.yaml"], in: folder.url)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let output = folder.url.appendingPathComponent("worker.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let worker = try Batchrun.start(["worker", "q", "--metrics", ":0"], in: folder, output: try FileHandle(forWritingTo: output))
        defer { if worker.isRunning { worker.terminate(); worker.waitUntilExit() } }
        // The worker says where it listens: `metrics at http://127.0.0.1:PORT/metrics`.
        var port: Int?
        let deadline = Date().addingTimeInterval(120)
        while port == nil, Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "metrics at http://127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let listening = try #require(port)
        #expect(listeningAddresses(port: listening) == ["0100007F"], "bound to 127.0.0.1 only")
        var samples = PrometheusSamples("")
        while Date() < deadline {
            if let (status, body) = httpGet(port: listening, path: "/metrics"), status == 200 {
                samples = PrometheusSamples(body)
                if samples.value("batchrun_items_total", ["status": "done"]) == 2,
                   samples.value("batchrun_items_total", ["status": "failed"]) == 1,
                   samples.value("batchrun_queue_items", ["state": "done"]) == 2 { break }
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(samples.value("batchrun_items_total", ["status": "done"]) == 2)
        #expect(samples.value("batchrun_items_total", ["status": "failed"]) == 1)
        #expect(samples.value("batchrun_item_duration_seconds_count") == 3)
        #expect(samples.value("batchrun_rows_total", ["entity": "Row", "change": "inserted"]) == 600)
        #expect(samples.value("batchrun_rows_total", ["entity": "Counter", "change": "inserted"]) == 3)
        #expect(samples.value("batchrun_rows_total", ["entity": "Counter", "change": "updated"]) == 2)
        let reports = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".json") }
        let batches = try reports.reduce(0) { $0 + Self.batchesCommitted(try folder.json("q/done/" + $1)) }
        #expect(reports.count == 2)
        let failedReports = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/failed")).filter { $0.hasSuffix(".json") }
        let failedBatches = try failedReports.reduce(0) { $0 + Self.batchesCommitted(try folder.json("q/failed/" + $1)) }
        #expect(samples.value("batchrun_batch_duration_seconds_count") == Double(batches + failedBatches))
        #expect(samples.value("batchrun_queue_items", ["state": "failed"]) == 1)
        #expect(samples.value("batchrun_worker_slots", ["state": "busy"]) == 0)
        #expect(samples.value("batchrun_worker_slots", ["state": "idle"]) == 1)
        #expect(samples.value("batchrun_takeovers_total") == nil)
        #expect(httpGet(port: listening, path: "/../../etc/passwd")?.status == 404)
        let leftInRunning = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/running"))
        #expect(!leftInRunning.contains { $0.hasSuffix(".progress") }, "each run removes the progress it published: \(leftInRunning)")
    }

    @Test("--log-format json: every line of run and worker is one JSON object with ts, level, event, item, job, rows, message")
    func jsonLogs() throws {
        let folder = try TemporaryFolder()
        try folder.write("job.yaml", Self.jobFile(store: "store.sqlite"))
        try folder.write("bad.yaml", Self.jobFile(store: "bad.sqlite", failing: true))
        let run = try Batchrun.run(["run", "job.yaml", "--log-format", "json"], in: folder.url)
        #expect(run.status == 0, "\(run.stderr)")
        let runLines = try Self.jsonLines(run.stdout)
        #expect(runLines.contains { $0["event"] as? String == "job_ok" && $0["job"] as? String == "load" && $0["rows"] as? Int == 200 })
        #expect(runLines.last?["event"] as? String == "run_ok")
        let failed = try Batchrun.run(["run", "bad.yaml", "--log-format", "json"], in: folder.url)
        #expect(failed.status == 1, "\(failed.stderr)")
        let failedLines = try Self.jsonLines(failed.stdout + failed.stderr)
        #expect(failedLines.contains { $0["level"] as? String == "error" && $0["job"] as? String == "bump" })
        #expect(try Batchrun.run(["submit", "q", "job.yaml", "bad.yaml"], in: folder.url).status == 0)
        let worker = try Batchrun.run(["worker", "q", "--once", "--log-format", "json"], in: folder.url)
        let workerLines = try Self.jsonLines(worker.stdout)
        #expect(workerLines.contains { $0["event"] as? String == "item_started" && ($0["item"] as? String)?.contains("job.yaml") == true })
        #expect(workerLines.contains { $0["event"] as? String == "item_done" })
        #expect(workerLines.contains { $0["event"] as? String == "item_failed" && $0["level"] as? String == "error" })
        // The items' own logs are JSON too.
        let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path("q/done")).filter { $0.hasSuffix(".log") }
        #expect(logs.count == 1)
        for log in logs { _ = try Self.jsonLines(try String(contentsOfFile: folder.path("q/done/" + log), encoding: .utf8)) }
    }

    /// Every line parsed as a JSON object with the seven keys (fails the test otherwise).
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        let lines = text.split(separator: "\n")
        #expect(!lines.isEmpty)
        return try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let parsed = try #require(object, "not a JSON object: \(line)")
            #expect(Set(parsed.keys) == ["ts", "level", "event", "item", "job", "rows", "message"], "\(line)")
            #expect(parsed["ts"] is String && parsed["message"] is String)
            return parsed
        }
    }
}
