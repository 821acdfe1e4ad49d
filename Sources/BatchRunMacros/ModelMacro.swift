import SwiftSyntax
import SwiftSyntaxMacros

/// `@Model`: a class whose stored properties are the columns of its entity (SwiftData's
/// `@Model`). It adds the schema (`modelSchema`), the backing that ties an instance to its row
/// (`modelBacking`, `init(backing:)`), `@_ModelProperty` on each stored property, and the
/// conformance to `PersistentModel`.
///
/// ```swift
/// @Model final class Airline {
///     @Key var id: Int
///     @Unique var name: String
///     @Relationship(deleteRule: .cascade, inverse: \Flight.airline) var flights: [Flight] = []
///     init(id: Int, name: String) { self.id = id; self.name = name }
/// }
/// ```
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        let name = try className(declaration)
        let properties = try StoredProperty.all(in: declaration.memberBlock.members)
        let keys = properties.filter(\.isKey)
        guard keys.count == 1 else {
            throw ModelMacroError.at(keys.count > 1 ? Syntax(declaration.memberBlock) : Syntax(node),
                                     keys.isEmpty ? "mark the primary key of \(name) with @Key (`@Key var id: Int`)"
                                                  : "\(name) has \(keys.count) @Key properties: a model's key is one property")
        }
        for property in properties where property.isArray && property.relationshipArguments == nil {
            throw ModelMacroError.at(property.type, "`\(property.name)` is a to-many relationship: name its inverse, the to-one that points here (`@Relationship(inverse: \\\(property.type.as(ArrayTypeSyntax.self)?.element.trimmedDescription ?? "Other").\(name.prefix(1).lowercased() + name.dropFirst()))`)")
        }
        var table: ExprSyntax = "nil"
        if let arguments = node.arguments?.as(LabeledExprListSyntax.self) {
            for argument in arguments where argument.label?.text == "table" { table = argument.expression.trimmed }
        }
        let entries = properties.map { property in
            var arguments = ["\"\(property.name)\"", "\\\(name).\(property.name)"]
            if property.isKey { arguments.append("key: true") }
            if property.isUnique { arguments.append("unique: true") }
            if property.isIndexed { arguments.append("index: true") }
            if let value = property.literalDefault { arguments.append("default: \(value)") }
            if let relationship = property.relationshipArguments {
                arguments += relationship.map { $0.trimmedDescription.trimmingSuffix(",") }
            }
            return "        BatchRunModels.ModelProperty(\(arguments.joined(separator: ", "))),"
        }
        let cleared = properties.map { "    _\($0.name) = nil" }.joined(separator: "\n")
        return [
            """
            /// The schema `@Model` read from the declaration: the entity's columns and relationships.
            public static let modelSchema = BatchRunModels.ModelSchema(\(raw: name).self, table: \(table), properties: [
            \(raw: entries.joined(separator: "\n"))
            ])
            """,
            """
            /// What ties this instance to its row once inserted or fetched.
            public private(set) var modelBacking = BatchRunModels.ModelBacking()
            """,
            """
            /// An instance over a row of its context (a fetch, a related object).
            public required init(backing: BatchRunModels.ModelBacking) {
                self.modelBacking = backing
            \(raw: cleared)
            }
            """,
            """
            /// Drops the values the instance held before it had a row (the row holds them now).
            public func clearUnsavedValues() {
            \(raw: cleared)
            }
            """,
        ]
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingAttributesFor member: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AttributeSyntax] {
        guard let variable = member.as(VariableDeclSyntax.self),
              (try? StoredProperty(variable)) != nil else { return [] }
        return ["@_ModelProperty"]
    }

    public static func expansion(of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
                                 providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
                                 in context: some MacroExpansionContext) throws -> [ExtensionDeclSyntax] {
        _ = try className(declaration)
        return [try ExtensionDeclSyntax("extension \(type.trimmed): BatchRunModels.PersistentModel {}")]
    }

    /// The class's name; anything else is refused (a model is a class: its changes are tracked
    /// in the instance, as SwiftData's are).
    static func className(_ declaration: some DeclGroupSyntax) throws -> String {
        guard let type = declaration.as(ClassDeclSyntax.self) else {
            throw ModelMacroError.at(declaration, "@Model applies to a class: a model's changes are tracked in its instance, as SwiftData's")
        }
        if let generics = type.genericParameterClause {
            throw ModelMacroError.at(generics, "a @Model class is not generic: it is one entity")
        }
        return type.name.text
    }
}
