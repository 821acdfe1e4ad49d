import BatchRunStore

/// What fences a run's writes: given the run's store, the condition each of its write
/// transactions checks as it commits, or nil when that store cannot be fenced (it is not the
/// database that holds the claim). A queue item's claim is one (`QueueFence`, in BatchRunQueue).
///
/// ```swift
/// let opened = try RunOpening.open(file, resume: true, fence: item.fence)
/// ```
package protocol RunFence: Sendable {
    func writeFence(for store: StoreSpec) -> WriteFence?
    /// How long a fenced store's transaction may stay idle before the server ends it
    /// (`StoreSpec.idleTimeout`): a paused run's locks go, for whoever takes its work over.
    var idleTimeout: Double { get }
}
