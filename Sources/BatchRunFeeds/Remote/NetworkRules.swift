/// Where a confined worker's items may connect (JOBFILE.md section 15, "Network"): public
/// addresses, and the hosts named with `worker --allow-host HOST[:PORT]`. A request's host is
/// resolved here and the request then connects to the very address that was checked (the
/// HTTP client is pinned to it), so a name that resolves anew between the check and the
/// connection (DNS rebinding) cannot slip past; every redirect is checked the same way.
///
/// ```swift
/// let rules = NetworkRules(allowedHosts: [AllowedHost(parsing: "minio.internal:9000")!])
/// try rules.address(for: "169.254.169.254", port: 80)   // throws: "... a link-local address ..."
/// ```
package struct NetworkRules: Sendable, Hashable, Codable {
    /// `--allow-host`: hosts items may reach whatever their addresses.
    package var allowedHosts: [AllowedHost] = []

    package init(allowedHosts: [AllowedHost] = []) {
        self.allowedHosts = allowedHosts
    }

    /// The address a request to `host`:`port` connects to: the first it resolves to that is
    /// public or allowed. Throws, naming the address and the option that would allow it, when
    /// there is none.
    package func address(for host: String, port: Int) throws(ByteSourceError) -> NetworkAddress {
        let addresses = NetworkAddress.resolve(host)
        guard let first = addresses.first else {
            throw ByteSourceError(message: "\(host) resolves to no address (a name the DNS does not know?)")
        }
        if let allowed = addresses.first(where: { isAllowed(name: host, address: $0, port: port) }) { return allowed }
        throw ByteSourceError(message: refusal(name: host, address: first, port: port))
    }

    /// Why `host`:`port` may not be reached, or nil when it may or does not resolve now (the
    /// request says so when it is made): what an item's check asks before anything runs.
    package func refusal(host: String, port: Int) -> String? {
        let addresses = NetworkAddress.resolve(host)
        guard let first = addresses.first, !addresses.contains(where: { isAllowed(name: host, address: $0, port: port) }) else {
            return nil
        }
        return refusal(name: host, address: first, port: port)
    }

    private func isAllowed(name: String, address: NetworkAddress, port: Int) -> Bool {
        address.privateKind == nil || allowedHosts.contains { $0.allows(name: name, address: address, port: port) }
    }

    private func refusal(name: String, address: NetworkAddress, port: Int) -> String {
        let kind = address.privateKind ?? "refused"
        let shownName = name.contains(":") ? "[\(name)]" : name
        let option = AllowedHost(parsing: "\(shownName):\(port)")?.description ?? shownName
        let named = allowedHosts.isEmpty ? "none were" : allowedHosts.map(\.description).joined(separator: ", ")
        let article = kind.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        let what = NetworkAddress(numeric: name) == nil ? "\(shownName) is \(address), \(article) \(kind) address"
            : "\(shownName) is \(article) \(kind) address"
        return "\(what): this worker's items reach only public addresses and the hosts "
            + "named with --allow-host (\(named)); start the worker with --allow-host \(option) to let items reach it"
    }
}
