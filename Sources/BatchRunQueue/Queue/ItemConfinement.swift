import BatchRunStore
import BatchRunEngine
import Foundation

/// What a worker lets its items touch (JOBFILE.md section 15): the folders their feeds, outputs
/// and SQLite stores must lie in (`--root`), whether their shell hooks run, and, for a confined
/// worker, the rest of what it lets a stranger's item reach (`ConfinedItemRules`). A folder queue
/// trusts whoever may write its folder: no roots unless given, hooks run unless `--no-hooks`. A
/// PostgreSQL queue takes items from anyone who may insert into its table: its worker needs
/// `--root` or `--trust-submitters`, and runs hooks only with `--allow-hooks`. A worker given
/// `--root`, or a PostgreSQL queue's worker without `--trust-submitters`, is confined: it runs
/// hooks only with `--allow-hooks` too (a hook has the worker's user's rights).
///
/// An item that breaks it fails as invalid when it is loaded, naming the path, variable, store or
/// hook, before anything runs; each file is checked again as it is opened (`PathConfinement`).
///
/// ```swift
/// var allowed = ConfinedItemRules()
/// allowed.environment = ["FEED_TOKEN"]
/// let confinement = try ItemConfinement(queue: QueueLocation("postgresql://batch@db/nightly"), roots: ["/srv/nightly"],
///                                       allowHooks: false, noHooks: false, trustSubmitters: false, allowed: allowed)
/// ```
package struct ItemConfinement: Sendable, Codable {
    /// The folders items may touch; nil: whatever the worker's user may.
    package var paths: PathConfinement?
    /// Why items' shell hooks are not run; nil when they are.
    package var hookRefusal: String?
    /// What a confined worker lets items reach besides their folders; nil: a trusting worker.
    package var rules: ConfinedItemRules?

    /// Everything allowed: a folder queue's worker without `--root` or `--no-hooks`.
    package init() {}

    /// A worker's, from its options (`allowed`: its `--allow-*` and `--max-*`);
    /// throws (the worker does not start) when a PostgreSQL queue's worker has neither `--root`
    /// nor `--trust-submitters`, when both hook options are given, when a root is not a folder,
    /// or when `allowed` says something to a worker that is not confined.
    package init(queue: QueueLocation, roots: [String], allowHooks: Bool, noHooks: Bool, trustSubmitters: Bool,
                 allowed: ConfinedItemRules = ConfinedItemRules()) throws(ItemConfinementError) {
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
        let confined = !roots.isEmpty || (isDatabase && !trustSubmitters)
        if noHooks {
            hookRefusal = "this worker runs no shell hooks (it was started with --no-hooks)"
        } else if isDatabase && !allowHooks {
            hookRefusal = "this worker runs no shell hooks: a PostgreSQL queue's worker runs them only when started with --allow-hooks"
        } else if confined && !allowHooks {
            // A hook is a shell with the worker's user's rights: it could read that user's
            // credentials (~/.pgpass, /proc/PID/environ) whatever its own environment holds.
            hookRefusal = "this worker runs no shell hooks: a worker with --root runs them only when started with --allow-hooks"
        }
        if confined {
            var rules = allowed
            if case .database(let url) = queue { rules.queueStore = url }
            self.rules = rules
        } else if allowed != ConfinedItemRules() {
            throw ItemConfinementError("--allow-env, --allow-store, --allow-host, --item-role and the --max-* limits are for a confined "
                                       + "worker (one given --root, or a PostgreSQL queue's worker without --trust-submitters); "
                                       + "this one lets items do what its user may")
        }
    }

    /// Applies it to a loader of items.
    package func apply(to loader: inout JobFileLoader) {
        loader.confinement = paths
        loader.hookRefusal = hookRefusal
        loader.rules = rules
    }

    private enum CodingKeys: String, CodingKey {
        case roots, hookRefusal, rules
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let roots = try container.decodeIfPresent([String].self, forKey: .roots) { paths = try PathConfinement(roots: roots) }
        hookRefusal = try container.decodeIfPresent(String.self, forKey: .hookRefusal)
        rules = try container.decodeIfPresent(ConfinedItemRules.self, forKey: .rules)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(paths?.roots, forKey: .roots)
        try container.encodeIfPresent(hookRefusal, forKey: .hookRefusal)
        try container.encodeIfPresent(rules, forKey: .rules)
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
