import Foundation

/// What `batchrun plan` shows: the jobs in waves, with needs and descriptions,
/// as text, Graphviz dot or JSON.
///
/// ```swift
/// print(Plan(file: file).text())
/// // wave 1: import_sessions
/// // wave 2: close_stale, purge_old ...
/// ```
package struct Plan: Sendable {
    package let file: JobFile
    package let graph: JobGraph

    package init(file: JobFile) {
        self.file = file
        self.graph = JobGraph(jobs: file.jobs)
    }

    package func text() -> String {
        var lines = ["\(file.path): \(file.jobs.count) job\(file.jobs.count == 1 ? "" : "s") in \(graph.waves().count) wave\(graph.waves().count == 1 ? "" : "s"), store \(file.store.path)"]
        for (index, wave) in graph.waves().enumerated() {
            lines.append("")
            lines.append("wave \(index + 1): \(wave.joined(separator: ", "))")
            for name in wave {
                guard let job = file.job(named: name) else { continue }
                var line = "  \(name)"
                if !job.needs.isEmpty { line += "  (needs \(job.needs.joined(separator: ", ")))" }
                lines.append(line)
                if let description = job.description { lines.append("    \(description)") }
                let steps = job.steps.map { "\($0.kind.rawValue) \($0.entity)" }.joined(separator: ", ")
                lines.append("    steps: \(steps); merge policy \(job.mergePolicy.rawValue); batch size \(job.batchSize)"
                    + (job.atomic ? "; atomic" : ""))
            }
        }
        return lines.joined(separator: "\n")
    }

    package func dot() -> String {
        var lines = ["digraph batchrun {", "  rankdir=LR;", "  node [shape=box];"]
        for job in file.jobs {
            let label = job.description.map { "\(job.name)\\n\(escape($0))" } ?? job.name
            lines.append("  \(quote(job.name)) [label=\"\(label)\"];")
        }
        for job in file.jobs {
            for needed in job.needs { lines.append("  \(quote(needed)) -> \(quote(job.name));") }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    package func json() throws -> String {
        struct JobEntry: Encodable {
            var name: String
            var wave: Int
            var needs: [String]
            var description: String?
            var steps: [String]
            var merge_policy: String
            var batch_size: Int
            var atomic: Bool
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try container.encode(wave, forKey: .wave)
                try container.encode(needs, forKey: .needs)
                try container.encode(description, forKey: .description)
                try container.encode(steps, forKey: .steps)
                try container.encode(merge_policy, forKey: .merge_policy)
                try container.encode(batch_size, forKey: .batch_size)
                try container.encode(atomic, forKey: .atomic)
            }
            enum CodingKeys: String, CodingKey { case name, wave, needs, description, steps, merge_policy, batch_size, atomic }
        }
        struct Document: Encodable {
            var file: String
            var store: String
            var waves: [[String]]
            var jobs: [JobEntry]
        }
        let waves = graph.waves()
        let entries = file.jobs.map { job in
            JobEntry(name: job.name, wave: (waves.firstIndex { $0.contains(job.name) } ?? 0) + 1, needs: job.needs,
                     description: job.description, steps: job.steps.map(\.kind.rawValue), merge_policy: job.mergePolicy.rawValue,
                     batch_size: job.batchSize, atomic: job.atomic)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Document(file: file.path, store: file.store.path, waves: waves, jobs: entries))
        return String(decoding: data, as: UTF8.self)
    }

    private func quote(_ name: String) -> String { "\"\(escape(name))\"" }
    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
