import ArgumentParser
import BatchRunKit
import Foundation

/// What Tab offers beyond file names, where it is cheap to find: the jobs of the job files
/// already on the command line, and the items of a queue folder that have not ended. A
/// PostgreSQL queue's items are not offered: completing would connect to the database.
///
/// ```
/// $ batchrun run jobs/nightly.yaml --select im<Tab>     # import_airports import_flights ...
/// $ batchrun cancel var/queue <Tab>                     # 0001-import.yaml 0002-stats.yaml
/// ```
enum ShellCompletion {
    /// The job names of every `.yaml` or `.yml` word on the line, in the forms `--select`
    /// takes (`NAME`, `+NAME` when the word begins with `+`).
    static let jobNames = CompletionKind.custom { words, _, prefix in
        var loader = JobFileLoader()
        loader.checksExpressionsOnServer = false
        let names = words.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .flatMap { path in (try? loader.load(path: path))?.jobs.map(\.name) ?? [] }
        let plus = prefix.hasPrefix("+") ? "+" : ""
        return names.map { plus + $0 }.filter { $0.hasPrefix(prefix) }
    }

    /// The items of the queue folder named by the word after `cancel` that are waiting or
    /// running: the names in its `pending/`, `scheduled/`, `retryable/` and `running/` folders.
    /// Read directly, so Tab neither makes a queue's folders in a folder that is not one nor
    /// reads the finished items.
    static let queueItems = CompletionKind.custom { words, index, prefix in
        guard let command = words.firstIndex(where: { $0 == "cancel" }), command + 1 < index else { return [] }
        let queue = words[command + 1]
        let states: [QueueItemState] = [.pending, .scheduled, .retryable, .running]
        return states.flatMap { state in
            ((try? FileManager.default.contentsOfDirectory(atPath: queue + "/" + state.rawValue)) ?? [])
                .filter { $0.hasSuffix(".yaml") && $0.hasPrefix(prefix) }
        }.sorted()
    }
}
