@_spi(BatchRunPackage) import BatchRunStore
import BatchRunContext
import Foundation
import Synchronization

/// Hands row batches from the thread that reads and converts a feed to the thread that writes
/// them, holding at most `capacity` batches, so reading runs ahead on the second core while
/// memory stays bounded.
final class BatchPipe: Sendable {
    package enum Item: Sendable {
        /// `rejected`: rows skipped so far; `position`: where the feed goes on after the batch
        /// (for its checkpoint, when the step saves them); `prefetched`: its stored rows, read ahead;
        /// `part`: the part of a feed in parts its rows come from (nil: the step's one feed), and
        /// then `rejected` counts the rows the batch's part skipped since its batch before, and
        /// `position` is where the part goes on.
        case batch(RowBatch, layouts: [FeedBatcher.Layout], rejected: Int, position: StepPosition?, prefetched: PrefetchedRows?,
                   part: PartMark? = nil)
        /// A part of a feed in parts was read to its end, after its last batch; `rejected` rows
        /// it skipped after that batch.
        case partEnd(index: Int, rejected: Int)
        /// The feed is done; `rejected` rows were skipped in all.
        case end(rejected: Int)
        /// The feed stopped at a bad row or a malformed line.
        case failure(String, rejected: Int)
    }

    /// Which part of a feed in parts a batch is from: its place in the run's list, and its name for messages.
    package struct PartMark: Sendable {
        package var index: Int
        package var name: String
    }

    private let items = Mutex<(queue: [Item], closed: Bool)>(([], false))
    private let filled: DispatchSemaphore
    private let free: DispatchSemaphore

    package init(capacity: Int = 2) {
        filled = DispatchSemaphore(value: 0)
        // Start at zero and signal up: Dispatch traps when a semaphore is freed with a value
        // below the one it was created with, which a pipe left with batches in it would be.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<capacity { free.signal() }
    }

    /// Waits for room; false once the writer has closed the pipe (the reader should stop).
    package func put(_ item: Item) -> Bool {
        free.wait()
        let open = items.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.queue.append(item)
            return true
        }
        if open { filled.signal() } else { free.signal() }
        return open
    }

    package func take() -> Item {
        filled.wait()
        let item = items.withLock { $0.queue.removeFirst() }
        free.signal()
        return item
    }

    /// The rows of the batch the writer takes next, when the reader has put it already.
    func rowsWaiting() -> Int? {
        items.withLock { state in
            guard case .batch(let batch, _, _, _, _, _)? = state.queue.first else { return nil }
            return batch.count
        }
    }

    /// True once the writer closed the pipe: a reader should begin nothing more.
    var isClosed: Bool {
        items.withLock { $0.closed }
    }

    /// The writer stops taking: a reader waiting for room is let go.
    package func close() {
        items.withLock { $0.closed = true }
        free.signal()
    }
}
