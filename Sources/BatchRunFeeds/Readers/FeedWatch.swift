import BatchRunStore

/// What a feed's reader asks after each chunk of bytes it reads, so that a cancel or an item's
/// limit stops it within a second even inside a feed that yields no rows (a run of blank lines,
/// a stalled transfer): whether the job was cancelled, and the item's `ItemBudget`.
///
/// ```swift
/// let watch = FeedWatch(isCancelled: { operation.isCancelled }, budget: ItemBudget(ItemLimits(bytes: 1 << 30)))
/// let reader = try CSVReader(path: "data/big.csv", delimiter: UInt8(ascii: ","), displayPath: "data/big.csv", watch: watch)
/// ```
package final class FeedWatch: Sendable {
    package let isCancelled: @Sendable () -> Bool
    package let budget: ItemBudget?

    package init(isCancelled: @escaping @Sendable () -> Bool, budget: ItemBudget?) {
        self.isCancelled = isCancelled
        self.budget = budget
    }

    /// Throws when the job was cancelled, or the item passed a limit with these `bytes` read.
    package func check(readBytes bytes: Int) throws(ByteSourceError) {
        if isCancelled() { throw ByteSourceError(message: "the job was cancelled", cancelled: true) }
        do { try budget?.spend(bytes: bytes) } catch { throw ByteSourceError(message: error.message) }
    }
}

/// A byte source whose every read is checked with a `FeedWatch`.
final class WatchedByteSource: ByteSource {
    private let source: any ByteSource
    private let watch: FeedWatch

    init(_ source: any ByteSource, watch: FeedWatch) {
        self.source = source
        self.watch = watch
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int {
        try watch.check(readBytes: 0)
        let count = try source.read(into: buffer)
        try watch.check(readBytes: count)
        return count
    }

    func skip(to offset: Int64) throws(ByteSourceError) {
        try source.skip(to: offset)
    }
}
