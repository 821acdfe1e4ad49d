// What checkpoints cost (issue 9): a job file run through the library with its run state
// recorded (a checkpoint in every batch's transaction) and without, alternately, each run on a
// fresh store: a copy of SEED (or no file at all). Prints a JSON object with both medians.
//     .build/release/batchrun-bench-checkpoints JOB.yaml RUNS [SEED.sqlite]
import BatchRunKit
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3, let runs = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: batchrun-bench-checkpoints JOB.yaml RUNS [SEED.sqlite]\n".utf8))
    exit(2)
}
let seed = arguments.count > 3 ? arguments[3] : nil
let file = try JobFileLoader().load(path: arguments[1])

/// The store made afresh: SEED copied over it, or removed.
func freshStore() throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.store.path + suffix) }
    if let seed { try FileManager.default.copyItem(atPath: seed, toPath: file.store.path) }
}

/// Seconds of one run, from opening the store to its report.
func timedRun(recordsRun: Bool) async throws -> Double {
    try freshStore()
    let started = Date()
    let store = try Store(file.store, model: file.model)
    let report = await JobFileRun(file: file, store: store, continuing: nil, recordsRun: recordsRun).run()
    guard report.status == .ok else { throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "run ended \(report.status)"]) }
    return Date().timeIntervalSince(started)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

var with: [Double] = [], without: [Double] = []
_ = try await timedRun(recordsRun: true)   // warm-up: the feed and the store's folder in the page cache
for _ in 0..<runs {
    without.append(try await timedRun(recordsRun: false))
    with.append(try await timedRun(recordsRun: true))
}
try freshStore()
let summary: [String: Any] = [
    "job_file": arguments[1], "runs": runs,
    "with_checkpoints_s": (median(with) * 1000).rounded() / 1000,
    "without_checkpoints_s": (median(without) * 1000).rounded() / 1000,
    "cost_percent": ((median(with) / median(without) - 1) * 1000).rounded() / 10,
]
let data = try JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys])
print(String(decoding: data, as: UTF8.self))
