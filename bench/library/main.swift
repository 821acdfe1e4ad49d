// The library's figures (issue 8): object inserts per second, the worst main-actor stall while
// a main context merges background saves, and the main actor's time in a large fetch.
// Issue 34: the worst stall while a main context's live results of 60,000 rows follow such an update.
//     .build/release/batchrun-bench-library [ROWS_FOR_INSERTS] [RUNS]    (JSON on standard output)
import BatchRunKit
import Foundation

if CommandLine.arguments.count > 2, CommandLine.arguments[1] == "queue-claim" {   // bench/queue_features.py
    try queueClaimMain(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

let insertRows = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1])! : 200_000
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2])! : 5

let model = Model(entities: [
    Entity(name: "Reading", columns: [
        Column(name: "id", type: .integer, isPrimaryKey: true),
        Column(name: "sensor", type: .text, notNull: true),
        Column(name: "value", type: .real),
        Column(name: "taken_at", type: .datetime),
        Column(name: "ok", type: .boolean),
    ], primaryKey: ["id"]),
])

func freshStore() throws -> (Store, URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-bench-\(UUID().uuidString)")
    return (try Store(path: folder.appendingPathComponent("bench.sqlite").path, model: model), folder)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Rows per second of `Context.insert` + `saveAndReset()` in batches of 10,000, five columns.
func objectInsertRate() async throws -> Double {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    let context = Context(store: store, name: "insert")
    let start = DispatchTime.now()
    try await context.perform { context in
        for first in stride(from: 1, through: insertRows, by: 10_000) {
            for id in first..<min(first + 10_000, insertRows + 1) {
                try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "s\(id % 50)",
                                                             "value": .real(Double(id) / 10), "taken_at": "2026-01-31T08:15:00Z",
                                                             "ok": true])
            }
            try context.saveAndReset()
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    return Double(insertRows) / seconds
}

/// The process's resident memory now, in MB (Linux's /proc/self/statm).
func residentMB() -> Double {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
    let pages = Double(statm.split(separator: " ")[1]) ?? 0
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// Issue 34: rows per second of `Context.insert` + plain `save()` (no reset: the Core Data
/// habit) every 10,000, 500,000 rows by default, and the resident memory after the first and
/// the last save (flat when saved objects nobody holds are not kept), and the seconds in `save()`.
func plainSaveInsertRate(rows: Int) async throws -> (rate: Double, firstMB: Double, lastMB: Double, saving: Double) {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    let context = Context(store: store, name: "insert")
    let start = DispatchTime.now()
    let (memory, savingNs) = try await context.perform { context -> ([Double], UInt64) in
        var memory: [Double] = []
        var savingNs: UInt64 = 0
        for first in stride(from: 1, through: rows, by: 10_000) {
            for id in first..<min(first + 10_000, rows + 1) {
                try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "s\(id % 50)",
                                                             "value": .real(Double(id) / 10), "taken_at": "2026-01-31T08:15:00Z",
                                                             "ok": true])
            }
            let saveStart = DispatchTime.now().uptimeNanoseconds
            try context.save()
            savingNs += DispatchTime.now().uptimeNanoseconds - saveStart
            memory.append(residentMB())
        }
        return (memory, savingNs)
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    return (Double(rows) / seconds, memory.first!, memory.last!, Double(savingNs) / 1e9)
}

/// A reading as a typed record (issue 34), the same five columns as the object inserts.
struct Reading: Record {
    static let entity = "Reading"
    var id: Int
    var sensor: String
    var value: Double
    var taken_at: Date
    var ok: Bool
}

/// Issue 34: rows per second of `Context.insert(_ record:)` + plain `save()` every 10,000, the
/// same rows as `plainSaveInsertRate` (the date a `Date`), the process's CPU seconds and the seconds in `save()`.
func recordInsertRate(rows: Int) async throws -> (rate: Double, cpu: Double, saving: Double) {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    let context = Context(store: store, name: "insert")
    let taken = Date(timeIntervalSince1970: 1_769_847_300)
    let cpuBefore = cpuSeconds()
    let start = DispatchTime.now()
    let savingNs = try await context.perform { context -> UInt64 in
        var saving: UInt64 = 0
        for first in stride(from: 1, through: rows, by: 10_000) {
            for id in first..<min(first + 10_000, rows + 1) {
                try context.insert(Reading(id: id, sensor: "s\(id % 50)", value: Double(id) / 10, taken_at: taken, ok: true))
            }
            let saveStart = DispatchTime.now().uptimeNanoseconds
            try context.save()
            saving += DispatchTime.now().uptimeNanoseconds - saveStart
        }
        return saving
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    return (Double(rows) / seconds, cpuSeconds() - cpuBefore, Double(savingNs) / 1e9)
}

#if Macros
/// Issue 49: the same rows as `@Model` instances (`Context.insert(_ model:)` + plain `save()`
/// every 10,000), in a store of their own; built with the Macros trait only (bench/library.sh).
@Model final class Sample {
    @Key var id: Int
    var sensor: String
    var value: Double
    var takenAt: Date
    var ok: Bool
    init(id: Int, sensor: String, value: Double, takenAt: Date, ok: Bool) {
        self.id = id; self.sensor = sensor; self.value = value; self.takenAt = takenAt; self.ok = ok
    }
}

func modelInsertRate(rows: Int) async throws -> Double {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try Store(path: folder.appendingPathComponent("models.sqlite").path, model: try Model(Sample.self, columnNames: .snakeCase))
    let context = Context(store: store, name: "insert")
    let taken = Date(timeIntervalSince1970: 1_769_847_300)
    let start = DispatchTime.now()
    try await context.perform { context in
        for first in stride(from: 1, through: rows, by: 10_000) {
            for id in first..<min(first + 10_000, rows + 1) {
                try context.insert(Sample(id: id, sensor: "s\(id % 50)", value: Double(id) / 10, takenAt: taken, ok: true))
            }
            try context.save()
        }
    }
    return Double(rows) / (Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}
#endif

/// The process's user and system CPU time so far, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(truncatingIfNeeded: RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Measures the longest gap between ticks of a task on the main actor while `work` runs.
@MainActor
func worstStall(during work: () async throws -> Void) async rethrows -> Double {
    var last = DispatchTime.now().uptimeNanoseconds
    var worst: UInt64 = 0
    let ticker = Task { @MainActor in
        while !Task.isCancelled {
            let now = DispatchTime.now().uptimeNanoseconds
            worst = max(worst, now - last)
            last = now
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    try await work()
    ticker.cancel()
    _ = await ticker.value
    return Double(worst) / 1e6
}

/// 60,000 objects registered in the main context, all updated by a background operation in
/// 10,000-row batches: the worst main-actor stall while the merges happen (milliseconds).
/// `rows` readings (ids 1...rows, value 1.0), saved in one save.
func seedReadings(_ rows: Int, in store: Store) async throws {
    try await Context(store: store, name: "seed").perform { context in
        for id in 1...rows { try context.insert(into: "Reading", values: ["id": StoreValue(id), "sensor": "s", "value": 1.0]) }
        try context.saveAndReset()
    }
}

/// An operation that adds 1 to every reading's value in 10,000-row saves (a background update
/// for the main context to merge).
func updateEveryReading(in store: Store) -> BatchOperation<Void> {
    BatchOperation<Void>(name: "update", store: store) { operation, context in
        var request = FetchRequest(entity: "Reading", limit: 10_000)
        request.assigning = [("value", "value + 1")]
        while !operation.isCancelled {
            let batch = try context.fetch(request)
            guard let last = batch.last else { break }
            request.after = last.objectID
            try context.saveAndReset()
        }
    }
}

@MainActor
func mergeStall() async throws -> (stall: Double, fetchStall: Double) {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    try await seedReadings(60_000, in: store)
    let main = MainContext(store: store)
    var held: [ManagedObject] = []
    let fetchStall = try await worstStall {
        held = try await main.fetch(FetchRequest(entity: "Reading"))
    }
    precondition(held.count == 60_000)
    let update = updateEveryReading(in: store)
    let stall = await worstStall {
        _ = await Scheduler(operations: [update], maxConcurrent: 1, mainContext: main).run()
    }
    let shown = try held[59_999]["value"]
    precondition(shown == .real(2), "the held objects show the update")
    return (stall, fetchStall)
}

/// Issue 34: a main-context live result of 60,000 rows (`main.results(for:)`) while a background
/// operation updates all of them in 10,000-row batches, as `mergeStall` does: the worst main-actor
/// stall from the first snapshot until the live results have shown every row updated.
@MainActor
func liveResultsStall() async throws -> Double {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    try await seedReadings(60_000, in: store)
    let main = MainContext(store: store)
    let live = main.results(for: FetchRequest(entity: "Reading"))
    var last: ResultsSnapshot<ResultRow>?
    let stall = try await worstStall {
        var run: Task<Void, Never>?
        var updated = 0
        for try await snapshot in live {
            last = snapshot
            guard run != nil else {   // the first snapshot: every row; then the update starts
                precondition(snapshot.items.count == 60_000)
                run = Task { @MainActor in
                    let update = updateEveryReading(in: store)
                    _ = await Scheduler(operations: [update], maxConcurrent: 1, mainContext: main).run()
                }
                continue
            }
            updated += snapshot.change.updated.count   // what a screen reads to reload its rows
            if updated >= 60_000 { break }
        }
        _ = await run?.value
    }
    let shown = last!
    precondition(shown.items.count == 60_000 && shown.items[59_999]["value"] == .real(2), "the live results show the update")
    return stall
}

let plainSaveRows = Int(ProcessInfo.processInfo.environment["PLAIN_SAVE_ROWS"] ?? "") ?? 500_000
if ProcessInfo.processInfo.environment["BENCH_ONLY_PLAIN_SAVE"] != nil {   // issue 34's figure alone
    for _ in 0..<runs {
        let (rate, firstMB, lastMB, _) = try await plainSaveInsertRate(rows: plainSaveRows)
        print(Int(rate), "rows/s; resident", Int(firstMB), "MB after the first save,", Int(lastMB), "MB after the last")
    }
    exit(0)
}
/// Issue 34: the worst main-actor stall (a 1 ms ticker's longest gap) while a main context
/// fetches 200,000 objects asynchronously (registered 2,000 per hop by default).
@MainActor
func largeFetchStall(rows: Int) async throws -> (stall: Double, release: Double) {
    let (store, folder) = try freshStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    try await seedReadings(rows, in: store)
    let main = MainContext(store: store)
    var fetched: [ManagedObject] = []
    let stall = try await worstStall { fetched = try await main.fetch(FetchRequest(entity: "Reading")) }
    precondition(fetched.count == rows)
    // Dropping every object at once is the caller's act, not the fetch's: timed apart.
    let start = DispatchTime.now().uptimeNanoseconds
    fetched = []
    let release = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    return (stall, release)
}

let largeFetchRows = Int(ProcessInfo.processInfo.environment["LARGE_FETCH_ROWS"] ?? "") ?? 200_000
if ProcessInfo.processInfo.environment["BENCH_ONLY_STALLS"] != nil {   // issue 34's stall figures alone
    for _ in 0..<runs {
        let (merge, _) = try await mergeStall()
        let live = try await liveResultsStall()
        let fetch = try await largeFetchStall(rows: largeFetchRows)
        print("merge of 60,000:", merge, "ms; live results of 60,000:", live, "ms; async fetch of \(largeFetchRows):", fetch.stall, "ms; dropping them at once:", fetch.release, "ms")
    }
    exit(0)
}
if let only = ProcessInfo.processInfo.environment["BENCH_ONLY_RECORDS"] {   // issue 34's record inserts beside plain object inserts
    // `objects` or `records`: that path alone, once (bench/library.sh counts its instructions).
    if only == "objects" || only == "records" {
        _ = only == "objects" ? try await plainSaveInsertRate(rows: plainSaveRows).rate : try await recordInsertRate(rows: plainSaveRows).rate
        exit(0)
    }
    for _ in 0..<runs {
        let objects = try await plainSaveInsertRate(rows: plainSaveRows)
        let records = try await recordInsertRate(rows: plainSaveRows)
        print("objects", Int(objects.rate), "rows/s (saving \(objects.saving) s); records", Int(records.rate),
              "rows/s (saving \(records.saving) s),", records.cpu, "s CPU")
    }
    exit(0)
}
if ProcessInfo.processInfo.environment["BENCH_ONLY_INSERTS"] != nil {   // for profiling the insert path
    for _ in 0..<runs { print(Int(try await objectInsertRate())) }
    exit(0)
}
var rates: [Double] = [], stalls: [Double] = [], fetchStalls: [Double] = [], liveStalls: [Double] = []
var largeFetchStalls: [Double] = [], largeFetchReleases: [Double] = []
var plainRates: [Double] = [], plainGrowth: [Double] = [], plainLast: [Double] = []
var recordRates: [Double] = [], recordCPU: [Double] = [], modelRates: [Double] = []
for _ in 0..<runs {
    #if Macros
    modelRates.append(try await modelInsertRate(rows: plainSaveRows))
    #endif
    rates.append(try await objectInsertRate())
    let plain = try await plainSaveInsertRate(rows: plainSaveRows)
    plainRates.append(plain.rate)
    plainGrowth.append(plain.lastMB - plain.firstMB)
    plainLast.append(plain.lastMB)
    let records = try await recordInsertRate(rows: plainSaveRows)
    recordRates.append(records.rate)
    recordCPU.append(records.cpu)
    let largeFetch = try await largeFetchStall(rows: largeFetchRows)
    largeFetchStalls.append(largeFetch.stall)
    largeFetchReleases.append(largeFetch.release)
    let (stall, fetchStall) = try await mergeStall()
    stalls.append(stall)
    fetchStalls.append(fetchStall)
    liveStalls.append(try await liveResultsStall())
}
var result: [String: Any] = [
    "benchmark": "library", "runs": runs, "insert_rows": insertRows,
    "object_inserts_per_s_median": Int(median(rates)), "object_inserts_target": 500_000,
    "merge_stall_ms_median": (median(stalls) * 10).rounded() / 10, "merge_stall_ms_worst": (stalls.max()! * 10).rounded() / 10,
    "live_results_stall_ms_median": (median(liveStalls) * 10).rounded() / 10,
    "live_results_stall_ms_worst": (liveStalls.max()! * 10).rounded() / 10,
    "async_fetch_stall_ms_median": (median(fetchStalls) * 10).rounded() / 10, "stall_target_ms": 16,
    "large_fetch_rows": largeFetchRows, "large_fetch_stall_ms_median": (median(largeFetchStalls) * 10).rounded() / 10,
    "large_fetch_stall_ms_worst": (largeFetchStalls.max()! * 10).rounded() / 10,
    "large_fetch_release_ms_median": (median(largeFetchReleases) * 10).rounded() / 10,
    "plain_save_rows": plainSaveRows, "plain_save_inserts_per_s_median": Int(median(plainRates)), "plain_save_target": 400_000,
    "plain_save_rss_growth_mb_median": Int(median(plainGrowth)), "plain_save_rss_last_mb_median": Int(median(plainLast)),
    "record_inserts_per_s_median": Int(median(recordRates)), "record_inserts_cpu_s_median": (median(recordCPU) * 100).rounded() / 100,
    "record_inserts_target": 400_000,
]
if !modelRates.isEmpty { result["model_inserts_per_s_median"] = Int(median(modelRates)) }
let data = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
print(String(decoding: data, as: UTF8.self))
