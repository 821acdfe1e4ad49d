import BatchRunKit

/// `--fence ITEM:TOKEN:LEASE:QUEUE-URL`: how a PostgreSQL queue's worker hands an item's fence
/// to the child process that runs it.
extension QueueFence {
    init?(argument text: String) {
        let parts = text.split(separator: ":", maxSplits: 3)
        guard parts.count == 4, let item = Int64(parts[0]), let token = Int64(parts[1]), let lease = Double(parts[2]), lease > 0
        else { return nil }
        self.init(item: item, token: token, lease: lease, queue: String(parts[3]))
    }

    var argument: String { "\(item):\(token):\(lease):\(queue)" }
}
