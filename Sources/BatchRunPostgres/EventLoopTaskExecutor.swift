#if PostgreSQL
import NIOCore

/// A task executor that runs a task's jobs on one NIO event loop, so a task preferring it runs
/// its nonisolated code (PostgresNIO's `copyFrom` included) there, each job within one turn of
/// the loop (`PostgresCopyRun`).
///
/// ```swift
/// Task(executorPreference: EventLoopTaskExecutor(connection.eventLoop)) { ... }
/// ```
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
#endif
