import BatchRunStore
import BatchRunContext
import Foundation

/// Runs a `batch-update`. In the job's context (the default), each batch is read without the
/// write lock, with the `set` expressions evaluated in that read, then saved with the check
/// that every row is still as read; rows changed meanwhile are conflicts resolved by the merge
/// policy (`recompute` evaluates the expressions again inside the save); on PostgreSQL, with
/// nothing committed since the previous batch's save, a batch is read inside its save
/// (`ContextBatches`). `direct: true` runs one set-based UPDATE instead.
package enum BatchUpdateRunner {
    package static func run(_ step: BatchUpdateStep, in environment: StepEnvironment, context: isolated Context) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: .batchUpdate, entity: environment.entity.name)
        do {
            if step.direct {
                try runDirect(step, environment, context, &report)
            } else {
                try runInContext(step, environment, context, &report)
            }
        } catch {
            context.reset()
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepErrors.wrap(error, report: report, prefix: "batch-update \(environment.entity.name)", store: context.store, entity: environment.entity)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        environment.progress(report.rows)
        return report
    }

    private static func runDirect(_ step: BatchUpdateStep, _ environment: StepEnvironment, _ context: isolated Context,
                                  _ report: inout StepReport) throws {
        if environment.isCancelled() { throw StepError.cancelled(report: report) }
        let entity = environment.entity
        // RETURNING the keys: the save names the rows it changed, like every other save.
        let sql = step.sql(for: entity) + " RETURNING " + SQL.quoteList(entity.primaryKey)
        let (_, result) = try context.commit { db, changes in
            try db.forEachRow(try db.prepare(sql), named: environment.params, positional: [], split: entity.primaryKey.count, assigned: []) { key, _ in
                if entity.hasRowidKey, case .integer(let rowid) = key[0] {
                    changes.record(rowid: rowid, entity: entity.name, .updated)
                } else {
                    changes.record(ObjectID(entity: entity.name, key: key), .updated)
                }
                changes.updated += 1
            }
        }
        report.rows.updated = result.updated
        report.batches.committed = 1
    }

    private static func runInContext(_ step: BatchUpdateStep, _ environment: StepEnvironment, _ context: isolated Context,
                                     _ report: inout StepReport) throws {
        context.recomputeRules[environment.entity.name] = RecomputeRule(
            assignments: step.set.map { ($0.column, $0.expression) }, params: environment.params)
        var request = FetchRequest(entity: environment.entity.name, where: step.whereClause, params: environment.params)
        // The rows left to update (after a resumed step's last key), for a progress bar; best
        // effort: a count that fails shows none.
        var left = request
        if case .key(let key)? = environment.resumeAt { left.after = ObjectID(entity: environment.entity.name, key: key) }
        if let estimate = try? context.count(left) { environment.expecting(estimate) }
        request.assigning = step.set.map { ($0.column, $0.expression) }
        try ContextBatches.run(request, in: environment, context: context, report: &report, change: .update) { first, last in
            BulkChange.keyRange(environment.entity, from: first, to: last, params: environment.params) { range in
                step.sql(for: environment.entity) + (step.whereClause == nil ? " WHERE " : " AND ") + range
            }
        }
    }
}
