import Foundation
import SwiftSyntax

/// A stored property of a `@Model` class, as its declaration reads: its name, type, initial
/// value and markers. The schema, the accessors and the peer storage are made from it.
struct StoredProperty {
    let name: String
    let type: TypeSyntax
    let initializer: ExprSyntax?
    let isKey: Bool
    let isUnique: Bool
    let isIndexed: Bool
    /// `@Relationship(deleteRule: ..., inverse: ...)`'s arguments, as written.
    let relationshipArguments: LabeledExprListSyntax?

    /// A type written `T?` or `Optional<T>`.
    var isOptional: Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let named = type.as(IdentifierTypeSyntax.self), named.name.text == "Optional" { return true }
        return false
    }

    /// A type written `[T]`: a to-many relationship (a column holds no array).
    var isArray: Bool { type.is(ArrayTypeSyntax.self) }

    /// An initial value the database can hold as the column's default: a literal.
    var literalDefault: ExprSyntax? {
        guard let initializer else { return nil }
        if initializer.is(IntegerLiteralExprSyntax.self) || initializer.is(FloatLiteralExprSyntax.self)
            || initializer.is(BooleanLiteralExprSyntax.self) { return initializer }
        if let string = initializer.as(StringLiteralExprSyntax.self),
           string.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) }) { return initializer }
        if let prefix = initializer.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-",
           prefix.expression.is(IntegerLiteralExprSyntax.self) || prefix.expression.is(FloatLiteralExprSyntax.self) {
            return initializer
        }
        return nil
    }

    /// The stored properties of a declaration's members, in order; a member the schema cannot
    /// take (a `let`, a property without a type, several in one `var`) throws at it.
    /// Computed properties, `static` ones and `@Transient` ones are not stored.
    static func all(in members: MemberBlockItemListSyntax) throws -> [StoredProperty] {
        try members.compactMap { member in
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { return nil }
            return try StoredProperty(variable)
        }
    }

    /// Nil for a declaration that is not a stored property of the row.
    init?(_ variable: VariableDeclSyntax) throws {
        if variable.modifiers.contains(where: { ["static", "class"].contains($0.name.text) }) { return nil }
        if let transient = Self.marker(named: "Transient", in: variable.attributes) {
            if variable.bindings.contains(where: { $0.initializer == nil && $0.accessorBlock == nil }) {
                throw ModelMacroError.at(transient, "give a @Transient property an initial value: an instance read from its row has nothing else to give it")
            }
            return nil
        }
        if let modifier = variable.modifiers.first(where: { ["lazy", "weak", "unowned"].contains($0.name.text) }) {
            throw ModelMacroError.at(modifier, "a @Model property is not `\(modifier.name.text)`: its value lives in its row (mark it @Transient to keep it out)")
        }
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription.split(separator: ".").last.map(String.init) ?? ""
            if !Self.markers.contains(name) {
                throw ModelMacroError.at(attribute, "a @Model property takes @Key, @Unique, @Index, @Relationship or @Transient, not @\(name) (a property wrapper or macro of its own would hide its row)")
            }
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first else {
            throw ModelMacroError.at(variable, "declare one property per `var` in a @Model class")
        }
        if let accessors = binding.accessorBlock {
            if case .accessors(let list) = accessors.accessors,
               list.allSatisfy({ ["willSet", "didSet"].contains($0.accessorSpecifier.text) }) {
                throw ModelMacroError.at(accessors, "a @Model property has no willSet or didSet: its value lives in its row")
            }
            return nil   // computed
        }
        guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
            throw ModelMacroError.at(binding.pattern, "a @Model property is a plain name")
        }
        guard variable.bindingSpecifier.text == "var" else {
            throw ModelMacroError.at(variable.bindingSpecifier, "a @Model property is a `var`: it is read from and written to its row (mark it @Transient to keep it out)")
        }
        guard let type = binding.typeAnnotation?.type else {
            throw ModelMacroError.at(binding.pattern, "give `\(identifier.identifier.text)` its type (`var \(identifier.identifier.text): Int = ...`): the column's type is read from it")
        }
        if type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            throw ModelMacroError.at(type, "write `\(identifier.identifier.text)` as an optional (`?`), not `!`")
        }
        if Self.isArrayLike(type) && !type.is(ArrayTypeSyntax.self) {
            throw ModelMacroError.at(type, "write a to-many relationship as `[Model]`, never nil (empty when nothing points here)")
        }
        name = identifier.identifier.text.trimmingCharacters(in: ["`"])
        self.type = type.trimmed
        initializer = binding.initializer?.value.trimmed
        isKey = Self.marker(named: "Key", in: variable.attributes) != nil
        isUnique = Self.marker(named: "Unique", in: variable.attributes) != nil
        isIndexed = Self.marker(named: "Index", in: variable.attributes) != nil
        let relationship = Self.marker(named: "Relationship", in: variable.attributes)
        relationshipArguments = relationship?.arguments?.as(LabeledExprListSyntax.self)
        if let relationship, !type.is(ArrayTypeSyntax.self) {
            throw ModelMacroError.at(relationship, "declare @Relationship on the to-many (`[Model]`), with its inverse, the to-one that points here")
        }
        if type.is(ArrayTypeSyntax.self), isKey || isUnique || isIndexed {
            throw ModelMacroError.at(variable.attributes, "a to-many relationship is no column: it takes no @Key, @Unique or @Index")
        }
    }

    /// The markers `@Model` reads, and the property macro it adds.
    static let markers: Set<String> = ["Key", "Unique", "Index", "Relationship", "Transient", "_ModelProperty"]

    /// `[T]?`, `Optional<[T]>`, `Array<T>`: spellings of an array a to-many does not take.
    static func isArrayLike(_ type: TypeSyntax) -> Bool {
        if type.is(ArrayTypeSyntax.self) { return true }
        if let optional = type.as(OptionalTypeSyntax.self) { return isArrayLike(optional.wrappedType) }
        if let named = type.as(IdentifierTypeSyntax.self) {
            if named.name.text == "Array" { return true }
            if named.name.text == "Optional", let argument = named.genericArgumentClause?.arguments.first?.argument.as(TypeSyntax.self) {
                return isArrayLike(argument)
            }
        }
        return false
    }

    static func marker(named name: String, in attributes: AttributeListSyntax) -> AttributeSyntax? {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let written = attribute.attributeName.trimmedDescription
            if written == name || written == "BatchRunModels.\(name)" || written == "BatchRunKit.\(name)" { return attribute }
        }
        return nil
    }
}
