/// Where a job is in its life; the last five are final.
public enum JobStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, running, ok, failed
    case timedOut = "timed_out"
    case cancelled, skipped

    public var isFinal: Bool { self != .pending && self != .running }

    /// A job that needs this one may start only after `ok`.
    public var letsDependentsRun: Bool { self == .ok }
}
