/// `jobs:` and their settings; steps are in `JobFileBuilder+Steps.swift`.
extension JobFileBuilder {
    static let jobKeysAllowed = ["steps", "needs", "merge_policy", "batch_size", "atomic", "timeout", "retries",
                                 "on_success", "on_failure", "on_complete", "description"]

    mutating func jobs(_ node: YAMLNode) -> [Job] {
        var result: [Job] = []
        let entries = reader.namedEntries(node, "jobs")
        if entries.isEmpty && node.mapping != nil { reader.error(node, "jobs must declare at least one job") }
        for (name, key, _) in entries { jobKeys[name] = key }
        for (name, key, value) in entries {
            guard Self.isName(name) else {
                reader.error(key, "invalid job name '\(name)': job names match [A-Za-z_][A-Za-z0-9_-]*")
                continue
            }
            if let job = job(name, key: key, value) { result.append(job) }
        }
        return result
    }

    mutating func job(_ name: String, key: YAMLNode, _ node: YAMLNode) -> Job? {
        let what = "job \(name)"
        guard let fields = reader.mapping(node, what, allowed: Self.jobKeysAllowed, required: ["steps"]) else { return nil }
        var job = Job(name: name, needs: [], steps: [], mergePolicy: defaults.mergePolicy, batchSize: defaults.batchSize,
                      atomic: false, timeout: defaults.timeout, retries: defaults.retries, hooks: Hooks(),
                      description: nil, location: key.location)
        if let node = fields["needs"] {
            for (needed, entry) in reader.stringList(node, "needs") ?? [] {
                if job.needs.contains(needed) { continue }
                job.needs.append(needed)
                needEntries.append((name, needed, entry))
            }
        }
        if let node = fields["merge_policy"], let policy = mergePolicy(node) { job.mergePolicy = policy }
        if let node = fields["batch_size"], let size = batchSize(node) { job.batchSize = size }
        if let node = fields["atomic"], let atomic = reader.bool(node, "atomic") { job.atomic = atomic }
        if let node = fields["timeout"] { job.timeout = reader.duration(node, "timeout") }
        if let node = fields["retries"], let retries = reader.integer(node, "retries", in: 0...100) { job.retries = retries }
        job.hooks.onSuccess = fields["on_success"].flatMap { reader.string($0, "on_success (a shell command)") }
        job.hooks.onFailure = fields["on_failure"].flatMap { reader.string($0, "on_failure (a shell command)") }
        job.hooks.onComplete = fields["on_complete"].flatMap { reader.string($0, "on_complete (a shell command)") }
        if let refusal = loader.hookRefusal {
            for key in ["on_success", "on_failure", "on_complete"] {
                if let node = fields[key] { reader.error(node, "\(key): \(refusal); nothing of this file was run") }
            }
        }
        job.description = fields["description"].flatMap { reader.string($0, "description") }
        if let node = fields["steps"] {
            guard let items = node.sequence else {
                reader.error(node, "steps of \(what) must be a list, like '- fetch: {...}', found \(node.kindName)")
                return job
            }
            if items.isEmpty { reader.error(node, "\(what) has no steps; steps must be a non-empty list") }
            for item in items {
                if let step = step(item, job: name) { job.steps.append(step) }
            }
        }
        return job
    }
}
