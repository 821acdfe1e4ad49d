import BatchRunStore
import Foundation

/// Pruning a queue folder (`batchrun prune`, `worker --keep`, JOBFILE.md 18): a finished item
/// ended when its report was written (else when the item was last written), as the live
/// page's index says; it goes with its `.log`, `.json` and `.failures`. A batch's items stay
/// until the batch is finished; then its record goes with its last item.
extension QueueFolder {
    package func prune(states: Set<QueueItemState>, endedBefore before: Date) throws -> Int {
        var pruned = 0, finishedBatches: [Int64: Bool] = [:], emptied: Set<Int64> = []
        for state in QueueItemState.allCases where states.contains(state) && [.done, .failed, .cancelled].contains(state) {
            for name in items(in: state) {
                let path = itemPath(name, in: state)
                guard Self.ended(path) < before else { continue }
                if let batch = Self.batch(ofName: name), batchRecord(batch) != nil {
                    let finished = finishedBatches[batch] ?? ((try? batches(only: batch))?.first?.isFinished ?? false)
                    finishedBatches[batch] = finished
                    guard finished else { continue }
                    if !emptied.contains(batch) { try markFinished(batch) }
                    emptied.insert(batch)
                }
                // The item first: once it is gone, nothing lists it; its sidecars follow.
                guard unlink(path) == 0 else { continue }
                for suffix in [".log", ".json", ".failures"] { unlink(path + suffix) }
                pruned += 1
            }
        }
        for batch in emptied {
            guard let record = batchRecord(batch) else { continue }
            let names = [record.needs, record.completion].compactMap { $0 } + record.parts
            let left = names.contains { name in QueueItemState.allCases.contains { FileManager.default.fileExists(atPath: itemPath(name, in: $0)) } }
            if !left { try? FileManager.default.removeItem(atPath: batchFolder(batch)) }
        }
        return pruned
    }

    /// When a finished item ended: its report's modification time, else the item's.
    static func ended(_ path: String) -> Date {
        var info = stat()
        if stat(path + ".json", &info) == 0 || stat(path, &info) == 0 {
            return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        }
        return .distantFuture
    }

    /// The batch an item's name says it is of (`...-batchID-part0001.yaml`, as `submitBatch`
    /// names them); nil for any other name.
    static func batch(ofName name: String) -> Int64? {
        guard let range = name.range(of: "-batch", options: .backwards) else { return nil }
        let rest = name[range.upperBound...]
        let digits = rest.prefix { $0.isNumber }
        guard !digits.isEmpty, rest.dropFirst(digits.count).hasPrefix("-") else { return nil }
        return Int64(digits)
    }
}
