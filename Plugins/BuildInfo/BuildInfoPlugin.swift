import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (the checkout's `git describe` and commit) before every build of the
/// target that uses it, so `batchrun --version` names what it was built from. The file is
/// rewritten only when its text changes, so an unchanged checkout recompiles nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        return [.prebuildCommand(
            displayName: "Writing BuildInfo.swift from git describe",
            executable: URL(filePath: "/bin/sh"),
            arguments: ["-c", Self.script, "build-info", context.package.directoryURL.path(), output.path()],
            outputFilesDirectory: output)]
    }

    /// `$1` the package's folder, `$2` where the file goes. Outside a git checkout (a source
    /// tarball) both are "unknown".
    static let script = #"""
        describe=$(git -C "$1" describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null) || describe=unknown
        commit=$(git -C "$1" rev-parse HEAD 2>/dev/null) || commit=unknown
        text="// Written by the BuildInfo plugin (Plugins/BuildInfo) before each build; not in git.
        enum BuildInfo {
            static let describe = \"$describe\"
            static let commit = \"$commit\"
        }"
        mkdir -p "$2"
        [ "$(cat "$2/BuildInfo.swift" 2>/dev/null)" = "$text" ] || printf '%s\n' "$text" > "$2/BuildInfo.swift"
        """#
}
