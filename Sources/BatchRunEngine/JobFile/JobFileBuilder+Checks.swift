import BatchRunStore

/// Checks that span sections: expressions against the schema, params, references and the job graph.
extension JobFileBuilder {
    /// Records `${NAME.COLUMN}` for the graph check and checks `${env.VAR}` and `${params.NAME}` now.
    mutating func checkReferences(_ template: ParamTemplate, at node: YAMLNode, job: String) {
        for reference in template.references {
            switch reference {
            case .environment(let name) where loader.rules?.environmentRefusal(name) != nil:
                reader.error(node, loader.rules?.environmentRefusal(name) ?? "")
            case .environment(let name) where loader.environment[name] == nil:
                reader.error(node, "\(reference) refers to environment variable \(name), which is not set")
            case .parameter(let name) where params[name] == nil:
                reader.error(node, "\(reference) refers to param '\(name)', which has no value"
                    + Suggestion.hint(for: name, in: Array(params.keys)) + "; add it to params or pass --param \(name)=VALUE")
            case .output(let name, let column):
                outputReferences.append((job, name, column, node))
            default:
                break
            }
        }
    }

    /// Prepares each probe statement; errors point into the expression when SQLite gives an offset.
    func checkExpressions(_ fields: Fields, entity: Entity, job: String, params stepParams: [String: ParamTemplate],
                          statements: [(sql: String, prefix: Int, node: YAMLNode)]) {
        guard let checker = expressionChecker else { return }
        for (sql, prefix, node) in statements {
            switch checker.check(sql: sql) {
            case .success(let placeholders):
                checkPlaceholders(placeholders, at: node, stepParams: stepParams)
            case .failure(let problem):
                reader.error(at: location(in: node, offset: problem.offset.map { $0 - prefix }),
                             explain(problem.message, entity: entity))
            }
        }
    }

    /// Prepares a whole statement (after its parts passed) to catch what only the whole shows.
    func checkWhole(_ sql: String, at node: YAMLNode) {
        guard let checker = expressionChecker, reader.diagnostics.isEmpty else { return }
        if case .failure(let problem) = checker.check(sql: sql) {
            reader.error(node, "this fetch does not prepare: \(problem.message)")
        }
    }

    func checkPlaceholders(_ placeholders: [String], at node: YAMLNode, stepParams: [String: ParamTemplate]) {
        for name in placeholders where stepParams[name] == nil && params[name] == nil {
            reader.error(node, "placeholder :\(name) has no value; set it in the step's params, the file's params, or with --param \(name)=VALUE"
                + Suggestion.hint(for: name, in: Array(stepParams.keys) + Array(params.keys)))
        }
    }

    /// The location of a byte offset inside a scalar written on one line, else the scalar's start.
    func location(in node: YAMLNode, offset: Int?) -> SourceLocation {
        guard let offset, offset >= 0, case .scalar(let text, let plain) = node.content, !text.contains("\n"),
              offset <= text.utf8.count else { return node.location }
        let characters = String(decoding: text.utf8.prefix(offset), as: UTF8.self).unicodeScalars.count
        return node.location.advanced(by: characters + (plain ? 0 : 1))
    }

    /// SQLite's message, with a did-you-mean for a misspelt column.
    package func explain(_ message: String, entity: Entity) -> String {
        let tablePrefix = "no such table: "
        if message.hasPrefix(tablePrefix) {
            let name = String(message.dropFirst(tablePrefix.count))
            return "expressions may read declared entities only, not '\(name)'"
                + Suggestion.hint(for: name, in: model.entities.map(\.tableName))
        }
        let prefix = "no such column: "
        if message.hasPrefix(prefix) {
            let name = String(message.dropFirst(prefix.count))
            return "\(message) (entity \(entity.name))" + Suggestion.hint(for: name, in: entity.columnNames)
        }
        return message
    }

    /// Unknown jobs in `needs`, and cycles printed as `a -> c -> b -> a`.
    func checkGraph(_ jobs: [Job]) {
        let names = jobs.map(\.name)
        let known = Set(jobKeys.keys)
        for (job, needed, node) in needEntries where !known.contains(needed) {
            reader.error(node, "job \(job) needs unknown job '\(needed)'" + Suggestion.hint(for: needed, in: names.filter { $0 != job }))
        }
        if let cycle = JobGraph(jobs: jobs).cycle() {
            let entry = needEntries.first { $0.job == cycle[0] && $0.needed == cycle[1] }
            reader.error(at: (entry?.node ?? jobKeys[cycle[0]])?.location,
                         "dependency cycle: " + cycle.joined(separator: " -> "))
        }
    }

    /// Every `${NAME.COLUMN}` must name a fetch `as:` in a job upstream of the one using it.
    func checkOutputReferences(_ jobs: [Job]) {
        let graph = JobGraph(jobs: jobs)
        guard graph.cycle() == nil else { return }
        for (job, name, column, node) in outputReferences {
            guard let publisher = publishers[name] else {
                reader.error(node, "${\(name).\(column)} refers to no fetch with as: \(name)"
                    + Suggestion.hint(for: name, in: Array(publishers.keys)))
                continue
            }
            if publisher.job == job {
                // A fetch earlier in the same job is fine; the value is there when later steps run.
            } else if !graph.ancestors(of: job).contains(publisher.job) {
                reader.error(node, "${\(name).\(column)} comes from job \(publisher.job), which job \(job) does not need (directly or through others); add needs: [\(publisher.job)]")
                continue
            }
            if !publisher.columns.contains(column) {
                reader.error(node, "${\(name).\(column)}: the fetch with as: \(name) has no column '\(column)'"
                    + Suggestion.hint(for: column, in: publisher.columns) + " (it has \(publisher.columns.joined(separator: ", ")))")
            }
        }
    }
}
