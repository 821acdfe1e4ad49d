/// `--select` and `--exclude`: which jobs of a file run. A selector is a job name, `name+`
/// (the job and everything after it) or `+name` (the job and everything it needs), as in dbt.
///
/// ```swift
/// let selection = try JobSelection(select: ["+stats"], exclude: ["purge_old"])
/// let file = try selection.apply(to: loaded)   // import_sessions, close_stale, stats
/// ```
package struct JobSelection: Sendable {
    package var select: [String]
    package var exclude: [String]

    package init(select: [String] = [], exclude: [String] = []) {
        self.select = select
        self.exclude = exclude
    }

    package var isEmpty: Bool { select.isEmpty && exclude.isEmpty }

    /// The file with only the selected jobs. A selected job's needs that are not selected are
    /// taken as satisfied (not run), as dbt does; a `${NAME.COLUMN}` from a job left out is an error.
    package func apply(to file: JobFile) throws(JobFileError) -> JobFile {
        guard !isEmpty else { return file }
        let graph = JobGraph(jobs: file.jobs)
        var errors: [Diagnostic] = []
        func expand(_ selectors: [String], option: String) -> Set<String> {
            var names: Set<String> = []
            for selector in selectors {
                let upstream = selector.hasPrefix("+"), downstream = selector.hasSuffix("+")
                let name = String(selector.dropFirst(upstream ? 1 : 0).dropLast(downstream ? 1 : 0))
                guard graph.names.contains(name) else {
                    errors.append(Diagnostic(at: nil, "\(option) \(selector): \(file.path) has no job '\(name)'"
                        + Suggestion.hint(for: name, in: graph.names)))
                    continue
                }
                names.insert(name)
                if upstream { names.formUnion(graph.ancestors(of: name)) }
                if downstream { names.formUnion(graph.descendants(of: name)) }
            }
            return names
        }
        var chosen = select.isEmpty ? Set(graph.names) : expand(select, option: "--select")
        chosen.subtract(expand(exclude, option: "--exclude"))
        var selected = file
        selected.jobs = file.jobs.filter { chosen.contains($0.name) }.map { job in
            var job = job
            job.needs = job.needs.filter(chosen.contains)
            return job
        }
        let publishers = Dictionary(file.jobs.flatMap { job in
            job.steps.compactMap { step -> (String, String)? in
                if case .fetch(let fetch) = step, let name = fetch.publishAs { return (name, job.name) }
                return nil
            }
        }, uniquingKeysWith: { first, _ in first })
        for job in selected.jobs {
            for reference in job.steps.flatMap({ $0.params.values.flatMap(\.references) }) {
                guard case .output(let name, _) = reference, let publisher = publishers[name], !chosen.contains(publisher) else { continue }
                errors.append(Diagnostic(at: job.location, "job \(job.name) uses \(reference) from job \(publisher), which the selection leaves out; select it too (for example --select +\(job.name))"))
            }
        }
        if selected.jobs.isEmpty && errors.isEmpty {
            errors.append(Diagnostic(at: nil, "--select/--exclude leave no job of \(file.path) to run"))
        }
        if !errors.isEmpty { throw JobFileError(diagnostics: errors, sources: [file.path: file.source]) }
        return selected
    }
}
