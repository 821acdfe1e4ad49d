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
