import Foundation
import Synchronization

/// A fixed set of threads that run operation bodies, one body per thread at a time.
///
/// Bodies block on SQLite, so they stay off Swift's cooperative threads; and on Linux, Dispatch's
/// global pool grows only slowly when its threads block, which delayed bodies by seconds on a
/// busy machine. A scheduler never runs more bodies at once than it has threads.
final class WorkerThreads: Sendable {
    private let pending = Mutex<[(@Sendable () -> Void)?]>([])
    private let available = DispatchSemaphore(value: 0)
    private let count: Int

    init(count: Int, name: String = "batchrun.worker") {
        self.count = max(1, count)
        for index in 0..<self.count {
            let thread = Thread { [self] in self.work() }
            thread.name = "\(name).\(index)"
            thread.start()
        }
    }

    /// Runs `body` on a free worker thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    /// Lets every thread finish its current body and end.
    func shutDown() {
        for _ in 0..<count { submit(nil) }
    }

    private func submit(_ item: (@Sendable () -> Void)?) {
        pending.withLock { $0.append(item) }
        available.signal()
    }

    private func work() {
        while true {
            available.wait()
            guard let item = pending.withLock({ $0.removeFirst() }) else { return }
            item()
        }
    }
}
