import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (the checkout's `git describe` and commit) for the target that uses
/// it, so `batchrun --version` names what it was built from. The command runs again whenever
/// git's reflog, index, tags or packed refs change (a commit, a checkout, `git add`, a tag), and
/// rewrites the file only when its text changes, so an unchanged checkout recompiles nothing.
/// (A prebuild command would not do: SwiftPM runs those only when it re-plans the build.)
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        let git = package.appending(path: ".git")
        let inputs = ["logs/HEAD", "HEAD", "index", "packed-refs", "refs/tags"].map { git.appending(path: $0) }
            .filter { FileManager.default.fileExists(atPath: $0.path()) }
        return [.buildCommand(
            displayName: "Writing BuildInfo.swift from git describe",
            executable: URL(filePath: "/bin/sh"),
            arguments: ["-c", Self.script, "build-info", package.path(), output.path()],
            inputFiles: inputs,
            outputFiles: [output])]
    }

    /// `$1` the package's folder, `$2` the file. Outside a git checkout (a source tarball) both
    /// are "unknown".
    static let script = #"""
        # Without a version tag: untagged-COUNT-gHASH, COUNT the commits so far, so versions still
        # sort in the order they were built.
        describe=$(git -C "$1" describe --tags --match 'v[0-9]*' --dirty 2>/dev/null) ||
            describe=untagged-$(git -C "$1" rev-list --count HEAD 2>/dev/null)-g$(git -C "$1" describe --always --dirty 2>/dev/null) ||
            describe=unknown
        commit=$(git -C "$1" rev-parse HEAD 2>/dev/null) || commit=unknown
        # Into a Swift string literal: only what a version and a commit are made of (a tag may
        # hold a quote or a backslash, which would be Swift code here).
        describe=$(printf '%s' "$describe" | tr -cd 'A-Za-z0-9._+~-'); [ -n "$describe" ] || describe=unknown
        commit=$(printf '%s' "$commit" | tr -cd '0-9a-z'); [ -n "$commit" ] || commit=unknown
        text="// Written by the BuildInfo plugin (Plugins/BuildInfo) when git's state changes; not in git.
        enum BuildInfo {
            static let describe = \"$describe\"
            static let commit = \"$commit\"
        }"
        [ "$(cat "$2" 2>/dev/null)" = "$text" ] || printf '%s\n' "$text" > "$2"
        """#
}
