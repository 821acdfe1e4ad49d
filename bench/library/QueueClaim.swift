// Claiming the next item of a queue that holds ITEMS waiting items of mixed priorities and due
// times (issue 33): a folder (LOCATION a path) or PostgreSQL (LOCATION a postgresql:// URL).
//     .build/release/batchrun-bench-library queue-claim LOCATION [ITEMS] [CLAIMS]   (JSON on standard output)
import BatchRunKit
import Foundation

/// The first claim (a folder reads its pending/ once there), then the median and worst of
/// `claims` claims, each of an item among `items` waiting ones, in milliseconds.
func queueClaimBench(location: String, items: Int, claims: Int) throws -> [String: Any] {
    let text = "version: 1\nstore: bench.sqlite\nentities:\n  Tick: { columns: { id: integer primary key } }\njobs:\n  tick:\n    steps:\n      - insert: { entity: Tick, rows: [{ id: 1 }] }\n"
    var generator = SystemRandomNumberGenerator()
    let start = Date()
    let filling = Date()
    // A PostgreSQL queue is filled by bench/queue_features.py (one INSERT from generate_series).
    if !location.hasPrefix("postgresql://") {
        // A tenth due in the next hour, the rest due now; priorities -2 to 2.
        let queue = try QueueFolder(path: location)
        for number in 0..<items {
            let later = number % 10 == 0 ? Double.random(in: 60...3600, using: &generator) : 0
            _ = try queue.submit(text: text, name: "tick.yaml", params: [:], at: start.addingTimeInterval(Double(number) / 1000),
                                 submission: QueueSubmission(priority: Int.random(in: -2...2, using: &generator), delay: later))
        }
    }
    let filled = Date().timeIntervalSince(filling)
    // A fresh queue, as a worker that starts opens it.
    let queue = try openQueue(at: location)
    var times: [Double] = []
    for _ in 0...claims {
        let began = DispatchTime.now()
        guard let item = try queue.claim(worker: "bench@\(ProcessInfo.processInfo.hostName)", lease: 60) else { break }
        times.append(Double(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds) / 1_000_000)
        _ = try queue.finish(item, as: .done, status: 0, retryAt: nil)
    }
    precondition(times.count == claims + 1, "claimed \(times.count) items")
    let first = times.removeFirst()
    let sorted = times.sorted()
    return ["benchmark": "queue-claim", "kind": location.hasPrefix("postgresql://") ? "postgresql" : "folder", "items": items,
            "claims": claims, "fill_s": (filled * 10).rounded() / 10, "first_claim_ms": (first * 100).rounded() / 100,
            "claim_ms_median": (sorted[sorted.count / 2] * 100).rounded() / 100,
            "claim_ms_worst": (sorted.last! * 100).rounded() / 100]
}

func queueClaimMain(_ arguments: [String]) throws {
    let location = arguments[0]
    let items = arguments.count > 1 ? Int(arguments[1])! : 100_000
    let claims = arguments.count > 2 ? Int(arguments[2])! : 200
    let data = try JSONSerialization.data(withJSONObject: try queueClaimBench(location: location, items: items, claims: claims),
                                          options: [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}
