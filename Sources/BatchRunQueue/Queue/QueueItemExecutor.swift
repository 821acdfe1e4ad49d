/// What runs a worker's items: the `Worker` claims an item, hands it to its executor, and is
/// told when its run ended. `JobFileExecutor` runs items in this process with the library's run;
/// the `batchrun worker` command runs each in a child process (`batchrun run ITEM --resume`),
/// so an item that crashes takes nothing else with it.
///
/// The worker calls its executor from one thread (the one in `Worker.run()`) and identifies a
/// run by the number `start` returned. An executor that learns of an ended run on another thread
/// calls `wake` (given to `start`), and the worker collects it with `ended()`.
///
/// ```swift
/// final class Executor: QueueItemExecutor {
///     func start(_ item: QueueItem, wake: @escaping @Sendable () -> Void) -> Int? { ... }
///     func ended() -> [(run: Int, status: Int32)] { ... }
///     ...
/// }
/// ```
package protocol QueueItemExecutor: AnyObject {
    /// Starts running `item` (as `batchrun run ITEM --resume --relative-to BASE` would, its
    /// report to `item.reportPath`, its output to `item.logPath`); the run's number, or nil when
    /// it could not start (the item fails).
    func start(_ item: QueueItem, wake: @escaping @Sendable () -> Void) -> Int?

    /// The runs that ended since the last call, with their exit statuses (`ExitStatus`: ok,
    /// failed, invalid; `interrupted` when stopped before its end, and the item goes back to
    /// pending).
    func ended() -> [(run: Int, status: Int32)]

    /// Asks a run to stop after its current batch (as a Ctrl-C does): the worker stops, or the
    /// item's lease was lost.
    func stop(_ run: Int)

    /// Ends a run that did not stop within `Worker.stopGrace` of being asked to.
    func kill(_ run: Int)

    /// Descriptors the worker should wait on besides its own (readable when a run may have
    /// ended); empty when the executor calls `wake` instead.
    var descriptors: [Int32] { get }

    /// The worker takes no more items (it is stopping): what waits idle for items may go.
    func stopTaking()

    /// The worker ends: nothing runs any more; waits for what the executor started.
    func shutDown()
}

extension QueueItemExecutor {
    package var descriptors: [Int32] { [] }
    package func stopTaking() {}
    package func shutDown() {}
}
