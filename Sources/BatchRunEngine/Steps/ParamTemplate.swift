import BatchRunStore

/// A step parameter as written: a typed value, or text with `${...}` references resolved at run time.
///
/// `"${stats.average}"` is a single reference and keeps the referenced value's type;
/// `"after ${params.cutoff}"` is text with a reference inside.
package struct ParamTemplate: Sendable, Hashable {
    package enum Reference: Sendable, Hashable, CustomStringConvertible {
        /// `${NAME.COLUMN}`: a column of the first row published by a fetch with `as: NAME`.
        case output(name: String, column: String)
        /// `${env.VAR}`
        case environment(String)
        /// `${params.NAME}`
        case parameter(String)

        package var description: String {
            switch self {
            case .output(let name, let column): return "${\(name).\(column)}"
            case .environment(let name): return "${env.\(name)}"
            case .parameter(let name): return "${params.\(name)}"
            }
        }
    }

    package enum Part: Sendable, Hashable {
        case literal(String)
        case reference(Reference)
    }

    /// Set when the template has no references.
    package var constant: StoreValue?
    package var parts: [Part]

    package init(constant: StoreValue) {
        self.constant = constant
        self.parts = []
    }

    package init(parts: [Part]) {
        self.constant = nil
        self.parts = parts
    }

    package var references: [Reference] {
        parts.compactMap { if case .reference(let reference) = $0 { return reference } else { return nil } }
    }

    /// The value, with each reference looked up by `lookup` (nil when it has no value).
    package func resolve(_ lookup: (Reference) -> StoreValue?) -> StoreValue? {
        if let constant { return constant }
        if parts.count == 1, case .reference(let reference) = parts[0] { return lookup(reference) }
        var text = ""
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .reference(let reference):
                guard let value = lookup(reference) else { return nil }
                text += value.description
            }
        }
        return .text(text)
    }

    /// Splits `${...}` references out of text; returns nil and the bad reference if one is malformed.
    package static func parse(_ text: String) -> Result<ParamTemplate, ParseError> {
        guard text.contains("${") else { return .success(ParamTemplate(constant: .text(text))) }
        var parts: [Part] = []
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            if start.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<start.lowerBound]))) }
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                return .failure(ParseError(message: "'${' without a closing '}'"))
            }
            let inner = String(rest[start.upperBound..<end])
            let pieces = inner.split(separator: ".", maxSplits: 1).map(String.init)
            guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty else {
                return .failure(ParseError(message: "'${\(inner)}' is not a reference; expected ${NAME.COLUMN}, ${env.VAR} or ${params.NAME}"))
            }
            switch pieces[0] {
            case "env": parts.append(.reference(.environment(pieces[1])))
            case "params": parts.append(.reference(.parameter(pieces[1])))
            default: parts.append(.reference(.output(name: pieces[0], column: pieces[1])))
            }
            rest = rest[rest.index(after: end)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        return .success(ParamTemplate(parts: parts))
    }

    package struct ParseError: Error, Sendable {
        package var message: String
    }
}
