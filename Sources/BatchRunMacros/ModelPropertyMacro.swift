import SwiftSyntax
import SwiftSyntaxMacros

/// `@_ModelProperty`, added by `@Model` to each stored property: the property reads and writes
/// its row once the instance is inserted or fetched, and a typed peer (`_name`) before that.
///
/// ```swift
/// var seats: Int = 180
/// // becomes
/// var seats: Int = 180 {
///     @storageRestrictions(initializes: _seats) init(initialValue) { _seats = .some(initialValue) }
///     get { modelBacking.value(of: "seats", in: Self.self, unattached: _seats) }
///     set { modelBacking.setValue(newValue, of: "seats", in: Self.self, unattached: &_seats) }
/// }
/// private var _seats: Optional<Int>                   // `= .some(nil)` for an optional without an initial value
/// ```
public struct ModelPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = try StoredProperty(variable) else { return [] }
        let name = property.name
        return [
            """
            @storageRestrictions(initializes: _\(raw: name))
            init(initialValue) {
                _\(raw: name) = .some(initialValue)
            }
            """,
            """
            get {
                modelBacking.value(of: \(literal: name), in: Self.self, unattached: _\(raw: name))
            }
            """,
            """
            set {
                modelBacking.setValue(newValue, of: \(literal: name), in: Self.self, unattached: &_\(raw: name))
            }
            """,
        ]
    }

    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = try StoredProperty(variable) else { return [] }
        // Before the instance has a row its values are here. Without a default, so that an
        // initializer that forgets a property does not compile; an optional without an initial
        // value starts as nil, a to-many as empty. An initial value reaches it through `init`.
        var initial = ""
        if property.initializer == nil && property.isOptional {
            initial = " = .some(nil)"
        } else if property.initializer == nil && property.isArray {
            initial = " = .some([])"
        }
        return ["private var _\(raw: property.name): Optional<\(property.type)>\(raw: initial)"]
    }
}
