import BatchRunFeeds
import BatchRunStore
import Foundation

/// What a confined worker (JOBFILE.md section 15, "A confined worker") lets an item reach
/// besides the folders of its `--root`s: the environment variables `${env.NAME}` may read, the
/// stores it may open, the hosts it may reach, and how long, how many rows and how many bytes it may take. An item that asks for more is invalid when it is
/// loaded, naming what it asked for and the worker option that would allow it.
///
/// ```swift
/// var rules = ConfinedItemRules(queueStore: "postgresql://batch@db/nightly")
/// rules.environment = ["FEED_TOKEN"]          // worker --allow-env FEED_TOKEN
/// rules.environmentRefusal("PGPASSWORD")      // "... start the worker with --allow-env PGPASSWORD ..."
/// ```
package struct ConfinedItemRules: Codable, Sendable, Equatable {
    /// `--allow-env NAME`: the variables `${env.NAME}` may read (in params, headers, hooks).
    package var environment: Set<String> = []
    /// The queue's own database (a PostgreSQL queue's URL), which an item may use as its store.
    package var queueStore: String?
    /// `--allow-store URL`: other stores an item may name.
    package var stores: [String] = []
    /// `--item-role`: the PostgreSQL role items' SQL runs as (nil: the worker's user).
    package var itemRole: String?
    /// `--allow-host`: where feeds and outputs may connect besides public addresses.
    package var network = NetworkRules()
    /// `--max-item-time`, `--max-rows`, `--max-bytes`.
    package var limits = ItemLimits()

    package init(queueStore: String? = nil) {
        self.queueStore = queueStore
    }

    /// Why `${env.NAME}` may not be read, or nil when it may.
    package func environmentRefusal(_ name: String) -> String? {
        if environment.contains(name) { return nil }
        return "${env.\(name)}: this worker lets items read only the environment variables named with --allow-env "
            + (environment.isEmpty ? "(none were)" : "(\(environment.sorted().joined(separator: ", ")))")
            + "; start the worker with --allow-env \(name) to let items read it"
    }

    /// The environment an item sees: the allowed variables of `full`, and nothing else.
    package func itemEnvironment(of full: [String: String]) -> [String: String] {
        full.filter { environment.contains($0.key) }
    }

    /// What an item's shell hooks start with: the allowed variables, and the few a shell needs
    /// (`PATH`, `HOME`, `LANG`, `LC_ALL`, `TZ`), never the worker's credentials.
    package func hookEnvironment(of full: [String: String]) -> [String: String] {
        full.filter { environment.contains($0.key) || Self.shellVariables.contains($0.key) }
    }

    private static let shellVariables: Set<String> = ["PATH", "HOME", "LANG", "LC_ALL", "TZ"]
}
