import SwiftSyntax
import SwiftSyntaxMacros

/// `@Key`, `@Unique`, `@Index`, `@Relationship(...)` and `@Transient`: markers `@Model` reads
/// on a property; by themselves they add nothing.
public struct ModelMarkerMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}
