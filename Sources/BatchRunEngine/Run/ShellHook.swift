import Foundation

/// Runs a job file's `on_success` / `on_failure` / `on_complete` command with `/bin/sh -c`,
/// bounded in time. Its output goes to batchrun's own standard output and error.
///
/// ```swift
/// let result = ShellHook.run("echo $BATCHRUN_STATUS", environment: ["BATCHRUN_STATUS": "ok"])
/// ```
package enum ShellHook {
    package enum Result: Sendable, Equatable {
        case succeeded
        case failed(String)
    }

    /// How long a hook may run before it is stopped.
    package static let defaultTimeout: Double = 60

    /// `base`: the environment `extra` is added to (nil: the process's).
    package static func run(_ command: String, environment extra: [String: String], base: [String: String]? = nil,
                           timeout: Double = defaultTimeout) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = (base ?? ProcessInfo.processInfo.environment).merging(extra) { $1 }
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        do {
            try process.run()
        } catch {
            return .failed("could not start /bin/sh: \(error.localizedDescription)")
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            _ = done.wait(timeout: .now() + 2)
            return .failed("did not finish within \(Int(timeout))s and was stopped")
        }
        if process.terminationReason == .uncaughtSignal {
            return .failed("ended by signal \(process.terminationStatus)")
        }
        return process.terminationStatus == 0 ? .succeeded : .failed("exited with status \(process.terminationStatus)")
    }
}
