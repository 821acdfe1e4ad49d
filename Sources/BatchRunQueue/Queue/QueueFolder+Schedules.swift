import Foundation

/// A queue folder's schedules: `schedules/NAME.yaml`, the job file with its cron line, time
/// zone, creation time and params on its first lines. A worker queues a due time by creating
/// `schedules/.queued/NAME@DUE` (create-or-fail: exactly one worker, on any machine sharing the
/// folder, succeeds), then the item `DUE-0000-NAME.yaml` in `pending/`.
extension QueueFolder {
    var schedulesFolder: String { path + "/schedules" }

    /// The line of a schedule file with its cron line, zone and creation time.
    static let schedulePrefix = "# batchrun-schedule: "
    /// The line of an item a schedule queued, naming it.
    static let fromSchedulePrefix = "# batchrun-from-schedule: "

    private struct ScheduleHeader: Codable {
        var cron: String
        var tz: String
        var created: Double
    }

    /// Adds a schedule, or replaces the one of that name.
    package func addSchedule(_ entry: QueueScheduleEntry) throws {
        try FileManager.default.createDirectory(atPath: schedulesFolder + "/.queued", withIntermediateDirectories: true)
        let header = ScheduleHeader(cron: entry.cron.line, tz: entry.cron.timeZone.identifier, created: entry.created.timeIntervalSince1970)
        let line = Self.schedulePrefix + String(decoding: try JSONEncoder.sorted.encode(header), as: UTF8.self) + "\n"
        let content = line + (try Self.content(text: entry.text, params: entry.params, submission: QueueSubmission()))
        try Data(content.utf8).write(to: URL(fileURLWithPath: schedulesFolder + "/" + entry.name + ".yaml"), options: .atomic)
    }

    /// Every schedule, by name.
    package func schedules() throws -> [QueueScheduleEntry] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: schedulesFolder)) ?? []).filter(Self.isItem).sorted()
        return names.compactMap { file in
            let path = schedulesFolder + "/" + file
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                  let first = text.split(separator: "\n", maxSplits: 1).first, first.hasPrefix(Self.schedulePrefix),
                  let header = try? JSONDecoder().decode(ScheduleHeader.self, from: Data(first.dropFirst(Self.schedulePrefix.count).utf8)) else { return nil }
            var body = Substring(text)
            while body.hasPrefix("# batchrun-"), let end = body.firstIndex(of: "\n") { body = body[body.index(after: end)...] }
            return try? QueueScheduleEntry(name: String(file.dropLast(".yaml".count)), cron: header.cron, timeZone: header.tz, text: String(body),
                                           params: Self.params(ofItemAt: path), directory: self.path,
                                           created: Date(timeIntervalSince1970: header.created))
        }
    }

    /// Removes a schedule; false when there is none of that name.
    package func removeSchedule(named name: String) throws -> Bool {
        unlink(schedulesFolder + "/" + name + ".yaml") == 0
    }

    package func runScheduleNow(named name: String) throws -> String? {
        guard let entry = try schedules().first(where: { $0.name == name }) else { return nil }
        // Named as its schedule's items are, so `queue` shows where it came from.
        let content = Self.fromSchedulePrefix + entry.name + "\n" + (try Self.content(text: entry.text, params: entry.params, submission: QueueSubmission()))
        return try write(content, name: { QueueFolderName(priority: 0, due: QueueClock.now(), number: $0, base: entry.name).text }, into: .pending, from: 1)
    }

    /// Queues the due time of each schedule that is due and not yet queued; the items queued.
    package func queueDueSchedules(at now: Date) throws -> [String] {
        var queued: [String] = []
        for entry in try schedules() {
            guard let due = entry.dueNow(now) else { continue }
            let stamp = QueueFolderName.stamp(due)
            let marker = schedulesFolder + "/.queued/" + entry.name + "@" + stamp
            try FileManager.default.createDirectory(atPath: schedulesFolder + "/.queued", withIntermediateDirectories: true)
            let descriptor = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { continue }   // queued already, by this worker or another
            close(descriptor)
            let content = Self.fromSchedulePrefix + entry.name + "\n" + (try Self.content(text: entry.text, params: entry.params, submission: QueueSubmission()))
            let item = try write(content, name: { QueueFolderName(priority: 0, due: due, number: $0, base: entry.name).text }, into: .pending, from: 0)
            queued.append(item)
            // Earlier due times of the schedule are never queued again (only the latest is).
            for old in (try? FileManager.default.contentsOfDirectory(atPath: schedulesFolder + "/.queued")) ?? []
            where old.hasPrefix(entry.name + "@") && old < entry.name + "@" + stamp {
                unlink(schedulesFolder + "/.queued/" + old)
            }
        }
        return queued
    }

    /// The schedule that queued an item, from its first lines.
    package static func schedule(ofItemAt path: String) -> String? {
        headerLines(ofItemAt: path).first { $0.hasPrefix(fromSchedulePrefix) }.map { String($0.dropFirst(fromSchedulePrefix.count)) }
    }
}
