import BatchRunStore
import Foundation

/// Builds a `JobFile` from its YAML tree, one section at a time, collecting diagnostics.
/// Extensions hold the sections: entities, jobs and steps, and the checks that span them.
package struct JobFileBuilder {
    package static let topKeys = ["version", "store", "entities", "defaults", "params", "jobs", "schema_changes"]

    /// `[A-Za-z_][A-Za-z0-9_-]*` (job and entity names), or without `-` (columns, params).
    static func isName(_ text: String, allowingDash: Bool = true) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else {
            return false
        }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                || (allowingDash && scalar == "-"))
        }
    }

    package let path: String
    package let source: String
    package let loader: JobFileLoader
    package let directory: String
    package let reader = NodeReader()

    package var model = Model(entities: [])
    package var params: [String: StoreValue] = [:]
    package var defaults = JobDefaults()
    /// Where each fetch `as:` publishes: name to job, result columns and node.
    var publishers: [String: (job: String, columns: [String], node: YAMLNode)] = [:]
    /// Every `${NAME.COLUMN}` written, with the job that wrote it.
    var outputReferences: [(job: String, name: String, column: String, node: YAMLNode)] = []
    /// Every `needs` entry, for the graph checks.
    var needEntries: [(job: String, needed: String, node: YAMLNode)] = []
    var jobKeys: [String: YAMLNode] = [:]
    var expressionChecker: (any ExpressionChecking)?
    /// Why expressions were not checked (a PostgreSQL server that could not be reached).
    package var expressionsUnchecked: String?
    /// The file's store, once read: it names the tables of entities declared without `table:`
    /// and gives the checker that prepares expressions as its database reads them.
    package var store: StoreSpec?
    /// Where each entity and column is declared (`JobFile.declarations`).
    package var declarations: [String: SourceLocation] = [:]
    /// Columns' `references`, resolved once every entity is read.
    var references: [ColumnReference] = []

    package init(path: String, source: String, loader: JobFileLoader) {
        self.path = path
        self.source = source
        self.loader = loader
        self.directory = loader.baseDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            ?? URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    mutating func build(_ root: YAMLNode) -> JobFile? {
        guard let top = reader.mapping(root, "the job file", allowed: Self.topKeys,
                                       required: ["version", "store", "entities", "jobs"]) else { return nil }
        var version = 1
        if let node = top["version"] {
            if let value = reader.integer(node, "version", in: 0...Int.max), value != 1 {
                reader.error(node, "unsupported version \(value); this batchrun reads version 1")
            }
            version = 1
        }
        refuseRoleEscapes(root)
        store = top["store"].flatMap(storeSpec)
        if let role = loader.rules?.itemRole, store?.isOnServer == true { store?.role = role }
        if let node = top["entities"] { model = entities(node) }
        if let node = top["defaults"] { defaults = jobDefaults(node) }
        params = fileParams(top["params"])
        let spec = store ?? StoreSpec(kind: .sqlite, path: "")
        if loader.checksExpressionsOnServer || !spec.isOnServer {
            do {
                expressionChecker = try spec.makeExpressionChecker(model: model)
            } catch {
                expressionsUnchecked = "\(error)"
            }
        }
        var jobs: [Job] = []
        if let node = top["jobs"] { jobs = self.jobs(node) }
        checkGraph(jobs)
        checkOutputReferences(jobs)
        if let reason = expressionChecker?.unavailable { expressionsUnchecked = reason }
        var refusesSchemaChanges = false
        if let node = top["schema_changes"], let text = reader.string(node, "schema_changes (apply or refuse)") {
            switch text {
            case "apply": break
            case "refuse": refusesSchemaChanges = true
            default: reader.error(node, "schema_changes must be apply or refuse, found '\(text)'" + Suggestion.hint(for: text, in: ["apply", "refuse"]))
            }
        }
        guard let store else { return nil }
        var file = JobFile(path: path, directory: directory, version: version, store: store, model: model,
                           defaults: defaults, params: params, jobs: jobs, source: source,
                           environment: loader.rules.map { $0.itemEnvironment(of: loader.environment) } ?? loader.environment,
                           expressionsUnchecked: expressionsUnchecked)
        file.refusesSchemaChanges = refusesSchemaChanges
        file.hookEnvironment = loader.rules?.hookEnvironment(of: loader.environment)
        file.limits = loader.rules.flatMap { $0.limits.isEmpty ? nil : $0.limits }
        file.declarations = declarations
        return file
    }

    /// A path in the job file, resolved against the file's folder.
    package func resolve(_ relative: String) -> String {
        if relative.hasPrefix("/") { return relative }
        return URL(fileURLWithPath: relative, relativeTo: URL(fileURLWithPath: directory, isDirectory: true))
            .standardizedFileURL.path
    }

    func storeSpec(_ node: YAMLNode) -> StoreSpec? {
        var spec: StoreSpec?
        if node.mapping != nil {
            guard let fields = reader.mapping(node, "store", allowed: ["sqlite", "postgres", "busy_timeout", "reconnect"]) else { return nil }
            let busy = fields["busy_timeout"].flatMap { reader.duration($0, "busy_timeout") } ?? 5
            let reconnect = fields["reconnect"].flatMap { reader.duration($0, "reconnect") } ?? StoreSpec.defaultReconnect
            if let node = fields["reconnect"], fields["postgres"] == nil {
                reader.error(node, "reconnect is for a store on a server: store: { postgres: URL, reconnect: 60s }")
            }
            switch (fields["sqlite"], fields["postgres"]) {
            case (let file?, nil):
                if let path = reader.string(file, "store.sqlite") {
                    spec = StoreSpec(path: confined(resolve(path), file, "the store"), busyTimeout: busy)
                }
            case (nil, let server?):
                if let url = reader.string(server, "store.postgres") {
                    var named = StoreSpec(location: url, busyTimeout: busy)
                    named.reconnect = reconnect
                    if named.isOnServer {
                        spec = allowedStore(named, server)
                    } else {
                        reader.error(server, "store.postgres must be a URL: postgresql://USER@HOST:PORT/DATABASE")
                    }
                }
            case (_?, let server?):
                reader.error(server, "store takes one of sqlite and postgres, not both")
            case (nil, nil):
                reader.error(node, "store needs sqlite: PATH or postgres: URL")
            }
        } else if let path = reader.string(node, "store (a path, { sqlite: PATH, busy_timeout: 5s } or { postgres: URL })") {
            // `store: postgresql://...` names the server as `--store postgresql://...` does.
            let named = StoreSpec(location: path)
            spec = named.isOnServer ? allowedStore(named, node) : StoreSpec(path: confined(resolve(path), node, "the store"), busyTimeout: 5)
        }
        if var overridden = spec, let override = loader.storeOverride {
            let named = StoreSpec(location: override, busyTimeout: overridden.busyTimeout)
            overridden.kind = named.kind
            overridden.path = named.isOnServer ? override
                : confined(URL(fileURLWithPath: override).standardizedFileURL.path, node, "--store")
            overridden.confinement = overridden.isOnServer ? nil : loader.confinement
            return overridden
        }
        if let path = spec?.path, spec?.isOnServer == false {
            spec?.confinement = isAllowedByName(path) ? nil : loader.confinement
        }
        return spec
    }

    /// `spec` (a store on a server), or nil with an error at `node` when a confined worker does
    /// not let its items use it: only the queue's own database and those of `--allow-store`.
    /// Checked before anything connects to it, so a refused server is never offered a password.
    func allowedStore(_ spec: StoreSpec, _ node: YAMLNode) -> StoreSpec? {
        guard let rules = loader.rules else { return spec }
        if (rules.queueStore.map { spec.isSameConnection(as: $0) } ?? false) || rules.stores.contains(where: spec.isSameConnection(as:)) {
            return spec
        }
        reader.error(node, "store \(StoreSpec.redacted(spec.path)): a confined worker lets an item use only "
            + (rules.queueStore.map { "the queue's own database (\(StoreSpec.redacted($0)), as the same user), " } ?? "")
            + "an SQLite file in its --root folders, or a store named with --allow-store; start the worker with "
            + "--allow-store URL to let items use this one")
        return nil
    }

    /// True for an SQLite file a confined worker names with `--allow-store`.
    func isAllowedByName(_ path: String) -> Bool {
        loader.rules?.stores.contains(where: StoreSpec(kind: .sqlite, path: path).isSameConnection(as:)) == true
    }

    /// `path` (resolved), with an error at `node` when it lies outside the folders the loader
    /// confines the file to, unless a confined worker names it with `--allow-store`.
    func confined(_ path: String, _ node: YAMLNode, _ what: String) -> String {
        if what == "the store", isAllowedByName(path) { return path }
        if let violation = loader.confinement?.violation(of: path) {
            reader.error(node, "\(what) \(violation); a queue worker started with --root lets an item touch only files in those folders")
        }
        return path
    }

    func jobDefaults(_ node: YAMLNode) -> JobDefaults {
        var result = JobDefaults()
        guard let fields = reader.mapping(node, "defaults", allowed: ["batch_size", "merge_policy", "timeout", "retries"])
        else { return result }
        if let node = fields["batch_size"], let value = batchSize(node) { result.batchSize = value }
        if let node = fields["merge_policy"], let value = mergePolicy(node) { result.mergePolicy = value }
        if let node = fields["timeout"] { result.timeout = reader.duration(node, "timeout") }
        if let node = fields["retries"], let value = reader.integer(node, "retries", in: 0...100) { result.retries = value }
        return result
    }

    func batchSize(_ node: YAMLNode) -> Int? {
        reader.integer(node, "batch_size", in: 1...10_000_000)
    }

    func mergePolicy(_ node: YAMLNode) -> MergePolicy? {
        guard let text = reader.string(node, "merge_policy") else { return nil }
        guard let policy = MergePolicy(rawValue: text) else {
            reader.error(node, "unknown merge policy '\(text)'" + Suggestion.hint(for: text, in: MergePolicy.names)
                + " (one of \(MergePolicy.names.joined(separator: ", ")))")
            return nil
        }
        return policy
    }

    /// The file's `params:` with the command line's `--param` applied over them.
    func fileParams(_ node: YAMLNode?) -> [String: StoreValue] {
        var result: [String: StoreValue] = [:]
        if let node {
            for (name, key, value) in reader.namedEntries(node, "params") {
                guard Self.isName(name, allowingDash: false) else {
                    reader.error(key, "param name '\(name)' must be letters, digits and _ (starting with a letter or _)")
                    continue
                }
                guard let typed = value.value else {
                    reader.error(value, "param '\(name)' must be a single value, found \(value.kindName)")
                    continue
                }
                result[name] = typed
            }
        }
        for (name, text) in loader.params { result[name] = StoreValue(plainScalar: text) }
        return result
    }
}
