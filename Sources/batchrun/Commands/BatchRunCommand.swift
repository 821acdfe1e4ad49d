import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun`: runs YAML job files against an SQLite or PostgreSQL store.
@main
struct BatchRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batchrun",
        abstract: "Run batch jobs (fetch, insert, delete, batch-update) from YAML job files against SQLite or PostgreSQL.",
        discussion: """
            Exit status: 0 every selected job succeeded; 1 a job failed or timed out; \
            2 the job file or the command line is invalid (nothing was run); 130 the run was interrupted.
            The job-file reference is docs/jobfile.md.
            """,
        version: VersionText.text,
        subcommands: [RunCommand.self, CheckCommand.self, PlanCommand.self, RunsCommand.self, ReportCommand.self,
                      SubmitCommand.self, CancelCommand.self, RetryCommand.self, PauseCommand.self, ResumeCommand.self, PruneCommand.self, LimitCommand.self, ScheduleCommand.self, WorkerCommand.self, QueueCommand.self, ServeCommand.self, RunnerCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Parses and runs, mapping ArgumentParser's usage errors to exit status 2 as the contract says.
    static func main() async {
        MallocSettings.apply()
        let command: any ParsableCommand
        do {
            command = try parsedCommand(Array(CommandLine.arguments.dropFirst()))
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
        } catch let failure as CommandFailure {
            Foundation.exit(report(failure))
        } catch {
            exit(withError: error)   // ExitCode, usage errors, help
        }
    }

    /// A command line parsed. `run ...` (each folder item's process and each runner's item, and
    /// most of what users type) is parsed by `run`'s options alone when they parse; the whole
    /// command tree otherwise, which gives help, versions, completions and usage errors as
    /// always. A parse from the root builds every subcommand's options through reflection:
    /// about a tenth of a small folder item's process.
    static func parsedCommand(_ arguments: [String]) throws -> any ParsableCommand {
        if arguments.first == "run", let run = try? RunCommand.parse(Array(arguments.dropFirst())) { return run }
        return try parseAsRoot(arguments)
    }

    /// Prints a library error as `error: MESSAGE` and gives its exit status: 2 when the input
    /// was invalid, 1 when running failed.
    static func report(_ error: any BatchRunError) -> Int32 {
        report(CommandFailure("\(error)", status: error.isInvalid ? ExitStatus.invalid : ExitStatus.failed))
    }

    /// The one place a command's failure reaches standard error; gives its exit status.
    static func report(_ failure: CommandFailure) -> Int32 {
        FileHandle.standardError.write(Data(failure.output.utf8))
        return failure.status
    }

    private static func exitOnParseError(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success { exit(withError: error) }   // --help, --version
        Foundation.exit(report(CommandFailure(located: fullMessage(for: error), status: ExitStatus.invalid)))
    }
}
