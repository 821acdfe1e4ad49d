import Foundation
import Testing
@testable import BatchRunKit

/// Every domain's error, made by the operation that fails for real, has its code, message and
/// location, and says whether the input was invalid (exit status 2) or running failed (1).
@Suite("Structured errors")
struct BatchRunErrorTests {
    static func folder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-errors-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("a job file's error: jobfile.invalid at the first error's line and column, invalid")
    func jobFile() throws {
        let text = "version: 1\nstore: s.sqlite\nentities:\n  T:\n    columns: { id: integer primary key }\njobs:\n  j:\n    stepz: []\n"
        let error = try #require(throws: JobFileError.self) { try JobFileLoader(environment: [:]).load(text: text, path: "j.yaml") }
        #expect(error.code == "jobfile.invalid" && error.isInvalid)
        #expect(error.location?.file == "j.yaml" && error.location?.line == 8 && error.location?.column == 5, "\(error)")
        #expect(error.message.contains("stepz"), "\(error)")
    }

    @Test("a store that cannot be opened: store.cannot-open, a failure rather than an invalid file")
    func storeCannotOpen() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blocker = folder.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let text = "version: 1\nstore: not-a-folder/s.sqlite\nentities:\n  T:\n    columns: { id: integer primary key }\njobs:\n  j:\n    steps:\n      - insert: { entity: T, rows: [{ id: 1 }] }\n"
        let file = try JobFileLoader(environment: [:]).load(text: text, path: folder.appendingPathComponent("j.yaml").path)
        let error = try #require(throws: RunOpeningError.self) { _ = try RunOpening.open(file) }
        #expect(error.code == "store.cannot-open" && !error.isInvalid)
        #expect(error.message.contains("s.sqlite"))
    }

    @Test("a context asked for an entity the model lacks: context.unknown-entity")
    func context() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store(path: folder.appendingPathComponent("s.sqlite").path, model: TestStore.model)
        let context = Context(store: store, name: "t")
        let error = await context.perform { context -> ContextError? in
            do { _ = try context.insert(into: "Nope", values: [:]); return nil } catch let error as ContextError { return error } catch { return nil }
        }
        #expect(error?.code == "context.unknown-entity" && error?.message == "no entity named Nope" && error?.isInvalid == false)
    }

    @Test("a conflict under the error policy: conflict.optimistic")
    func conflict() async throws {
        let test = try TestStore()
        defer { test.cleanUp() }
        let context = Context(store: test.store, name: "job_a", mergePolicy: .error)
        try await context.perform { context in
            for object in try context.fetch(FetchRequest(entity: "Account")) { try object.set("status", to: .text("ours")) }
        }
        try test.outside("UPDATE \"Account\" SET balance = 99 WHERE id = 1")
        let error = await context.perform { context -> MergeConflictError? in
            do { try context.save(); return nil } catch let error as MergeConflictError { return error } catch { return nil }
        }
        #expect(error?.code == "conflict.optimistic" && error?.message == error?.description)
    }

    @Test("a malformed feed: feed.malformed at its line; a step it stops carries the same code and place")
    func feed() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bad.ndjson").path
        try Data("{\"id\": 1}\n\n{oops}\n".utf8).write(to: URL(fileURLWithPath: path))
        var reader = try FeedReaders.open(path: path, format: .ndjson, displayPath: "bad.ndjson")
        let error = try #require(throws: FeedError.self) { while try reader.next() != nil {} }
        #expect(error.code == "feed.malformed" && error.location == SourceLocation(file: "bad.ndjson", line: 3, column: 1))
        let step = StepError("insert T: \(error)", report: StepReport(kind: .insert, entity: "T"), cause: error)
        #expect(step.code == "feed.malformed" && step.location == error.location && step.kind == .failed)
        #expect(StepError.cancelled(report: StepReport(kind: .insert, entity: "T")).code == "step.cancelled")
        #expect(StepError("disk full", report: StepReport(kind: .insert, entity: "T")).code == "step.failed")
    }

    @Test("a report written where a folder is: file.cannot-move naming the path and the system's reason")
    func fileAccess() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("r.json")
        try FileManager.default.createDirectory(at: target.appendingPathComponent("inside"), withIntermediateDirectories: true)
        let report = RunReport(file: "j.yaml", store: "s.sqlite", status: .ok, startedAt: Date(), elapsedSeconds: 0, jobs: [])
        let error = try #require(throws: FileAccessError.self) { try report.writeJSON(to: target.path) }
        #expect(error.code == "file.cannot-move" && error.path == target.path)
        #expect(error.localizedDescription == "cannot move \(target.path): \(error.reason)" && !error.reason.isEmpty)
        // Nothing half-written is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["r.json"])
    }

    @Test("the ledger's statuses read as recorded; one this version does not know reads as failed")
    func statuses() throws {
        // The ledger's times: DateTextTests.ledgerTextWrittenEarlier.
        #expect(LedgerStatus(recorded: "timed_out") == .timedOut && LedgerStatus(recorded: "later") == .failed)
    }

    @Test("a run summary's JSON keeps the recorded text of its times and statuses")
    func summaryJSON() throws {
        let json = #"{"elapsed_s":1.5,"ended_at":"2026-11-26T03:00:01.611Z","id":7,"jobs":[{"done_earlier":false,"name":"a","run_s":1.25,"status":"timed_out"}],"rows":{"deleted":0,"fetched":0,"inserted":3,"rejected":0,"updated":0},"started_at":"2026-11-26T03:00:00.123Z","status":"running"}"#
        let summary = try JSONDecoder().decode(RunSummary.self, from: Data(json.utf8))
        #expect(summary.status == .running && summary.jobs[0].status == .timedOut)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(summary), as: UTF8.self) == json)
    }
}
