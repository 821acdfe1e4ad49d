import BatchRunFeeds
import BatchRunStore

/// What one item of a fan-out batch runs of its job file (JOBFILE.md 17): the jobs the fanned-out
/// job needs, that job alone on one part of its feed, or the jobs that remain.
///
/// ```swift
/// let role = FanOutRole.part(job: "load", part: FeedPart(name: "/srv/data/part-007.csv.gz", size: 1_048_576))
/// let file = try role.apply(to: loaded)   // the job `load` alone, reading that part only
/// ```
package enum FanOutRole: Codable, Sendable, Hashable {
    /// The jobs `job` needs, directly or through others (not `job`).
    case needs(job: String)
    /// `job` alone, its feed in parts reading `part` only.
    case part(job: String, part: FeedPart)
    /// Every job but `job` and what it needs: the batch's completion.
    case completion(job: String)

    /// The fanned-out job.
    package var job: String {
        switch self {
        case .needs(let job), .part(let job, _), .completion(let job): job
        }
    }

    /// The part the item reads; nil for the other roles.
    package var part: FeedPart? {
        if case .part(_, let part) = self { return part }
        return nil
    }

    /// The file with only what this item runs. A part must be one the job's glob lists (an item
    /// cannot name another file) and lie within the worker's roots, and the job must still have
    /// its glob feed.
    package func apply(to file: JobFile) throws(JobFileError) -> JobFile {
        switch self {
        case .needs(let job):
            return try JobSelection(select: ["+" + job], exclude: [job]).apply(to: file)
        case .completion(let job):
            return try JobSelection(exclude: ["+" + job]).apply(to: file)
        case .part(let job, let part):
            var selected = try JobSelection(select: [job]).apply(to: file)
            guard let jobIndex = selected.jobs.firstIndex(where: { $0.name == job }),
                  let (stepIndex, step) = FanOut.globStep(of: selected.jobs[jobIndex]),
                  case .parts(let pattern, _, _) = step.source else {
                throw JobFileError(diagnostics: [Diagnostic(at: nil, "fan-out part of job \(job): \(file.path) has no such job with a feed in parts")],
                                   sources: [file.path: file.source])
            }
            guard FanOut.pattern(pattern, matches: part.name) else {
                throw JobFileError(diagnostics: [Diagnostic(at: nil, "fan-out part \(part.name) is not one \(pattern) lists")],
                                   sources: [file.path: file.source])
            }
            // The item's file does not list the glob (`JobFileLoader.listsFeedParts`), so its
            // part is held to the worker's roots here, as the listing held each part.
            if let violation = step.confinement?.violation(of: part.name) {
                throw JobFileError(diagnostics: [Diagnostic(at: nil, "feed part \(violation); a queue worker started with --root "
                                                               + "lets an item touch only files in those folders")],
                                   sources: [file.path: file.source])
            }
            var reading = step
            reading.listedParts = [part]
            selected.jobs[jobIndex].steps[stepIndex] = .insert(reading)
            selected.part = part.name
            return selected
        }
    }
}
