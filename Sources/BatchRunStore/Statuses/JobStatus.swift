/// How a job ended.
public enum JobStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case ok, failed
    case timedOut = "timed_out"
    case cancelled, skipped

    /// A job that needs this one may start only after `ok`.
    package var letsDependentsRun: Bool { self == .ok }
}
