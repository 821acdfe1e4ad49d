import Foundation
import Synchronization
import Testing
@testable import BatchRunKit

@Suite("Scheduler")
struct SchedulerTests {
    /// Records the order operations ran in.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test("operations run after what they need; failures skip dependents, with the reason")
    func dependencies() async {
        let log = Log()
        func operation(_ name: String, needs: [String] = [], failure: String? = nil) -> BatchOperation<Void> {
            BatchOperation(name: name, needs: needs) { _ in
                log.append(name)
                if let failure { throw TestFailure(message: failure) }
            }
        }
        let completed = Log()
        let operations = [operation("c", needs: ["b"]), operation("a"), operation("b", needs: ["a"]),
                          operation("bad", needs: ["a"], failure: "boom"), operation("after_bad", needs: ["bad"]),
                          operation("after_after", needs: ["after_bad", "c"])]
        for operation in operations {
            operation.completionBlock = { outcome in completed.append("\(outcome.name):\(outcome.status.rawValue)") }
        }
        let outcomes = await Scheduler(operations: operations, maxConcurrent: 1).run()
        let byName = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.name, $0) })
        #expect(log.all.firstIndex(of: "a")! < log.all.firstIndex(of: "b")!)
        #expect(log.all.firstIndex(of: "b")! < log.all.firstIndex(of: "c")!)
        #expect(!log.all.contains("after_bad") && !log.all.contains("after_after"))
        #expect(byName["bad"]?.status == .failed && byName["bad"]?.error == "boom")
        #expect(byName["after_bad"]?.status == .skipped && byName["after_bad"]?.skippedBecause == "bad failed")
        #expect(byName["after_after"]?.skippedBecause == "after_bad skipped")
        #expect(byName["c"]?.status == .ok)
        #expect(outcomes.map(\.name) == operations.map(\.name))
        #expect(Set(completed.all) == Set(outcomes.map { "\($0.name):\($0.status.rawValue)" }))
    }

    @Test("fail-fast cancels what has not started")
    func failFast() async {
        let operations = [BatchOperation<Void>(name: "bad") { _ in throw TestFailure(message: "x") },
                          BatchOperation<Void>(name: "later") { _ in }]
        let outcomes = await Scheduler(operations: operations, maxConcurrent: 1, failFast: true).run()
        #expect(outcomes.map(\.status) == [.failed, .cancelled])
    }
}

/// An error whose description is its message.
struct TestFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
