import BatchRunStore

/// A feed row an import could not write, with its line in the feed (the step names the place):
/// the store refused it (a NOT NULL or CHECK constraint, a value of the wrong type), or it met
/// a conflict under the `error` policy. Either rolls its batch back.
package enum ImportRowFailure: Error {
    case refused(line: Int, message: String)
    case conflict(line: Int, MergeConflictError)
}
