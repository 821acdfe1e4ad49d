import BatchRunStore

/// A fetch request's results kept live (Core Data's `NSFetchedResultsController`, SwiftData's
/// `@Query`, GRDB's `ValueObservation`): an `AsyncSequence` of `ResultsSnapshot`s, the first
/// with the results as they are (every object inserted), then one after each save that changed
/// them, with what changed (`ResultsChange`). Made by `MainContext.results(for:)` and
/// `Context.results(for:)` (or `results(for:as:)`, of typed records).
///
/// Each iteration observes on its own: it reads and diffs off every context's isolation, and
/// re-reads only the rows a save inserted or updated. It stops when its task is cancelled or
/// its iterator dropped (leaving the loop), and stops observing the store then.
///
/// ```swift
/// var request = FetchRequest(entity: "Session", where: "status = 'open'")
/// request.sortedBy = [.descending("minutes")]
/// for try await results in main.results(for: request) {
///     print(results.items.count, results.change.inserted, results.change.moves)
/// }
/// ```
public struct LiveResults<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = ResultsSnapshot<Item>

    package let store: Store
    package let request: FetchRequest
    package let sectionedBy: String?
    /// Makes the items' maker for the request's entity (checking it fits, for records).
    let itemMaker: ItemMaker
    typealias ItemMaker = @Sendable (Entity) throws -> ([StoreValue]) throws -> Item
    /// Waits until the context the results belong to has merged a save (the main context's).
    let caughtUp: (@Sendable (UInt64) async -> Void)?

    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
        let observation = Task.detached { [self] in await observe(into: continuation) }
        continuation.onTermination = { _ in observation.cancel() }
        return AsyncIterator(base: stream.makeAsyncIterator(), observation: ObservingTask(task: observation))
    }

    /// Yields the first snapshot, then one after each save that changed the results, until
    /// the task is cancelled.
    private func observe(into continuation: AsyncThrowingStream<Element, any Error>.Continuation) async {
        let saves = store.didSaves()   // before the first read: no save falls between
        do {
            let state = try LiveResultsState(store: store, request: request, sectionedBy: sectionedBy, itemMaker: itemMaker)
            // The last two snapshots yielded stay held here, so that a consumer dropping the one
            // before (60,000 rows, most shared with the next) only decrements it: the rows no
            // snapshot keeps any more are freed in this task, off the consumer's actor.
            var held: [ResultsSnapshot<Item>] = [try await state.start()]
            continuation.yield(held[0])
            for await save in saves {
                if Task.isCancelled { break }
                guard let snapshot = try await state.apply(save) else { continue }
                await caughtUp?(save.sequence)
                continuation.yield(snapshot)
                held.append(snapshot)
                if held.count > 2 { held.removeFirst() }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        package var base: AsyncThrowingStream<Element, any Error>.Iterator
        let observation: ObservingTask

        public mutating func next() async throws -> Element? { try await base.next() }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Element? {
            try await base.next(isolation: actor)
        }
    }

    /// Cancels the observation when the last iterator holding it goes.
    final class ObservingTask: Sendable {
        package let task: Task<Void, Never>
        package init(task: Task<Void, Never>) { self.task = task }
        deinit { task.cancel() }
    }
}

extension LiveResults where Item == ResultRow {
    /// Live results of rows (`ResultRow`s with every column of the entity).
    package static func rows(store: Store, request: FetchRequest, sectionedBy: String?,
                     caughtUp: (@Sendable (UInt64) async -> Void)?) -> LiveResults<ResultRow> {
        LiveResults(store: store, request: request, sectionedBy: sectionedBy,
                    itemMaker: { entity in
                        let columns = entity.columnNames
                        return { values in ResultRow(columns: columns, values: values) }
                    }, caughtUp: caughtUp)
    }
}

extension LiveResults where Item: Record {
    /// Live results of typed records (the request must be of the record's entity).
    package static func records(store: Store, request: FetchRequest, sectionedBy: String?,
                        caughtUp: (@Sendable (UInt64) async -> Void)?) -> LiveResults<Item> {
        LiveResults(store: store, request: request, sectionedBy: sectionedBy, itemMaker: { entity in
            try ContextCore.check(request, of: Item.self, entity: entity)
            return { values in try RecordDecoder.record(Item.self, from: values, entity: entity) }
        }, caughtUp: caughtUp)
    }
}
