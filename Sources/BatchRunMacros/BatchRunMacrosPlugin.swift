import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin behind BatchRunModels' macros: `@Model` and the property macro it adds,
/// the markers (`@Key`, `@Unique`, `@Index`, `@Relationship`, `@Transient`) and `#Filter`.
@main
struct BatchRunMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ModelMacro.self, ModelPropertyMacro.self, ModelMarkerMacro.self, FilterMacro.self]
}
