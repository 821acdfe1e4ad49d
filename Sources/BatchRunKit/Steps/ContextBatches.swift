/// The loop behind `delete` and `batch-update`: read a batch of rows in primary-key order in
/// the job's context, change it, save it (trying again from a fresh read when the step allows),
/// forget it, and go on after its last key until no row is left.
enum ContextBatches {
    /// `change` changes the batch's objects and returns the same change as one set-based
    /// statement over the keys from the first object to the last, for a save that finds
    /// nothing committed since the read.
    static func run(_ request: FetchRequest, in environment: StepEnvironment, context: isolated Context,
                    report: inout StepReport, change: ([ManagedObject], ObjectID, ObjectID) -> BulkChange) throws {
        var request = request
        request.limit = environment.batchSize
        if case .key(let key)? = environment.resumeAt {
            request.after = ObjectID(entity: environment.entity.name, key: key)
        }
        while true {
            if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
            var retries = 0, failedSaves = 0
            defer {
                report.retries += retries
                report.batches.rolledBack += failedSaves
            }
            let batch = try environment.withRetries(retried: { retries += 1 }) { () -> (count: Int, last: ObjectID?, result: SaveResult?) in
                context.reset()
                let objects = try context.fetch(request)
                guard let first = objects.first?.objectID, let last = objects.last?.objectID else { return (0, nil, nil) }
                let bulk = change(objects, first, last)
                do {
                    let result = try environment.checkpoint.map { checkpoint in
                        try context.save(bulk: bulk, forgetting: true, checkpoint: checkpoint.at(.key(last.key)))
                    } ?? context.saveAndReset(bulk: bulk)
                    return (objects.count, last, result)
                } catch {
                    failedSaves += 1   // the save's transaction was rolled back
                    throw error
                }
            }
            guard let last = batch.last, let result = batch.result else { break }
            report.add(result, entity: environment.entity)
            environment.progress(report.rows)
            request.after = last
            if batch.count < environment.batchSize { break }
        }
    }
}
