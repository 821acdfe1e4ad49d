import BatchRunStore
import Foundation

/// Reads typed values out of `YAMLNode`s and collects every problem as a located diagnostic,
/// so a job file's errors are all reported in one pass.
package final class NodeReader {
    package private(set) var diagnostics: [Diagnostic] = []
    /// The same diagnostics, to drop repeats in constant time (a hostile file can have 10⁵).
    private var reported: Set<Diagnostic> = []

    func error(_ node: YAMLNode, _ message: String) {
        error(at: node.location, message)
    }

    package func error(at location: SourceLocation?, _ message: String) {
        let diagnostic = Diagnostic(at: location, message)
        if reported.insert(diagnostic).inserted { diagnostics.append(diagnostic) }
    }

    /// A mapping's entries by key, after reporting unknown keys (with a did-you-mean),
    /// non-string keys and missing required keys. Nil (and an error) when `node` is no mapping.
    func mapping(_ node: YAMLNode, _ what: String, allowed: [String], required: [String] = []) -> Fields? {
        guard let pairs = node.mapping else {
            error(node, "\(what) must be a mapping, found \(node.kindName)")
            return nil
        }
        var fields = Fields(node: node)
        for (key, value) in pairs {
            guard let name = key.scalarText else {
                error(key, "keys in \(what) must be plain names")
                continue
            }
            if allowed.contains(name) {
                fields.values[name] = value
                fields.keys[name] = key
                continue
            }
            // Hints for the first errors only: past a hundred the file is not a job file with typos.
            let suggestion = diagnostics.count >= 100 ? nil : Suggestion.closest(to: name, in: allowed.filter { fields.values[$0] == nil })
            error(key, "unknown key '\(name)' in \(what)" + (suggestion.map { "; did you mean '\($0)'?" } ?? ""))
            if let suggestion, pairs.allSatisfy({ $0.key.scalarText != suggestion }) {
                // Read the value as the key it most likely meant, so its own errors show in this pass too.
                fields.values[suggestion] = value
                fields.keys[suggestion] = key
                fields.guessed.insert(suggestion)
            }
        }
        for name in required where fields.values[name] == nil {
            error(node, "\(what) is missing required key '\(name)'")
        }
        return fields
    }

    /// The entries of a mapping whose keys are user-chosen names (jobs, entities, params).
    func namedEntries(_ node: YAMLNode, _ what: String) -> [(name: String, key: YAMLNode, value: YAMLNode)] {
        guard let pairs = node.mapping else {
            error(node, "\(what) must be a mapping of names, found \(node.kindName)")
            return []
        }
        return pairs.compactMap { key, value in
            guard let name = key.scalarText, !key.isNull else {
                error(key, "names in \(what) must be text")
                return nil
            }
            return (name, key, value)
        }
    }

    func string(_ node: YAMLNode, _ what: String) -> String? {
        guard let text = node.scalarText, !node.isNull else {
            error(node, "\(what) must be text, found \(node.kindName)")
            return nil
        }
        return text
    }

    /// A whole number in `range`; YAML text like `"12"` is refused, as it is quoted.
    func integer(_ node: YAMLNode, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard case .integer(let value)? = node.value, node.scalarText.map({ $0 != "true" && $0 != "false" }) == true,
              case .scalar(_, true) = node.content else {
            error(node, "\(what) must be a whole number, found \(node.kindName)")
            return nil
        }
        guard range.contains(Int(value)) else {
            error(node, "\(what) must be between \(range.lowerBound) and \(range.upperBound), found \(value)")
            return nil
        }
        return Int(value)
    }

    func bool(_ node: YAMLNode, _ what: String) -> Bool? {
        if case .scalar(let text, true) = node.content {
            switch text.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: break
            }
        }
        error(node, "\(what) must be true or false, found \(node.kindName)")
        return nil
    }

    /// One string or a list of strings.
    func stringList(_ node: YAMLNode, _ what: String) -> [(String, YAMLNode)]? {
        if let items = node.sequence {
            var result: [(String, YAMLNode)] = []
            for item in items {
                guard let text = string(item, "each entry of \(what)") else { continue }
                result.append((text, item))
            }
            return result
        }
        if let text = string(node, "\(what) (a name or a list of names)") { return [(text, node)] }
        return nil
    }

    /// A list of lists of names, as in `unique: [[user, started_at]]`; a flat list is one group.
    func nameGroups(_ node: YAMLNode, _ what: String) -> [[(String, YAMLNode)]] {
        guard let items = node.sequence else {
            error(node, "\(what) must be a list of column lists, like [[a, b]]")
            return []
        }
        if items.allSatisfy({ $0.sequence == nil }) {
            return [stringList(node, what) ?? []]
        }
        return items.compactMap { stringList($0, "\(what) entry") }
    }

    /// `500ms`, `30s`, `5m`, `1h`, `7d` in seconds.
    func duration(_ node: YAMLNode, _ what: String) -> Double? {
        guard let text = node.scalarText, let seconds = Self.seconds(text) else {
            error(node, "\(what) must be a duration like 500ms, 30s, 5m or 1h, found \(node.kindName)")
            return nil
        }
        return seconds
    }

    package static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)
            guard let value = Double(number), value > 0, value.isFinite,
                  number.allSatisfy({ $0.isNumber || $0 == "." }) else { return nil }
            return value * factor
        }
        return nil
    }
}

/// The recognised entries of a mapping, with their key nodes for locating errors.
struct Fields {
    package let node: YAMLNode
    package var values: [String: YAMLNode] = [:]
    package var keys: [String: YAMLNode] = [:]
    /// Keys filled from a misspelt key (already reported), read only to find further errors.
    var guessed: Set<String> = []

    package init(node: YAMLNode) {
        self.node = node
    }

    package subscript(name: String) -> YAMLNode? { values[name] }
}
