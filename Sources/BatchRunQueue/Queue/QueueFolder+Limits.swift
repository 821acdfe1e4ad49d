import BatchRunStore
import Foundation

/// Group limits in a queue folder (`batchrun limit`, JOBFILE.md 17): `limits/GROUP.json` holds a
/// group's limits, `limits/GROUP.starts` the times its items started within its rate's period.
/// A claim of a group's item holds `limits/GROUP.lock` (`flock`) while it counts the group's
/// items in `running/` and its starts and, when under the limits, moves the item into
/// `running/` and adds its start: claims for one group on every worker of the folder's machines
/// count one after the other.
extension QueueFolder {
    /// The line of an item that names its group (`# batchrun-group: warehouse`).
    static let groupPrefix = "# batchrun-group: "

    var limitsFolder: String { path + "/limits" }

    /// The group an item is in, from its first lines; nil for none, and for a line that names
    /// no group `submit` takes (an item dropped by hand is anyone's text: its group names files
    /// under `limits/`, so `../` must never reach them).
    package static func group(ofItemAt path: String) -> String? {
        headerLines(ofItemAt: path).first { $0.hasPrefix(groupPrefix) }.map { String($0.dropFirst(groupPrefix.count)) }
            .flatMap { QueueSubmission.isGroupName($0) ? $0 : nil }
    }

    package func setLimit(_ limit: QueueGroupLimit) throws {
        let file = limitsFolder + "/\(limit.group).json"
        if limit.isEmpty {
            unlink(file)
            return
        }
        try FileManager.default.createDirectory(atPath: limitsFolder, withIntermediateDirectories: true)
        let temporary = limitsFolder + "/.write-\(UUID().uuidString)"
        try JSONEncoder.sorted.encode(limit).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, file) == 0 else {
            let error = FileAccessError(.move, path: temporary, errno: errno)
            unlink(temporary)
            throw error
        }
    }

    package func limits() throws -> [QueueGroupLimit] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: limitsFolder)) ?? []).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: limitsFolder + "/" + name).flatMap { try? JSONDecoder().decode(QueueGroupLimit.self, from: $0) }
        }
    }

    /// The group's claim lock, held, when an item of it may start now (its start not yet
    /// counted: `recordStart` does, once the item is claimed); nil when the group is at a limit,
    /// or another worker is deciding for it at this moment (never waited for: a worker stopped
    /// while holding it would hold up every claim).
    func admission(for limit: QueueGroupLimit, now: Date) -> Int32? {
        let lock = open(limitsFolder + "/\(limit.group).lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lock >= 0 else { return nil }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            close(lock)
            return nil
        }
        if let running = limit.running {
            let count = items(in: .running).filter { Self.group(ofItemAt: itemPath($0, in: .running)) == limit.group }.count
            if count >= running {
                close(lock)
                return nil
            }
        }
        if let rate = limit.rate, recentStarts(of: limit.group, within: rate.period, now: now).count >= rate.count {
            close(lock)
            return nil
        }
        return lock
    }

    /// Counts a start of the group whose claim lock `lock` is held (its rate's log keeps only
    /// the starts within the period), and releases the lock.
    func recordStart(for limit: QueueGroupLimit, lock: Int32, now: Date = QueueClock.now()) {
        defer { close(lock) }
        guard let rate = limit.rate else { return }
        let kept = recentStarts(of: limit.group, within: rate.period, now: now) + [now.timeIntervalSince1970]
        let file = limitsFolder + "/\(limit.group).starts"
        let temporary = file + ".\(getpid()).partial"
        if (try? Data(kept.map { String($0) + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: temporary))) != nil {
            _ = rename(temporary, file)
        }
    }

    /// The group's starts within `period` seconds before `now`.
    private func recentStarts(of group: String, within period: Double, now: Date) -> [Double] {
        let text = (try? String(contentsOfFile: limitsFolder + "/\(group).starts", encoding: .utf8)) ?? ""
        let since = now.timeIntervalSince1970 - period
        return text.split(separator: "\n").compactMap { Double($0) }.filter { $0 > since }
    }
}
