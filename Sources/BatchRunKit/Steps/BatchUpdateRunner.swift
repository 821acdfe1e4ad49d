import Foundation
import GRDB

/// Runs a `batch-update` as one set-based UPDATE (the private-context mode builds on this).
public enum BatchUpdateRunner {
    public static func run(_ step: BatchUpdateStep, in environment: StepEnvironment, access: some StoreAccess) throws -> StepReport {
        let started = Date()
        var report = StepReport(kind: "batch-update", entity: environment.entity.name)
        if environment.isCancelled() { throw StepError("cancelled", report: report, cancelled: true) }
        do {
            report.rows.updated = try access.write { db -> Int in
                try db.execute(sql: step.sql(for: environment.entity), arguments: environment.params.statementArguments)
                return db.changesCount
            }
            report.batches.committed = 1
        } catch {
            report.batches.rolledBack = 1
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepError("batch-update \(environment.entity.name): \(StepErrors.describe(error))", report: report)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        environment.progress(report.rows)
        return report
    }
}
