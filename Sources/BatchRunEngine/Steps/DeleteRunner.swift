import BatchRunStore
import BatchRunContext
import Foundation

/// Runs a `delete` in the job's context: each batch reads keys and values of up to
/// `batch_size` matching rows, then deletes them in one save that checks every row is still as
/// read. Rows changed meanwhile are conflicts resolved by the merge policy.
package enum DeleteRunner {
    package static func run(_ step: DeleteStep, in environment: StepEnvironment, context: isolated Context) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: .delete, entity: environment.entity.name)
        context.recomputeRules[environment.entity.name] = RecomputeRule(deleteWhere: step.whereClause, params: environment.params)
        let request = FetchRequest(entity: environment.entity.name, where: step.whereClause, params: environment.params)
        do {
            try ContextBatches.run(request, in: environment, context: context, report: &report, change: .delete) { first, last in
                BulkChange.keyRange(environment.entity, from: first, to: last, params: environment.params) { range in
                    "DELETE FROM \(SQL.quote(environment.entity.tableName)) WHERE "
                        + (step.whereClause.map { "(\($0)) AND " } ?? "") + range
                }
            }
        } catch {
            context.reset()
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepErrors.wrap(error, report: report, prefix: "delete \(environment.entity.name)", store: context.store, entity: environment.entity)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        return report
    }
}

extension StepReport {
    /// Adds a committed save's counts and conflicts.
    package mutating func add(_ result: SaveResult, entity: Entity) {
        rows.inserted += result.inserted
        rows.updated += result.updated
        rows.deleted += result.deleted
        conflicts += result.conflicts.count
        conflictRecords.append(contentsOf: result.conflicts.map { $0.record(entity: entity) })
        if result.didSave != nil { batches.committed += 1 }
    }
}
