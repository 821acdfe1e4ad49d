import BatchRunStore
import Yams

/// A YAML value that remembers where it was written, so every error can point at it.
///
/// Built from Yams' composed nodes; unlike them it is `Sendable` and keeps mapping order.
struct YAMLNode: Sendable {
    package enum Content: Sendable {
        /// A scalar; `plain` is false for quoted and block scalars, which are always strings.
        case scalar(String, plain: Bool)
        case mapping([(key: YAMLNode, value: YAMLNode)])
        case sequence([YAMLNode])
    }

    package var content: Content
    package var location: SourceLocation

    /// Parses a YAML document; throws a `Diagnostic` for a syntax error.
    package static func parse(_ text: String, file: String) throws(JobFileError) -> YAMLNode? {
        do {
            guard let root = try Yams.compose(yaml: text) else { return nil }
            return YAMLNode(root, file: file)
        } catch let error as YamlError {
            throw JobFileError(diagnostics: [diagnostic(for: error, file: file)], sources: [file: text])
        } catch {
            throw JobFileError(diagnostics: [Diagnostic(at: nil, "\(file): \(error)")], sources: [file: text])
        }
    }

    package init(_ node: Node, file: String) {
        location = SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1)
        switch node {
        case .scalar(let scalar):
            content = .scalar(scalar.string, plain: scalar.style == .plain)
        case .mapping(let mapping):
            content = .mapping(mapping.map { (YAMLNode($0.key, file: file), YAMLNode($0.value, file: file)) })
        case .sequence(let sequence):
            content = .sequence(sequence.map { YAMLNode($0, file: file) })
        case .alias:
            content = .scalar("", plain: true)
        }
    }

    package init(content: Content, location: SourceLocation) {
        self.content = content
        self.location = location
    }

    private static func diagnostic(for error: YamlError, file: String) -> Diagnostic {
        switch error {
        case .scanner(let context, let problem, let mark, _),
             .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let where_ = context.map { " (\($0.text) at line \($0.mark.line), column \($0.mark.column))" } ?? ""
            return Diagnostic(at: SourceLocation(file: file, line: mark.line, column: mark.column),
                              "YAML syntax: \(problem)\(where_)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return Diagnostic(at: SourceLocation(file: file, line: context.mark.line, column: context.mark.column),
                              "duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) in this mapping")
        case .reader(let problem, _, _, _):
            return Diagnostic(at: SourceLocation(file: file, line: 1, column: 1), "YAML: \(problem)")
        default:
            return Diagnostic(at: SourceLocation(file: file, line: 1, column: 1), "YAML: \(error)")
        }
    }

    // MARK: Reading values

    /// The scalar's text, or nil for mappings and sequences.
    var scalarText: String? {
        if case .scalar(let text, _) = content { return text }
        return nil
    }

    /// True for `~`, `null` and an empty plain scalar.
    package var isNull: Bool {
        if case .scalar(let text, true) = content { return ["", "~", "null", "Null", "NULL"].contains(text) }
        return false
    }

    var mapping: [(key: YAMLNode, value: YAMLNode)]? {
        if case .mapping(let pairs) = content { return pairs }
        return nil
    }

    package var sequence: [YAMLNode]? {
        if case .sequence(let items) = content { return items }
        return nil
    }

    /// What kind of value this is, for "expected X, found Y" messages.
    var kindName: String {
        switch content {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar: return isNull ? "nothing (null)" : "'\(scalarText ?? "")'"
        }
    }

    /// The scalar as a typed value: plain scalars follow YAML's core schema, quoted ones are text.
    package var value: StoreValue? {
        guard case .scalar(let text, let plain) = content else { return nil }
        return plain ? StoreValue(plainScalar: text) : .text(text)
    }
}
