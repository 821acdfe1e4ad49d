import BatchRunFeeds
import BatchRunStore

/// `submit --fan-out JOB` (JOBFILE.md 17): how a job file splits into a batch. The jobs JOB
/// needs run first as one item, then one item per part of JOB's feed in parts, then the jobs
/// that remain as the batch's completion.
///
/// ```swift
/// let fanOut = try FanOut(job: "load", in: file)
/// fanOut.needs        // ["prepare"]: one item first (none when empty)
/// fanOut.completion   // ["stats"]: one item after the last part (none when empty)
/// let parts = try fanOut.parts(of: file)   // one item each
/// ```
package struct FanOut: Sendable {
    /// The fanned-out job.
    package let job: String
    /// The jobs it needs, in file order.
    package let needs: [String]
    /// The jobs that remain, in file order.
    package let completion: [String]
    /// Its feed in parts (its one insert step whose `from:` is a glob).
    let step: InsertStep

    /// Checks that `job` is in the file with one feed in parts, and that each item's file can
    /// be made; throws naming the job (exit 2) when not.
    package init(job: String, in file: JobFile) throws(JobFileError) {
        func refuse(_ message: String, at location: SourceLocation? = nil) -> JobFileError {
            JobFileError(diagnostics: [Diagnostic(at: location, message)], sources: [file.path: file.source])
        }
        guard let found = file.job(named: job) else {
            let names = file.jobs.map(\.name)
            throw refuse("--fan-out \(job): \(file.path) has no job '\(job)'" + Suggestion.hint(for: job, in: names))
        }
        let globs = found.steps.compactMap { step -> InsertStep? in
            if case .insert(let insert) = step, case .parts = insert.source { return insert }
            return nil
        }
        guard globs.count == 1, let step = globs.first else {
            throw refuse("--fan-out \(job): job \(job) " + (globs.isEmpty
                ? "has no feed in parts to fan out (an insert step whose from: is a glob, such as data/part-*.csv.gz)"
                : "has \(globs.count) feeds in parts; a fanned-out job reads one"), at: found.location)
        }
        // Every step of the job runs once per part: a delete or an update beside the insert would
        // undo or redo what the other parts did.
        guard found.steps.count == 1 else {
            throw refuse("--fan-out \(job): job \(job) has \(found.steps.count) steps, and each part's item would run every one of them; "
                + "a fanned-out job is its insert from the glob alone (move the other steps to a job it needs, or one that needs it)",
                at: found.location)
        }
        let graph = JobGraph(jobs: file.jobs)
        let upstream = graph.ancestors(of: job)
        self.job = job
        self.step = step
        needs = file.jobs.map(\.name).filter(upstream.contains)
        completion = file.jobs.map(\.name).filter { $0 != job && !upstream.contains($0) }
        // Each item's file, made now, so a reference one of them cannot resolve is found at submit.
        if !needs.isEmpty { _ = try FanOutRole.needs(job: job).apply(to: file) }
        if !completion.isEmpty { _ = try FanOutRole.completion(job: job).apply(to: file) }
        _ = try JobSelection(select: [job]).apply(to: file)
    }

    /// The parts the job's glob lists now, in name order: each becomes an item. Throws
    /// `FeedError` naming the pattern when it lists nothing or cannot be listed.
    package func parts() throws(FeedError) -> [FeedPart] {
        guard case .parts(let pattern, _, _) = step.source else { return [] }
        return try FeedParts.list(pattern: pattern, remote: step.remote, confinement: step.confinement)
    }

    /// The job's one insert step with a feed in parts, and where it is among the job's steps.
    static func globStep(of job: Job) -> (Int, InsertStep)? {
        for (index, step) in job.steps.enumerated() {
            if case .insert(let insert) = step, case .parts = insert.source { return (index, insert) }
        }
        return nil
    }

    /// True when `name` (a path, or `s3://BUCKET/KEY`) is one the glob `pattern` lists. A name
    /// with a `.` or `..` component is none (a listing never gives one; `**` would match it).
    static func pattern(_ pattern: String, matches name: String) -> Bool {
        guard !name.split(separator: "/", omittingEmptySubsequences: false).dropFirst(name.hasPrefix("s3://") ? 3 : 0)
            .contains(where: { $0 == "." || $0 == ".." }) else { return false }
        if let listed = S3Location(url: pattern), let part = S3Location(url: name) {
            return listed.bucket == part.bucket && FeedGlob(listed.key)?.matches(part.key) == true
        }
        return FeedGlob(pattern)?.matches(name) == true
    }
}
