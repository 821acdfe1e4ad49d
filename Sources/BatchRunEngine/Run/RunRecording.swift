import BatchRunStore
import Foundation
import Synchronization

/// The run state of the run in progress. Nothing is written before the run's first batch: the
/// run's record, and each job's, are written inside the first transaction that needs them (a
/// batch with its checkpoint, or a job's end), so a run needs the write lock no earlier than
/// its work does, and a fetch-only run reads beside another program's long write.
final class RunRecording: Sendable {
    package let ledger: RunLedger
    package let continuation: RunContinuation?
    private let file: String
    private let fileHash: String
    private let params: [String: String]
    private let startedAt: Date
    /// The `_batchrun_schema` rows of the schema changes made as the run opened, linked to the run with its record.
    private let schemaRecords: [Int64]
    /// The run's id once its record is committed; which jobs' records are.
    private let written = Mutex<(runID: Int64?, jobs: Set<String>)>((nil, []))
    /// The id of the run record last written, also by a transaction whose outcome is unknown
    /// (its COMMIT's answer lost with the connection): `storedStep` looks there too.
    private let lastWritten = Mutex<Int64?>(nil)

    package init(ledger: RunLedger, file: String, fileHash: String, params: [String: String], startedAt: Date,
         continuation: RunContinuation?, schemaRecords: [Int64] = []) {
        self.schemaRecords = schemaRecords
        self.ledger = ledger
        self.file = file
        self.fileHash = fileHash
        self.params = params
        self.startedAt = startedAt
        self.continuation = continuation
    }

    /// The run's id, if its record was written.
    package var runID: Int64? { written.withLock { $0.runID } }

    /// Inside a write transaction: the run's id, its record written by this transaction when no
    /// earlier one committed it (and forgotten again if this one rolls back).
    package func runID(in db: any StoreConnection) throws -> Int64 {
        if let id = written.withLock({ $0.runID }) { return id }
        let id = try ledger.begin(file: file, fileHash: fileHash, params: params, startedAt: startedAt,
                                  continuing: continuation?.runID, in: db)
        if !schemaRecords.isEmpty {
            try db.execute("UPDATE \(SchemaHistory.table.tableName) SET run_id = ? WHERE id IN ("
                + schemaRecords.map { _ in "?" }.joined(separator: ", ") + ")", SQLArguments([.integer(id)] + schemaRecords.map { .integer($0) }))
        }
        written.withLock { $0.runID = id }
        lastWritten.withLock { $0 = id }
        db.onRollback { [weak self] in
            self?.written.withLock { $0 = (nil, []) }
        }
        return id
    }

    /// Inside a write transaction: the job's record (`running`, its definition), written once
    /// per run; a job that starts over drops its earlier checkpoints in the same transaction.
    func recordJob(_ job: String, definition: String, over: Bool, in db: any StoreConnection) throws -> Int64 {
        let id = try runID(in: db)
        if written.withLock({ $0.jobs.contains(job) }) { return id }
        try ledger.startJob(run: id, job: job, definition: definition, over: over, in: db)
        written.withLock { _ = $0.jobs.insert(job) }
        db.onRollback { [weak self] in
            _ = self?.written.withLock { $0.jobs.remove(job) }
        }
        return id
    }

    /// A step's checkpoint as the store holds it now, read after a lost connection: a batch whose
    /// COMMIT's answer was lost may have committed (and with it the run's and job's records,
    /// which are then known written again). Nil when the store holds none.
    func storedStep(job: String, step: Int) throws -> RunLedger.StepRecord? {
        guard let id = written.withLock({ $0.runID }) ?? lastWritten.withLock({ $0 }),
              let record = try ledger.steps(of: id, job: job)[step] else { return nil }
        written.withLock { written in
            written.runID = id
            written.jobs.insert(job)
        }
        return record
    }

    /// How a job of this run starts.
    enum JobStart {
        /// An earlier attempt finished it: its outputs come back, it does not run again.
        case doneEarlier(RunLedger.JobRecord)
        /// It runs, continuing each step after its checkpoint (none for a first attempt).
        case continuing([Int: RunLedger.StepRecord])
        /// It runs from the start: its definition changed (`reason` says so), or it is all or
        /// nothing (`atomic`, no reason: that is what a user expects).
        case over(reason: String?)
    }

    package func start(of job: Job, definition: String) -> JobStart {
        guard let continuation, let earlier = continuation.jobs[job.name] else { return .continuing([:]) }
        if earlier.definition != definition {
            return .over(reason: "its definition changed since run \(continuation.runID)")
        }
        if earlier.status == .ok { return .doneEarlier(earlier) }
        if job.atomic { return .over(reason: nil) }
        return .continuing(continuation.steps[job.name] ?? [:])
    }
}
