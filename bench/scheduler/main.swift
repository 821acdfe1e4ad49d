import BatchRunKit
import Dispatch
import Foundation

// Scheduler overhead: 10,000 no-op operations in a layered graph (100 layers of 100, each
// needing two of the layer before), run by batchrun's Scheduler and by Foundation's
// OperationQueue with the same dependencies, in the same process. Prints medians as JSON.
//   .build/release/batchrun-bench-scheduler [OPERATIONS] [RUNS]

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1])! : 10_000
let runs = arguments.count > 2 ? Int(arguments[2])! : 5
let width = 100
let layers = count / width
let cores = ProcessInfo.processInfo.activeProcessorCount

/// Two deterministic needs in the layer before.
func needs(layer: Int, slot: Int) -> [Int] {
    guard layer > 0 else { return [] }
    let base = (layer - 1) * width
    return [base + slot, base + (slot * 7 + 3) % width]
}

func timeScheduler() async -> Double {
    var operations: [BatchOperation<Void>] = []
    operations.reserveCapacity(count)
    for layer in 0..<layers {
        for slot in 0..<width {
            operations.append(BatchOperation(name: "op\(layer * width + slot)",
                                             needs: needs(layer: layer, slot: slot).map { "op\($0)" }) { _ in })
        }
    }
    let scheduler = Scheduler(operations: operations, maxConcurrent: cores)
    let start = DispatchTime.now()
    let outcomes = await scheduler.run()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    precondition(outcomes.allSatisfy { $0.status == .ok })
    return seconds
}

func timeOperationQueue() -> Double {
    var operations: [BlockOperation] = []
    operations.reserveCapacity(count)
    for layer in 0..<layers {
        for slot in 0..<width {
            let operation = BlockOperation {}
            for need in needs(layer: layer, slot: slot) { operation.addDependency(operations[need]) }
            operations.append(operation)
        }
    }
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = cores
    let start = DispatchTime.now()
    queue.addOperations(operations, waitUntilFinished: true)
    return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

var ours: [Double] = [], foundation: [Double] = []
_ = await timeScheduler()          // warm-up
_ = timeOperationQueue()
for _ in 0..<runs {
    ours.append(await timeScheduler())
    foundation.append(timeOperationQueue())
}
let result: [String: Any] = [
    "benchmark": "scheduler-overhead", "operations": count, "layers": layers, "concurrency": cores, "runs": runs,
    "scheduler_median_s": (median(ours) * 1000).rounded() / 1000,
    "operation_queue_median_s": (median(foundation) * 1000).rounded() / 1000,
    "ratio": (median(ours) / median(foundation) * 100).rounded() / 100,
]
let data = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
print(String(decoding: data, as: UTF8.self))
