import Foundation
import GRDB

/// Runs a `delete` in the job's context: each batch reads keys and values of up to
/// `batch_size` matching rows, then deletes them in one save that checks every row is still as
/// read. Rows changed meanwhile are conflicts resolved by the merge policy.
public enum DeleteRunner {
    public static func run(_ step: DeleteStep, in environment: StepEnvironment, context: isolated Context) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: "delete", entity: environment.entity.name)
        context.recomputeRules[environment.entity.name] = RecomputeRule(deleteWhere: step.whereClause, params: environment.params)
        var request = FetchRequest(entity: environment.entity.name, where: step.whereClause, params: environment.params,
                                   limit: environment.batchSize)
        do {
            while true {
                if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
                let objects = try context.fetch(request)
                guard let last = objects.last else { break }
                request.after = last.objectID
                for object in objects { context.delete(object) }
                let bulk = BulkChange.keyRange(environment.entity, from: objects[0].objectID!, to: last.objectID!,
                                               params: environment.params) { range in
                    "DELETE FROM \(SQL.quote(environment.entity.tableName)) WHERE "
                        + (step.whereClause.map { "(\($0)) AND " } ?? "") + range
                }
                let result: SaveResult
                do {
                    result = try context.save(bulk: bulk)
                } catch {
                    report.batches.rolledBack += 1
                    throw error
                }
                context.reset()
                report.add(result, entity: environment.entity)
                environment.progress(report.rows)
                if objects.count < environment.batchSize { break }
            }
        } catch {
            context.reset()
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepErrors.wrap(error, report: report, prefix: "delete \(environment.entity.name)", entity: environment.entity)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        return report
    }
}

extension StepReport {
    /// Adds a committed save's counts and conflicts.
    mutating func add(_ result: SaveResult, entity: Entity) {
        rows.inserted += result.inserted
        rows.updated += result.updated
        rows.deleted += result.deleted
        conflicts += result.conflicts.count
        conflictRecords += result.conflicts.map { $0.record(entity: entity) }
        if result.didSave != nil { batches.committed += 1 }
    }
}
