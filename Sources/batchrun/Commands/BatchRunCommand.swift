import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun`: runs YAML job files against an SQLite store.
@main
struct BatchRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batchrun",
        abstract: "Run batch jobs (fetch, insert, delete, batch-update) from YAML job files against SQLite.",
        discussion: """
            Exit status: 0 every selected job succeeded; 1 a job failed or timed out; \
            2 the job file or the command line is invalid (nothing was run); 130 the run was interrupted.
            The job-file reference is docs/jobfile.md.
            """,
        version: BatchRunVersion.current,
        subcommands: [RunCommand.self, CheckCommand.self, PlanCommand.self, RunsCommand.self, ReportCommand.self,
                      SubmitCommand.self, CancelCommand.self, ScheduleCommand.self, WorkerCommand.self, QueueCommand.self, ServeCommand.self, RunnerCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Parses and runs, mapping ArgumentParser's usage errors to exit status 2 as the contract says.
    static func main() async {
        MallocSettings.apply()
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitOnParseError(error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let error as any BatchRunError {
            Foundation.exit(report(error))
        } catch {
            exit(withError: error)   // ExitCode, usage errors, help
        }
    }

    /// Prints a library error as `error: MESSAGE` and gives its exit status: 2 when the input
    /// was invalid, 1 when running failed.
    static func report(_ error: any BatchRunError) -> Int32 {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return error.isInvalid ? ExitStatus.invalid : ExitStatus.failed
    }

    private static func exitOnParseError(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success { exit(withError: error) }   // --help, --version
        let message = fullMessage(for: error)
        FileHandle.standardError.write(Data((message + "\n").utf8))
        Foundation.exit(ExitStatus.invalid)
    }
}
