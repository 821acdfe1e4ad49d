import BatchRunKit
import Foundation
import Testing
import TestSupport

/// A queue's audit log (JOBFILE.md 18) on a folder and on a real PostgreSQL: lines appended by
/// several writers at once are each kept whole, and `queue --format json` lists the newest
/// 1,000 as `"audit": [{"at", "who", "action", "item"}]`, oldest first.
@Suite("the audit log", .serialized)
struct QueueAuditTests {
    @Test("1,200 lines from 4 writers at once: each whole, the newest 1,000 listed in order per writer", arguments: QueueFeatureTests.kinds)
    func audit(kind: String) async throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        let location = queue.isFolder ? queue.folder.path("q") : queue.location
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let opened = try openQueue(at: location)
                    for number in 0..<300 {
                        try opened.appendAudit(QueueAuditEntry(who: "writer\(writer)", action: "retry", item: "\(number)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let listed = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
        let audit = listing["audit"] as? [[String: Any]] ?? []
        #expect(audit.count == 1_000, "\(audit.count) lines listed")
        for writer in 0..<4 {
            let items = audit.filter { $0["who"] as? String == "writer\(writer)" }.compactMap { ($0["item"] as? String).flatMap(Int.init) }
            #expect(items == items.sorted(), "writer\(writer)'s lines out of order")
            #expect(items.last == 299, "writer\(writer)'s newest line is listed")
        }
        #expect(audit.allSatisfy { ($0["at"] as? String)?.hasSuffix("Z") == true && $0["action"] as? String == "retry" })
    }
}
