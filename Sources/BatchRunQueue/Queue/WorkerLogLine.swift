/// One line of a worker's log with what a structured log (`--log-format json`) needs: its level
/// (info, warning, error), its event (`item_started`, `item_done`, ...), the item it is about.
///
/// ```swift
/// worker.logLine = { line in print(line.event, line.item ?? "-", line.message) }
/// ```
package struct WorkerLogLine: Sendable {
    package var level: String
    package var event: String
    package var item: String?
    package var message: String

    package init(level: String, event: String, item: String?, message: String) {
        self.level = level
        self.event = event
        self.item = item
        self.message = message
    }
}
