import BatchRunKit
import BatchRunRender
import Foundation

/// `--log-format json` for the worker's own lines (its items' lines go to their logs).
package enum JSONLog {
    /// Writes a worker's line as one JSON object on standard output.
    package static func write(_ line: WorkerLogLine) {
        let text = LogFormat.jsonLine(level: line.level, event: line.event, item: line.item, message: line.message)
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// A line of the command's own, as text (after the time of day, as the worker's) or JSON.
    package static func say(_ message: String, event: String, json: Bool) {
        if json { write(WorkerLogLine(level: "info", event: event, item: nil, message: message)) } else { Worker.printLine(message) }
    }
}
