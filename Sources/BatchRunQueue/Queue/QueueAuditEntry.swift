import Foundation

/// A line of a queue's audit log (JOBFILE.md 18): who did what to which item, when. The live
/// page's actions write them (`serve --actions`); `queue --format json` lists them as
/// `"audit": [{"at", "who", "action", "item"}]`, newest last.
///
/// ```swift
/// try queue.appendAudit(QueueAuditEntry(who: "alice", action: "retry", item: "12"))
/// ```
package struct QueueAuditEntry: Sendable, Hashable, Codable {
    /// When (ISO 8601, UTC, milliseconds).
    package var at: String
    /// The name of the token that signed in (`--token-file`).
    package var who: String
    /// `cancel`, `retry`, `pause`, `resume`, `run-schedule`, `sign-in`, `sign-out`.
    package var action: String
    /// The item, group or schedule acted on; nil for the whole queue.
    package var item: String?

    package init(at date: Date = Date(), who: String, action: String, item: String?) {
        at = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        self.who = who
        self.action = action
        self.item = item
    }

    /// How many lines a listing shows at most: the newest.
    package static let listed = 1_000
}
