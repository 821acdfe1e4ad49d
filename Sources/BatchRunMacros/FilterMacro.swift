import SwiftOperators
import SwiftSyntax
import SwiftSyntaxMacros

/// `#Filter`: a closure over a model, checked by the compiler as Swift (`(Flight) -> Bool`),
/// rewritten into the `ModelFilter` that renders it as SQL (SwiftData's `#Predicate`).
///
/// ```swift
/// #Filter<Flight> { $0.delay! > 10 && $0.airline?.name == "UA" }
/// // becomes
/// ModelFilter<Flight>.and(.compare(\.delay, .greater, 10), .through(\.airline, .compare(\.name, .equal, "UA")))
/// ```
///
/// It takes comparisons of a property with a value (`==`, `!=`, `<`, `<=`, `>`, `>=`; `== nil`),
/// `&&`, `||`, `!`, a `Bool` property alone, `property.like("BA%")`, `values.contains(property)`,
/// and properties of a to-one relationship (`$0.airline?.name`, `$0.airline!.name`). `delay!`
/// reads an optional property: the rows where it is NULL do not match.
public struct FilterMacro: ExpressionMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax,
                                 in context: some MacroExpansionContext) throws -> ExprSyntax {
        guard let closure = node.trailingClosure ?? node.arguments.first?.expression.as(ClosureExprSyntax.self) else {
            throw ModelMacroError.at(node, "#Filter takes a closure over the model: #Filter<Flight> { $0.delay! > 10 }")
        }
        var parameter = "$0"
        if let signature = closure.signature {
            switch signature.parameterClause {
            case .simpleInput(let names):
                if let first = names.first { parameter = first.name.text }
            case .parameterClause(let clause):
                if let first = clause.parameters.first { parameter = (first.secondName ?? first.firstName).text }
            case nil:
                break
            }
        }
        guard closure.statements.count == 1, let item = closure.statements.first else {
            throw ModelMacroError.at(closure, "#Filter's closure is one expression")
        }
        var body: ExprSyntax
        if let expression = item.item.as(ExprSyntax.self) {
            body = expression
        } else if let returned = item.item.as(ReturnStmtSyntax.self), let expression = returned.expression {
            body = expression
        } else {
            throw ModelMacroError.at(item, "#Filter's closure is one expression")
        }
        body = try OperatorTable.standardOperators.foldAll(body).as(ExprSyntax.self) ?? body
        let type = node.genericArgumentClause.map { "ModelFilter<\($0.arguments.trimmedDescription)>" } ?? "ModelFilter"
        let translator = FilterTranslator(parameter: parameter)
        return "\(raw: type)\(raw: try translator.filter(body))"
    }
}

/// Turns one expression of a `#Filter` closure into `ModelFilter` calls (each an implicit
/// member: `.and(...)`, `.compare(...)`), the model's type inferred from where it stands.
struct FilterTranslator {
    let parameter: String

    static let comparisons = ["==": "equal", "!=": "notEqual", "<": "less", "<=": "lessOrEqual", ">": "greater", ">=": "greaterOrEqual"]
    static let flipped = ["==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="]

    func filter(_ expression: ExprSyntax) throws -> String {
        if let tuple = expression.as(TupleExprSyntax.self), tuple.elements.count == 1, let inner = tuple.elements.first {
            return try filter(inner.expression)
        }
        if let infix = expression.as(InfixOperatorExprSyntax.self),
           let operation = infix.operator.as(BinaryOperatorExprSyntax.self)?.operator.text {
            switch operation {
            case "&&": return ".and(\(try filter(infix.leftOperand)), \(try filter(infix.rightOperand)))"
            case "||": return ".or(\(try filter(infix.leftOperand)), \(try filter(infix.rightOperand)))"
            default:
                guard Self.comparisons[operation] != nil else { break }
                if let path = path(infix.leftOperand), !mentionsParameter(infix.rightOperand) {
                    return compare(path, operation, infix.rightOperand)
                }
                if let path = path(infix.rightOperand), !mentionsParameter(infix.leftOperand) {
                    return compare(path, Self.flipped[operation]!, infix.leftOperand)
                }
                throw ModelMacroError.at(expression, "#Filter compares a property of the model with a value: `$0.seats > 100`, not `\(expression.trimmedDescription)`")
            }
        }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "!" {
            return ".not(\(try filter(prefix.expression)))"
        }
        if let call = expression.as(FunctionCallExprSyntax.self), let member = call.calledExpression.as(MemberAccessExprSyntax.self),
           call.arguments.count == 1, let argument = call.arguments.first?.expression, let base = member.base {
            if member.declName.baseName.text == "like", let path = path(base), !mentionsParameter(argument) {
                return through(path) { ".like(\\.\($0), \(argument.trimmedDescription))" }
            }
            if member.declName.baseName.text == "contains", let path = path(argument), !mentionsParameter(base) {
                return through(path) { ".isIn(\\.\($0), \(base.trimmedDescription))" }
            }
        }
        if let path = path(expression) {
            return through(path) { ".compare(\\.\($0), .equal, true)" }
        }
        throw ModelMacroError.at(expression, "#Filter cannot turn `\(expression.trimmedDescription)` into SQL: compare properties with values (==, !=, <, <=, >, >=), combine with &&, || and !, or use property.like(\"A%\") and [values].contains(property)")
    }

    func compare(_ path: [String], _ operation: String, _ value: ExprSyntax) -> String {
        through(path) { ".compare(\\.\($0), .\(Self.comparisons[operation]!), \(value.trimmedDescription))" }
    }

    /// The condition on the path's last property, inside a `.through` for each relationship before it.
    func through(_ path: [String], _ condition: (String) -> String) -> String {
        var result = condition(path[path.count - 1])
        for relationship in path.dropLast().reversed() {
            result = ".through(\\.\(relationship), \(result))"
        }
        return result
    }

    /// The property names of `$0.a?.b!.c` (["a", "b", "c"]); nil for anything not rooted at the closure's parameter.
    func path(_ expression: ExprSyntax) -> [String]? {
        if let unwrapped = expression.as(ForceUnwrapExprSyntax.self) { return path(unwrapped.expression) }
        if let chained = expression.as(OptionalChainingExprSyntax.self) { return path(chained.expression) }
        guard let member = expression.as(MemberAccessExprSyntax.self), let base = member.base else { return nil }
        let name = member.declName.baseName.text
        if let root = base.as(DeclReferenceExprSyntax.self), root.baseName.text == parameter { return [name] }
        guard let before = path(base) else { return nil }
        return before + [name]
    }

    func mentionsParameter(_ expression: ExprSyntax) -> Bool {
        expression.tokens(viewMode: .sourceAccurate).contains { $0.text == parameter }
    }
}
