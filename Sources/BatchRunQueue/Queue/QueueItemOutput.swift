/// What an item's runs left: its log (every attempt's output, in order) and its run's JSON
/// report once it ended (`batchrun queue QUEUE --log ID`, `--report ID`).
///
/// ```swift
/// if let output = try queue.output(of: "12") { print(output.log) }
/// ```
package struct QueueItemOutput: Sendable, Equatable {
    package var log: String
    /// The run report (`RunReport` JSON); nil until a run of the item ended.
    package var report: String?

    package init(log: String, report: String?) {
        self.log = log
        self.report = report
    }
}
