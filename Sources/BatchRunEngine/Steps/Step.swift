import BatchRunStore

/// One step of a job, run in order in the job's own context.
package enum Step: Sendable, Hashable {
    case fetch(FetchStep)
    case insert(InsertStep)
    case delete(DeleteStep)
    case batchUpdate(BatchUpdateStep)

    /// The key that names the step in a job file: `fetch`, `insert`, `delete`, `batch-update`.
    package var kind: StepKind {
        switch self {
        case .fetch: return .fetch
        case .insert: return .insert
        case .delete: return .delete
        case .batchUpdate: return .batchUpdate
        }
    }

    package var entity: String {
        switch self {
        case .fetch(let step): return step.entity
        case .insert(let step): return step.entity
        case .delete(let step): return step.entity
        case .batchUpdate(let step): return step.entity
        }
    }

    package var params: [String: ParamTemplate] {
        switch self {
        case .fetch(let step): return step.params
        case .insert(let step): return step.params
        case .delete(let step): return step.params
        case .batchUpdate(let step): return step.params
        }
    }

    package var batchSize: Int? {
        switch self {
        case .fetch(let step): return step.batchSize
        case .insert(let step): return step.batchSize
        case .delete(let step): return step.batchSize
        case .batchUpdate(let step): return step.batchSize
        }
    }
}
