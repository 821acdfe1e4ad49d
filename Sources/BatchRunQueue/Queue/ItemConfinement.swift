import BatchRunStore
import BatchRunEngine
import Foundation

/// What a worker lets its items touch (JOBFILE.md section 15): the folders their feeds, outputs
/// and SQLite stores must lie in (`--root`), and whether their shell hooks run. A folder queue
/// trusts whoever may write its folder: no roots unless given, hooks run unless `--no-hooks`. A
/// PostgreSQL queue takes items from anyone who may insert into its table: its worker needs
/// `--root` or `--trust-submitters`, and runs hooks only with `--allow-hooks`.
///
/// An item that breaks it fails as invalid when it is loaded, naming the path or the hook,
/// before anything runs; each file is checked again as it is opened (`PathConfinement`).
///
/// ```swift
/// let confinement = try ItemConfinement(queue: QueueLocation("postgresql://batch@db/nightly"),
///                                       roots: ["/srv/nightly"], allowHooks: false, noHooks: false, trustSubmitters: false)
/// ```
package struct ItemConfinement: Sendable {
    /// The folders items may touch; nil: whatever the worker's user may.
    package var paths: PathConfinement?
    /// Why items' shell hooks are not run; nil when they are.
    package var hookRefusal: String?

    /// Everything allowed: a folder queue's worker without `--root` or `--no-hooks`.
    package init() {}

    /// A worker's, from its options; throws (the worker does not start) when a PostgreSQL
    /// queue's worker has neither `--root` nor `--trust-submitters`, when both hook options are
    /// given, or when a root is not a folder.
    package init(queue: QueueLocation, roots: [String], allowHooks: Bool, noHooks: Bool, trustSubmitters: Bool)
        throws(ItemConfinementError) {
        if allowHooks && noHooks { throw ItemConfinementError("--allow-hooks and --no-hooks cannot be used together") }
        let isDatabase = if case .database = queue { true } else { false }
        if isDatabase && roots.isEmpty && !trustSubmitters {
            throw ItemConfinementError("a PostgreSQL queue runs items from anyone who may insert into _batchrun_queue: give --root DIR "
                                       + "(repeatable: the folders its items' feeds, outputs and SQLite stores may lie in) or, when "
                                       + "every submitter may do what this worker's user may, --trust-submitters (docs/postgresql.md)")
        }
        if !roots.isEmpty {
            do {
                paths = try PathConfinement(roots: roots)
            } catch {
                throw ItemConfinementError("--root \(error)")
            }
        }
        if noHooks {
            hookRefusal = "this worker runs no shell hooks (it was started with --no-hooks)"
        } else if isDatabase && !allowHooks {
            hookRefusal = "this worker runs no shell hooks: a PostgreSQL queue's worker runs them only when started with --allow-hooks"
        }
    }

    /// Applies it to a loader of items.
    package func apply(to loader: inout JobFileLoader) {
        loader.confinement = paths
        loader.hookRefusal = hookRefusal
    }

    /// The same, as `batchrun run` options for a child process that runs an item.
    package var runArguments: [String] {
        (paths?.roots ?? []).flatMap { ["--root", $0] } + (hookRefusal.map { ["--refuse-hooks", $0] } ?? [])
    }
}

/// Why a worker does not start: its confinement options do not hold together.
package struct ItemConfinementError: BatchRunError {
    package let description: String

    package var code: String { "worker.invalid-options" }
    package var message: String { description }
    package var isInvalid: Bool { true }

    package init(_ description: String) {
        self.description = description
    }
}
