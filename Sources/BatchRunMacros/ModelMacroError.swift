import SwiftDiagnostics
import SwiftSyntax

/// What a macro says when it cannot expand: the declaration it points at and why, as a
/// compiler error there.
struct ModelMacroError: Error, DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "BatchRunMacros", id: "refused") }
    var severity: DiagnosticSeverity { .error }

    /// The error as a diagnostic at `node`.
    static func at(_ node: some SyntaxProtocol, _ message: String) -> DiagnosticsError {
        DiagnosticsError(diagnostics: [Diagnostic(node: Syntax(node), message: ModelMacroError(message: message))])
    }
}
