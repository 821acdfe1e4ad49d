/// Why a command stopped, and its exit status: thrown by a command, printed by
/// `BatchRunCommand.report`, the one place a command's error reaches standard error.
///
/// ```swift
/// throw CommandFailure("no item 12 in \(queue.location)", status: ExitStatus.invalid)   // error: no item 12 in ...
/// ```
struct CommandFailure: Error {
    /// What is printed on standard error, whole: `error: MESSAGE` lines, or a job file's
    /// located diagnostics as they are.
    var output: String
    var status: Int32

    /// `error: MESSAGE`, then each of `then` on its own line (`nothing was run`).
    init(_ message: String, then: String? = nil, status: Int32) {
        output = "error: \(message)\n" + (then.map { $0 + "\n" } ?? "")
        self.status = status
    }

    /// Diagnostics that say where they are, printed as they are.
    init(located text: String, status: Int32) {
        output = text.hasSuffix("\n") ? text : text + "\n"
        self.status = status
    }
}
