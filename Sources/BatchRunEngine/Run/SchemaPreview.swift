import BatchRunStore
import BatchRunContext
import Foundation

/// The schema changes running a job file would make to its store, made by nothing: what
/// `batchrun check` and `batchrun plan` show (JOBFILE.md section 13).
///
/// ```swift
/// let preview = SchemaPreview(of: file)
/// for line in preview.lines { print(line) }   // "  schema: Person: add column score real default 1.5"
/// ```
package enum SchemaPreview: Sendable {
    /// The store does not exist yet (an SQLite file not made): a run creates every table.
    case newStore
    /// The changes a run would make (none: the store holds the file's entities).
    case changes([SchemaChange], refused: Bool)
    /// Changes that could not be made, at their columns: a run would stop with exit status 2.
    case refusal(JobFileError)
    /// The store could not be reached; why.
    case unavailable(String)

    /// Looks at `file`'s store without changing it (an SQLite file is not created).
    package init(of file: JobFile, allowingSchemaChanges: Bool = true) {
        if !file.store.isOnServer && !FileManager.default.fileExists(atPath: file.store.path) {
            self = .newStore
            return
        }
        do {
            let store = try Store(file.store, model: file.model, fence: nil, migrating: false)
            self = .changes(try store.previewSchemaChanges(for: file.model), refused: !allowingSchemaChanges || file.refusesSchemaChanges)
        } catch let refusals as SchemaRefusals {
            self = .refusal(refusals.located(in: file))
        } catch {
            self = .unavailable("\(error)")
        }
    }

    /// True when a run would stop on the schema with exit status 2.
    package var stopsRun: Bool {
        switch self {
        case .refusal: true
        case .changes(let changes, let refused): refused && !changes.isEmpty
        case .newStore, .unavailable: false
        }
    }

    /// The preview as indented lines (none when there is nothing to say).
    package var lines: [String] {
        switch self {
        case .newStore:
            return []
        case .changes(let changes, let refused):
            if changes.isEmpty { return [] }
            return [refused ? "  schema changes needed, refused by --no-schema-changes or schema_changes: refuse (a run stops with exit 2):"
                            : "  schema changes a run would make:"]
                + changes.map { "    \($0.entity): \($0.summary(made: false))" }
        case .refusal(let error):
            return ["  schema: a run would stop (exit 2), changing nothing:"] + error.rendered.split(separator: "\n").map { "    " + $0 }
        case .unavailable(let reason):
            return ["  schema changes were not checked: \(reason)"]
        }
    }
}
