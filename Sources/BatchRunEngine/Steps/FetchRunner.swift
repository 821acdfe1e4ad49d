import BatchRunStore
import BatchRunContext
import Foundation

/// Runs a `fetch`: one snapshot read, rows streamed to the output; the first row becomes the
/// `as:` outputs (all NULL when there is no row).
package enum FetchRunner {
    package static func run(_ step: FetchStep, in environment: StepEnvironment, context: isolated Context)
        throws -> (report: StepReport, outputs: [String: StoreValue]?)
    {
        let started = Date()
        let columns = step.resultColumns(of: environment.entity)
        var report = StepReport(kind: .fetch, entity: environment.entity.name)
        var firstRow: [StoreValue]?
        var writer = try step.output.map { try OutputWriters.make($0, columns: columns, confinement: step.confinement,
                                                                          network: step.network, budget: environment.budget) }
        do {
            // A read whose connection to the server was lost is read again once a new one is
            // made, unless rows already went to the output (PostgreSQL reads all of a result
            // before the first row is handed on, so none have when its connection is lost).
            var reconnection = Reconnection(window: environment.reconnect)
            try reconnection.run(isCancelled: { environment.isCancelled() || report.rows.fetched > 0 }) {
                try context.read { db in
                    try db.forEachRow(step.sql(for: environment.entity), SQLArguments(named: environment.params)) { values in
                        if firstRow == nil { firstRow = values }
                        try writer?.write(values)
                        try environment.budget?.spend(rows: 1)
                        report.rows.fetched += 1
                        if report.rows.fetched % environment.batchSize == 0 {
                            environment.progress(report.rows)
                            if environment.isCancelled() {
                                throw StepError.cancelled(report: report)
                            }
                        }
                    }
                }
            }
            report.reconnects = reconnection.reconnects
            try writer?.finish()
        } catch {
            writer?.abandon()
            report.runSeconds = Date().timeIntervalSince(started)
            throw StepErrors.wrap(error, report: report, prefix: "fetch \(environment.entity.name)", store: context.store)
        }
        report.runSeconds = Date().timeIntervalSince(started)
        environment.progress(report.rows)
        let outputs = step.publishAs.map { _ in
            Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, firstRow?[$0] ?? .null) })
        }
        return (report, outputs)
    }
}

enum StepErrors {
    /// The database's message without its client's decoration.
    package static func describe(_ error: any Error) -> String {
        if StoreFailure(of: error) == .busy {
            return "another connection held the store's write lock for longer than busy_timeout"
        }
        if let error = error as? any StoreDatabaseError { return error.databaseMessage }
        return "\(error)"
    }

    /// The error as a `StepError` carrying `report`; a conflict under `error` keeps its record.
    package static func wrap(_ error: any Error, report: StepReport, prefix: String, store: Store, entity: Entity? = nil) -> StepError {
        if var stepError = error as? StepError {
            // The error's report is the step's own at the failure (with a conflict that failed
            // it); only the time is the caller's.
            stepError.report.runSeconds = report.runSeconds
            return stepError
        }
        if StoreFailure(of: error) == .interrupted {
            return StepError.cancelled(report: report)
        }
        if let conflictError = error as? MergeConflictError, let entity {
            var report = report
            report.conflicts += 1
            report.conflictRecords.append(conflictError.conflict.record(entity: entity))
            return StepError(conflictError.description, report: report)
        }
        if StoreFailure(of: error) != nil {
            return StepError("\(prefix): \(store.describeFailure(error))", report: report, cause: error)
        }
        return StepError("\(prefix): \(describe(error))", report: report, cause: error)
    }
}
