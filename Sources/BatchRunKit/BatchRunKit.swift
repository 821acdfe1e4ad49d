// BatchRunKit is the one module a library user imports (docs/library.md). It re-exports the
// layers below it; what they declare `public` is the library's API, and nothing else is.
@_exported import BatchRunContext
@_exported import BatchRunEngine
@_exported import BatchRunFeeds
@_exported import BatchRunQueue
@_exported import BatchRunStore
#if Macros
@_exported import BatchRunModels
#endif
