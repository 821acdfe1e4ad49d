import BatchRunEngine
import BatchRunFeeds
import BatchRunStore
import Foundation

extension ConfinedItemRules {
    /// The rules `worker`'s `--allow-*`, `--item-role` and `--max-*` options give, each value
    /// checked: throws naming the option and the value it could not read.
    ///
    /// ```swift
    /// let rules = try ConfinedItemRules(allowEnv: ["FEED_TOKEN"], allowHosts: ["minio.internal:9000"], maxRows: 1_000_000)
    /// ```
    package init(allowEnv: [String] = [], allowStores: [String] = [], itemRole: String? = nil, allowHosts: [String] = [],
                 maxItemTime: String? = nil, maxRows: Int64? = nil, maxBytes: String? = nil) throws(ItemConfinementError) {
        self.init()
        for name in allowEnv where !JobFileLoader.isEnvironmentName(name) {
            throw ItemConfinementError("--allow-env takes a variable's name (letters, digits, _), found '\(name)'")
        }
        environment = Set(allowEnv)
        stores = allowStores.map { StoreSpec(location: $0).isOnServer ? $0 : URL(fileURLWithPath: $0).standardizedFileURL.path }
        if let itemRole, itemRole.isEmpty || ["none", "public", "current_user", "session_user"].contains(itemRole.lowercased()) {
            throw ItemConfinementError("--item-role takes the name of a role items run as, found '\(itemRole)'")
        }
        self.itemRole = itemRole
        var hosts: [AllowedHost] = []
        for text in allowHosts {
            guard let host = AllowedHost(parsing: text) else {
                throw ItemConfinementError("--allow-host takes HOST, HOST:PORT or [IPV6]:PORT, found '\(text)'")
            }
            hosts.append(host)
        }
        network = NetworkRules(allowedHosts: hosts)
        let seconds = maxItemTime.flatMap(JobFileLoader.seconds)
        if let maxItemTime, seconds.map({ $0 > 0 }) != true {
            throw ItemConfinementError("--max-item-time must be a duration like 90s or 10m, found '\(maxItemTime)'")
        }
        if let maxRows, maxRows < 1 { throw ItemConfinementError("--max-rows must be at least 1") }
        let bytes = maxBytes.flatMap(ByteCount.parse)
        if let maxBytes, bytes == nil {
            throw ItemConfinementError("--max-bytes must be a size like 500MB, 2GiB or 1048576, found '\(maxBytes)'")
        }
        limits = ItemLimits(seconds: seconds, rows: maxRows, bytes: bytes)
    }
}
