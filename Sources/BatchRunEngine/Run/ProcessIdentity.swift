import Foundation

/// Tells one process from another across time: the host, and a process's start (the boot it
/// started in and its start time since that boot), so a process id the kernel reused for
/// another program is not mistaken for the run that had it.
enum ProcessIdentity {
    package static let host = ProcessInfo.processInfo.hostName

    /// `BOOT_ID:START_TICKS` of the process `pid`, or nil when no such process is alive.
    package static func start(of pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces): state is the 3rd field, start time the 22nd.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return nil }
        return "\(bootID):\(fields[19])"
    }

    private static let bootID = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
}
