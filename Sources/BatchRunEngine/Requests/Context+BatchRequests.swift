import BatchRunContext
import BatchRunStore

/// Batch requests run in a context, as Core Data's `execute(_:)` runs `NSBatchInsertRequest`,
/// `NSBatchUpdateRequest` and `NSBatchDeleteRequest`: by the same runners as a job file's
/// `insert`, `batch-update` and `delete` steps, every batch through the context's one save path,
/// conflicts resolved by its merge policy. The context's changes are reset after each.
///
/// ```swift
/// let context = Context(store: store, name: "cleanup", mergePolicy: .storeTrump)
/// let result = try await context.perform { try $0.execute(BatchDeleteRequest(entity: "Session", where: "minutes = 0")) }
/// ```
extension Context {
    /// Runs a batch update; throws `MergeConflictError` under `.error`, `ContextError` for an
    /// unknown entity, `CancellationError` after `interrupt()`. What committed before a failure stays.
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        var step = BatchUpdateStep(entity: request.entity, whereClause: request.whereClause, set: request.assignments)
        step.batchSize = request.batchSize
        return try running(entity: request.entity, params: request.params, batchSize: request.batchSize) { environment, context in
            try BatchUpdateRunner.run(step, in: environment, context: context)
        }
    }

    /// Runs a batch delete; throws as `execute(_: BatchUpdateRequest)` does.
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        let step = DeleteStep(entity: request.entity, whereClause: request.whereClause)
        return try running(entity: request.entity, params: request.params, batchSize: request.batchSize) { environment, context in
            try DeleteRunner.run(step, in: environment, context: context)
        }
    }

    /// Runs a batch insert (a hot swap with `replacingAll`); throws as `execute(_: BatchUpdateRequest)` does.
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        var step = InsertStep(entity: request.entity, source: .rows(request.rows.map { row in
            row.sorted { $0.key < $1.key }.map { (field: $0.key, value: $0.value) }
        }))
        step.replace = request.replacingAll
        return try running(entity: request.entity, params: [:], batchSize: request.batchSize) { environment, context in
            try InsertRunner.run(step, in: environment, context: context)
        }
    }

    /// Runs a step's runner on this context with an environment made from the request, and
    /// throws what stopped it as the library's own errors.
    private func running(entity name: String, params: [String: StoreValue], batchSize: Int,
                         _ body: (StepEnvironment, isolated Context) throws -> StepReport) throws -> BatchResult {
        guard let entity = store.model[name] else { throw ContextError.unknownEntity(name) }
        let interrupted = interrupter
        let environment = StepEnvironment(job: self.name, entity: entity, params: params, batchSize: max(1, batchSize),
                                          mergePolicy: mergePolicy, isCancelled: { interrupted.isRequested })
        do {
            defer { reset() }
            return BatchResult(try body(environment, self))
        } catch let error as StepError {
            if error.kind == .cancelled { throw CancellationError() }
            throw error.cause ?? error
        }
    }
}
