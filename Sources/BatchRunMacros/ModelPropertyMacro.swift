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
/// private var _seats: Optional<Int> = .some(180)      // `= nil` for a property without a value yet
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
        // Before the instance has a row its values are here: nil for one not given yet (an
        // optional's nil is `.some(nil)`, an array's default is empty).
        var initial = " = nil"
        if let value = property.initializer {
            initial = " = .some(\(value))"
        } else if property.isOptional {
            initial = " = .some(nil)"
        } else if property.isArray {
            initial = " = .some([])"
        }
        return ["private var _\(raw: property.name): Optional<\(property.type)>\(raw: initial)"]
    }
}
