import BatchRunStore
import BatchRunFeeds
import Foundation

/// The four step kinds, each checked against the model as it is read.
extension JobFileBuilder {
    package static let stepKinds = ["fetch", "insert", "delete", "batch-update"]
    package static let fetchKeys = ["entity", "where", "select", "group_by", "order_by", "limit", "output", "as", "params", "batch_size"]
    static let insertKeys = ["entity", "rows", "from", "format", "compression", "nulls", "columns", "bad_rows", "replace", "params",
                             "batch_size", "parallel"] + remoteFeedKeys
    package static let deleteKeys = ["entity", "where", "params", "batch_size"]
    static let updateKeys = ["entity", "where", "set", "direct", "params", "batch_size"]

    mutating func step(_ node: YAMLNode, job: String) -> Step? {
        guard let pairs = node.mapping, pairs.count == 1, let kind = pairs[0].key.scalarText else {
            reader.error(node, "each step is a one-key mapping: fetch, insert, delete or batch-update")
            return nil
        }
        let body = pairs[0].value
        switch kind {
        case "fetch": return fetch(body, job: job).map(Step.fetch)
        case "insert": return insert(body, job: job).map(Step.insert)
        case "delete": return delete(body, job: job).map(Step.delete)
        case "batch-update": return batchUpdate(body, job: job).map(Step.batchUpdate)
        default:
            reader.error(pairs[0].key, "unknown step '\(kind)'" + Suggestion.hint(for: kind, in: Self.stepKinds)
                + " (steps are fetch, insert, delete and batch-update)")
            return nil
        }
    }

    /// The step's entity, reported when missing or unknown.
    func entity(_ fields: Fields, _ kind: String) -> Entity? {
        guard let node = fields["entity"], let name = reader.string(node, "\(kind) entity") else { return nil }
        guard let entity = model[name] else {
            reader.error(node, "unknown entity '\(name)'" + Suggestion.hint(for: name, in: model.entities.map(\.name)))
            return nil
        }
        return entity
    }

    mutating func stepParams(_ node: YAMLNode?, job: String) -> [String: ParamTemplate] {
        guard let node else { return [:] }
        var result: [String: ParamTemplate] = [:]
        for (name, key, value) in reader.namedEntries(node, "params") {
            guard Self.isName(name, allowingDash: false) else {
                reader.error(key, "param name '\(name)' must be letters, digits and _")
                continue
            }
            guard let typed = value.value else {
                reader.error(value, "param '\(name)' must be a single value, found \(value.kindName)")
                continue
            }
            guard case .text(let text) = typed else {
                result[name] = ParamTemplate(constant: typed)
                continue
            }
            switch ParamTemplate.parse(text) {
            case .success(let template):
                result[name] = template
                checkReferences(template, at: value, job: job)
            case .failure(let error):
                reader.error(value, error.message)
            }
        }
        return result
    }

    mutating func fetch(_ node: YAMLNode, job: String) -> FetchStep? {
        guard let fields = reader.mapping(node, "fetch", allowed: Self.fetchKeys, required: ["entity"]),
              let entity = entity(fields, "fetch") else { return nil }
        var step = FetchStep(entity: entity.name)
        step.params = stepParams(fields["params"], job: job)
        step.batchSize = fields["batch_size"].flatMap(batchSize)
        step.whereClause = fields["where"].flatMap { reader.string($0, "where (an SQL expression)") }
        if let node = fields["select"] {
            if let pairs = node.mapping {
                step.select = pairs.compactMap { key, value in
                    guard let alias = key.scalarText, let expression = reader.string(value, "select expression") else { return nil }
                    return FetchStep.Item(name: alias, expression: expression)
                }
            } else {
                step.select = (reader.stringList(node, "select") ?? []).compactMap { name, item in
                    guard entity.column(named: name) != nil else {
                        reader.error(item, "unknown column '\(name)' of entity \(entity.name)" + Suggestion.hint(for: name, in: entity.columnNames)
                            + "; to select an expression, write select as a map: { alias: expression }")
                        return nil
                    }
                    return FetchStep.Item(name: name, expression: name)
                }
            }
        }
        if let node = fields["group_by"] { step.groupBy = (reader.stringList(node, "group_by") ?? []).map(\.0) }
        let resultColumns = step.resultColumns(of: entity)
        if let node = fields["order_by"] {
            for (term, item) in reader.stringList(node, "order_by") ?? [] {
                let descending = term.hasPrefix("-")
                let name = descending ? String(term.dropFirst()) : term
                let known = resultColumns + entity.columnNames
                if !known.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                    reader.error(item, "order_by names '\(name)', which is neither a selected column nor a column of \(entity.name)"
                        + Suggestion.hint(for: name, in: known))
                    continue
                }
                step.orderBy.append(FetchStep.Order(name: name, descending: descending))
            }
        }
        if let node = fields["limit"] { step.limit = reader.integer(node, "limit", in: 0...Int(Int32.max)) }
        if let node = fields["output"], let text = reader.string(node, "output"), outputAccepted(text, node) {
            if text == "-" {
                step.output = .table
            } else {
                // An s3:// output is no path of the worker's: neither resolved nor confined.
                let path = if case .s3 = FeedLocation(text) { text } else { confined(resolve(text), node, "output") }
                step.confinement = loader.confinement
                step.network = loader.rules?.network
                switch URL(fileURLWithPath: FeedCompression.strip(text)).pathExtension.lowercased() {
                case "csv": step.output = .csv(path)
                case "json": step.output = .json(path)
                case "ndjson", "jsonl": step.output = .ndjson(path)
                default: reader.error(node, "output must be a .csv, .json or .ndjson file (optionally compressed: .csv.gz, "
                    + ".ndjson.zst), or - for a table on standard output")
                }
            }
        }
        if let node = fields["as"], let name = reader.string(node, "as") {
            if !Self.isName(name, allowingDash: false) || ["env", "params"].contains(name) {
                reader.error(node, "as: '\(name)' must be a name of letters, digits and _ (not env or params)")
            } else if let other = publishers[name] {
                reader.error(node, "as: '\(name)' is already published by a fetch in job \(other.job) (line \(other.node.location.line))")
            } else {
                publishers[name] = (job, resultColumns, node)
                step.publishAs = name
            }
        }
        checkExpressions(fields, entity: entity, job: job, params: step.params, statements: fetchProbes(step, fields, entity))
        if fields["where"] != nil || !step.groupBy.isEmpty || fields["order_by"] != nil {
            checkWhole(step.sql(for: entity), at: fields.node)
        }
        return step
    }

    func fetchProbes(_ step: FetchStep, _ fields: Fields, _ entity: Entity) -> [(sql: String, prefix: Int, node: YAMLNode)] {
        var probes: [(String, Int, YAMLNode)] = []
        let table = SQL.quote(entity.tableName)
        if let node = fields["where"], let expression = node.scalarText {
            let prefix = "SELECT 1 FROM \(table) WHERE ("
            probes.append((prefix + expression + ")", prefix.utf8.count, node))
        }
        if let pairs = fields["select"]?.mapping {
            for (_, value) in pairs {
                guard let expression = value.scalarText else { continue }
                let prefix = "SELECT ("
                probes.append((prefix + expression + ") FROM \(table)", prefix.utf8.count, value))
            }
        }
        if let node = fields["group_by"] {
            for item in node.sequence ?? [node] {
                guard let expression = item.scalarText else { continue }
                let prefix = "SELECT 1 FROM \(table) GROUP BY ("
                probes.append((prefix + expression + ")", prefix.utf8.count, item))
            }
        }
        return probes
    }

    mutating func insert(_ node: YAMLNode, job: String) -> InsertStep? {
        guard let fields = reader.mapping(node, "insert", allowed: Self.insertKeys, required: ["entity"]),
              let entity = entity(fields, "insert") else { return nil }
        var columnMap: [String: String?] = [:]
        if let node = fields["columns"] {
            for (field, _, target) in reader.namedEntries(node, "columns") {
                if target.isNull { columnMap[field] = .some(nil); continue }
                guard let column = reader.string(target, "columns target (a column name or null)") else { continue }
                guard entity.column(named: column) != nil else {
                    reader.error(target, "columns maps '\(field)' to unknown column '\(column)' of \(entity.name)"
                        + Suggestion.hint(for: column, in: entity.columnNames))
                    continue
                }
                columnMap[field] = .some(column)
            }
        }
        let rowsNode = fields["rows"], fromNode = fields["from"]
        var source: InsertStep.Source?
        var remote: RemoteFeed?
        var feedName = fromNode?.scalarText ?? ""
        switch (rowsNode, fromNode) {
        case (.some, .some):
            reader.error(fields.keys["from"] ?? fields.node, "insert takes exactly one of 'rows' or 'from', not both")
        case (nil, nil):
            reader.error(fields.node, "insert needs exactly one of 'rows' (inline rows) or 'from' (a feed file)")
        case (let rows?, nil):
            source = inlineRows(rows, entity: entity, columnMap: columnMap).map(InsertStep.Source.rows)
        case (nil, let from?):
            if let text = reader.string(from, "from (a feed file)"), FeedLocation(text).isRemote, FeedGlob.isGlob(Self.remotePath(text)) {
                (source, remote) = remoteParts(text, from, fields)
            } else if let text = reader.string(from, "from (a feed file)"), FeedLocation(text).isRemote {
                feedName = RemoteFeed.withoutQuery(text)
                remote = remoteFeed(text, from, fields)
                if let format = feedFormat(fields, named: feedName) {
                    source = .file(path: text, format: format)
                } else {
                    reader.error(from, "feed \(RemoteFeed.redacted(text)) must end in .csv, .tsv, .json, .ndjson or .jsonl (before an "
                        + "optional .gz or .zst and the query string), or say which with format: csv, tsv, json or ndjson")
                }
            } else if let text = reader.string(from, "from (a feed file)"), FeedGlob.isGlob(text), remoteRefused(text, from, "from") {
                source = localParts(text, from, fields)
            } else if let text = reader.string(from, "from (a feed file)"), remoteRefused(text, from, "from") {
                let path = resolve(text)
                let outside = loader.confinement?.violation(of: path)
                if let format = feedFormat(fields, named: text) {
                    var isDirectory: ObjCBool = false
                    if outside != nil {
                        _ = confined(path, from, "feed file")
                    } else if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) || isDirectory.boolValue {
                        reader.error(from, "feed file \(text) does not exist (looked for \(path))")
                    }
                    source = .file(path: path, format: format)
                } else {
                    reader.error(from, "feed file \(text) must end in .csv, .tsv, .json, .ndjson or .jsonl (before an optional "
                        + ".gz or .zst), or say which with format: csv, tsv, json or ndjson")
                }
            }
        }
        if rowsNode != nil, let node = fields.keys["format"] ?? fields.keys["compression"] {
            reader.error(node, "format and compression describe a feed file (from:), not inline rows")
        }
        if remote == nil { refuseRemoteKeys(fields) }
        var step = InsertStep(entity: entity.name, source: source ?? .rows([]))
        step.compression = feedCompression(fields, named: feedName)
        step.remote = remote
        step.confinement = loader.confinement
        step.columns = columnMap
        step.params = stepParams(fields["params"], job: job)
        step.batchSize = fields["batch_size"].flatMap(batchSize)
        if let node = fields["nulls"] { step.nulls = (reader.stringList(node, "nulls") ?? []).map(\.0) }
        if let node = fields["bad_rows"], let text = reader.string(node, "bad_rows") {
            if let value = InsertStep.BadRows(rawValue: text) { step.badRows = value } else {
                reader.error(node, "bad_rows must be fail or skip, found '\(text)'")
            }
        }
        if let node = fields["replace"], let value = reader.bool(node, "replace") { step.replace = value }
        if let node = fields["parallel"], let value = reader.integer(node, "parallel", in: 1...64) { step.parallel = value }
        return source == nil ? nil : step
    }

    /// A local glob's source: its parts listed now, so that a pattern that matches nothing (or
    /// reaches outside the worker's roots) is an error at `check` and `submit`; the run lists
    /// them again when it starts and records that list. A fan-out batch's item does not list
    /// them (`JobFileLoader.listsFeedParts`).
    func localParts(_ text: String, _ node: YAMLNode, _ fields: Fields) -> InsertStep.Source? {
        let pattern = resolve(text)
        guard let format = feedFormat(fields, named: text) else {
            reader.error(node, "feed parts \(text) must end in .csv, .tsv, .json, .ndjson or .jsonl (before an optional "
                + ".gz or .zst), or say which with format: csv, tsv, json or ndjson")
            return nil
        }
        guard let glob = FeedGlob(pattern) else { return nil }
        do {
            if loader.listsFeedParts { _ = try FeedParts.local(glob, confinement: loader.confinement) }
        } catch let error as PathConfinementError {
            reader.error(node, "feed part \(error); a queue worker started with --root lets an item touch only files in those folders")
        } catch {
            reader.error(node, "from: \(error)")
        }
        let compression = fields["compression"] == nil ? nil : feedCompression(fields, named: text)
        return .parts(pattern: pattern, format: format, compression: compression)
    }

    /// A remote location's path, where a glob's wildcards are looked for: after the host (an
    /// IPv6 host's `[::1]` is no wildcard), before the query string.
    static func remotePath(_ url: String) -> String {
        // An S3 key has no query string: its `?` is a wildcard.
        if case .s3(let location) = FeedLocation(url) { return location.key }
        let text = RemoteFeed.withoutQuery(url)
        guard let scheme = text.range(of: "://"), let slash = text[scheme.upperBound...].firstIndex(of: "/") else { return "" }
        return String(text[slash...])
    }

    /// An `s3://` glob's source and feed (its parts are listed when the run starts: a prefix
    /// that lists nothing fails the run, not `check`); an `http(s)://` glob is an error, since
    /// HTTP has no listing.
    func remoteParts(_ text: String, _ node: YAMLNode, _ fields: Fields) -> (InsertStep.Source?, RemoteFeed?) {
        switch FeedLocation(text) {
        case .s3: break
        case .s3WithoutObject:
            _ = remoteFeed(text, node, fields)   // says what is wrong with the bucket's name
            return (nil, nil)
        default:
            reader.error(node, "from: \(RemoteFeed.redacted(text)) has a wildcard, but HTTP has no listing to match it against; "
                + "name each file, or put the parts in an S3 bucket (s3://BUCKET/PREFIX/*.csv.gz) or a local folder")
            return (nil, nil)
        }
        guard let feed = remoteFeed(text, node, fields) else { return (nil, nil) }
        guard let format = feedFormat(fields, named: text) else {
            reader.error(node, "feed parts \(text) must end in .csv, .tsv, .json, .ndjson or .jsonl (before an optional "
                + ".gz or .zst), or say which with format: csv, tsv, json or ndjson")
            return (nil, feed)
        }
        let compression = fields["compression"] == nil ? nil : feedCompression(fields, named: text)
        return (.parts(pattern: text, format: format, compression: compression), feed)
    }

    func inlineRows(_ node: YAMLNode, entity: Entity, columnMap: [String: String?]) -> [[(field: String, value: StoreValue)]]? {
        guard let items = node.sequence else {
            reader.error(node, "rows must be a list of mappings (column: value), found \(node.kindName)")
            return nil
        }
        var rows: [[(field: String, value: StoreValue)]] = []
        for item in items {
            var row: [(field: String, value: StoreValue)] = []
            for (field, key, value) in reader.namedEntries(item, "a row") {
                let column = columnMap[field] ?? field
                guard let column else { continue }
                guard let declared = entity.column(named: column) else {
                    reader.error(key, "row field '\(field)' matches no column of \(entity.name)" + Suggestion.hint(for: field, in: entity.columnNames))
                    continue
                }
                guard let typed = value.value else {
                    reader.error(value, "value of \(field) must be a single value, found \(value.kindName)")
                    continue
                }
                if case .failure(let problem) = ValueConverter.convert(typed, to: declared.type) {
                    reader.error(value, "column \(declared.name): \(problem.message)")
                }
                row.append((field, typed))
            }
            rows.append(row)
        }
        return rows
    }

    mutating func delete(_ node: YAMLNode, job: String) -> DeleteStep? {
        guard let fields = reader.mapping(node, "delete", allowed: Self.deleteKeys, required: ["entity", "where"]),
              let entity = entity(fields, "delete"), let whereNode = fields["where"],
              let whereText = reader.string(whereNode, "where (an SQL expression, or all)") else { return nil }
        var step = DeleteStep(entity: entity.name, whereClause: whereText == "all" ? nil : whereText)
        step.params = stepParams(fields["params"], job: job)
        step.batchSize = fields["batch_size"].flatMap(batchSize)
        if let whereClause = step.whereClause {
            let prefix = "SELECT 1 FROM \(SQL.quote(entity.tableName)) WHERE ("
            checkExpressions(fields, entity: entity, job: job, params: step.params,
                             statements: [(prefix + whereClause + ")", prefix.utf8.count, whereNode)])
        }
        return step
    }

    mutating func batchUpdate(_ node: YAMLNode, job: String) -> BatchUpdateStep? {
        guard let fields = reader.mapping(node, "batch-update", allowed: Self.updateKeys, required: ["entity", "set"]),
              let entity = entity(fields, "batch-update") else { return nil }
        let table = SQL.quote(entity.tableName)
        var probes: [(String, Int, YAMLNode)] = []
        var assignments: [BatchUpdateStep.Assignment] = []
        if let setNode = fields["set"] {
            let entries = reader.namedEntries(setNode, "set")
            if entries.isEmpty && setNode.mapping != nil { reader.error(setNode, "set must assign at least one column") }
            for (column, key, value) in entries {
                guard let declared = entity.column(named: column) else {
                    reader.error(key, "set names unknown column '\(column)' of \(entity.name)" + Suggestion.hint(for: column, in: entity.columnNames))
                    continue
                }
                guard let expression = reader.string(value, "set value (an SQL expression; quote text as \"'text'\")") else { continue }
                if entity.primaryKey.contains(declared.name) {
                    reader.error(key, "set may not change primary key column '\(declared.name)'")
                }
                assignments.append(.init(column: declared.name, expression: expression))
                let prefix = "SELECT ("
                probes.append((prefix + expression + ") FROM \(table)", prefix.utf8.count, value))
            }
        }
        let whereText = fields["where"].flatMap { reader.string($0, "where (an SQL expression)") }
        if let whereNode = fields["where"], let whereText {
            let prefix = "SELECT 1 FROM \(table) WHERE ("
            probes.append((prefix + whereText + ")", prefix.utf8.count, whereNode))
        }
        var step = BatchUpdateStep(entity: entity.name, whereClause: whereText, set: assignments)
        step.params = stepParams(fields["params"], job: job)
        step.batchSize = fields["batch_size"].flatMap(batchSize)
        if let node = fields["direct"], let direct = reader.bool(node, "direct") { step.direct = direct }
        checkExpressions(fields, entity: entity, job: job, params: step.params, statements: probes)
        return step
    }

    /// A feed's format: `format:` when given, else from the name (the suffix before `.gz`/`.zst`).
    func feedFormat(_ fields: Fields, named name: String) -> FeedFormat? {
        guard let node = fields["format"] else { return FeedFormat(path: name) }
        guard let text = reader.string(node, "format") else { return nil }
        if let format = FeedFormat(rawValue: text.lowercased()) ?? (text.lowercased() == "jsonl" ? .ndjson : nil) { return format }
        reader.error(node, "format must be csv, tsv, json or ndjson, found '\(text)'")
        return nil
    }

    /// A feed's compression: `compression:` when given, else from the name's suffix (`.gz`, `.zst`).
    func feedCompression(_ fields: Fields, named name: String) -> FeedCompression {
        guard let node = fields["compression"] else { return FeedCompression(path: name) }
        guard let text = reader.string(node, "compression") else { return .none }
        if let compression = FeedCompression(rawValue: text.lowercased()) { return compression }
        reader.error(node, "compression must be gzip, zstd or none, found '\(text)'" + Suggestion.hint(for: text, in: ["gzip", "zstd", "none"]))
        return .none
    }

    /// True for a local output or an `s3://BUCKET/KEY` one this build can write (section 14);
    /// false, with an error, for another URL, an `s3://` URL without a key, or any `s3://` URL
    /// without network feeds.
    func outputAccepted(_ text: String, _ node: YAMLNode) -> Bool {
        #if NetworkFeeds
        switch FeedLocation(text) {
        case .s3: return true
        case .s3WithoutObject:
            reader.error(node, "output: \(text) names no object; write s3://BUCKET/KEY, the bucket's name letters, digits, ., - or _ (s3://exports/daily/flights.csv.gz)")
            return false
        case .file, .http: break
        }
        #endif
        return remoteRefused(text, node, "output")
    }

    /// False (with an error) for an `http://`, `https://` or `s3://` location where this build
    /// takes local files only (docs/feeds.md).
    func remoteRefused(_ text: String, _ node: YAMLNode, _ key: String) -> Bool {
        guard let scheme = FeedLocation(text).scheme else { return true }
        reader.error(node, "\(key): \(scheme) feeds and outputs are not supported yet; download the file first "
            + "(curl -fo data/feed.csv.gz URL, aws s3 cp) and name the local path")
        return false
    }
}
