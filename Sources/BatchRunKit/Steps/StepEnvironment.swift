import Foundation

/// What a step needs to run: its entity, resolved params, batch size, merge policy, and how to
/// learn that the job was cancelled.
public struct StepEnvironment: Sendable {
    public var job: String
    public var entity: Entity
    /// Every placeholder's value, the step's params merged over the file's.
    public var params: [String: ParamValue]
    public var batchSize: Int
    public var mergePolicy: MergePolicy
    /// True once the job is cancelled; steps check it at every batch boundary.
    public var isCancelled: @Sendable () -> Bool
    /// Called after each committed batch with the step's running totals.
    public var progress: @Sendable (RowCounts) -> Void

    public init(job: String, entity: Entity, params: [String: ParamValue], batchSize: Int, mergePolicy: MergePolicy,
                isCancelled: @escaping @Sendable () -> Bool = { false },
                progress: @escaping @Sendable (RowCounts) -> Void = { _ in }) {
        self.job = job
        self.entity = entity
        self.params = params
        self.batchSize = batchSize
        self.mergePolicy = mergePolicy
        self.isCancelled = isCancelled
        self.progress = progress
    }
}

/// A step stopped; what it had committed before stays committed and is in `report`.
public struct StepError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var report: StepReport
    public var cancelled: Bool

    public init(_ message: String, report: StepReport, cancelled: Bool = false) {
        self.message = message
        self.report = report
        self.cancelled = cancelled
    }

    public var description: String { message }
}

/// A path as users want to read it: relative to the current folder when it is inside it.
public func displayPath(_ path: String) -> String {
    let current = FileManager.default.currentDirectoryPath
    let prefix = current.hasSuffix("/") ? current : current + "/"
    return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
}
