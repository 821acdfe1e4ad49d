import Foundation
import GRDB

/// Runs a `delete` in batches of at most `batch_size` rows, each its own transaction.
public enum DeleteRunner {
    public static func run(_ step: DeleteStep, in environment: StepEnvironment, access: some StoreAccess) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: "delete", entity: environment.entity.name)
        var arguments = environment.params
        arguments["_batchrun_limit"] = .integer(Int64(environment.batchSize))
        let sql = step.batchSQL(for: environment.entity)
        do {
            while true {
                if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
                let deleted = try access.write { db -> Int in
                    try db.execute(sql: sql, arguments: arguments.statementArguments)
                    return db.changesCount
                }
                if deleted == 0 { break }
                report.rows.deleted += deleted
                report.batches.committed += 1
                environment.progress(report.rows)
                if deleted < environment.batchSize { break }
            }
        } catch let error as StepError {
            var error = error
            error.report = report
            error.report.runSeconds = Date().timeIntervalSince(started)
            throw error
        } catch {
            report.batches.rolledBack += 1
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepError("delete \(environment.entity.name): \(StepErrors.describe(error))", report: report)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        return report
    }
}
