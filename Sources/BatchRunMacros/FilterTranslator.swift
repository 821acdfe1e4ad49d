import SwiftSyntax

/// Turns one expression of a `#Filter` closure into `ModelFilter` calls (each an implicit
/// member: `.and(...)`, `.compare(...)`), the model's type inferred from where it stands.
struct FilterTranslator {
    let parameter: String

    /// `===` and `!==` compare a to-one with a model (models are the same row when they are the same instance).
    static let comparisons = ["==": "equal", "!=": "notEqual", "<": "less", "<=": "lessOrEqual", ">": "greater", ">=": "greaterOrEqual",
                              "===": "equal", "!==": "notEqual"]
    static let flipped = ["==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "===": "===", "!==": "!=="]

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

    /// Through a relationship, `!=` is "not equal": a row whose relationship is nil matches, as
    /// `nil != "UA"` is true in Swift.
    /// Compared with nil through a relationship, a model pointing nowhere is nil too:
    /// `$0.captain?.name == nil` is not "a captain whose name is not nil".
    func compare(_ path: [String], _ operation: String, _ value: ExprSyntax) -> String {
        if path.count > 1 && value.is(NilLiteralExprSyntax.self) && ["==", "!=", "===", "!=="].contains(operation) {
            let hasValue = through(path) { ".notNil(\\.\($0))" }
            return operation.hasPrefix("!") ? hasValue : ".not(\(hasValue))"
        }
        if (operation == "!=" || operation == "!==") && path.count > 1 { return ".not(\(compare(path, "==", value)))" }
        return through(path) { ".compare(\\.\($0), .\(Self.comparisons[operation]!), \(value.trimmedDescription))" }
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

    /// Whether the value side reads the closure's parameter (not a member or label of the same name).
    func mentionsParameter(_ expression: ExprSyntax) -> Bool {
        final class Finder: SyntaxVisitor {
            let parameter: String
            var found = false
            init(_ parameter: String) {
                self.parameter = parameter
                super.init(viewMode: .sourceAccurate)
            }
            override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
                if node.baseName.text == parameter && node.parent?.as(MemberAccessExprSyntax.self)?.declName.id != node.id { found = true }
                return .visitChildren
            }
        }
        let finder = Finder(parameter)
        finder.walk(expression)
        return finder.found
    }
}
