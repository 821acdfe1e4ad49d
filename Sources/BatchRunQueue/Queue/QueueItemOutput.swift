/// What an item's runs left: its log (every attempt's output, in order) and its run's JSON
/// report once it ended (`batchrun queue QUEUE --log ID`, `--report ID`).
///
/// ```swift
/// if let output = try queue.output(of: "12") { print(output.log) }
/// ```
package struct QueueItemOutput: Sendable, Equatable {
    /// The item's state now: a live page shows the output of finished items only.
    package var state: QueueItemState
    package var log: String
    /// The run report (`RunReport` JSON); nil until a run of the item ended.
    package var report: String?

    package init(state: QueueItemState, log: String, report: String?) {
        self.state = state
        self.log = log
        self.report = report
    }
}
