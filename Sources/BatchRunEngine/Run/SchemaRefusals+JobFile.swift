import BatchRunStore

extension SchemaRefusals {
    /// The refusals as job-file errors, each at the column (or entity) of `file` it is about,
    /// so they print as `FILE:LINE:COLUMN: error: ...` with the line and a caret.
    package func located(in file: JobFile) -> JobFileError {
        JobFileError(diagnostics: refusals.map { refusal in
            let place = refusal.entity.flatMap { entity in
                refusal.column.flatMap { file.declarations["\(entity).\($0)"] } ?? file.declarations[entity]
            }
            return Diagnostic(at: place, refusal.message)
        }, sources: [file.path: file.source])
    }
}
