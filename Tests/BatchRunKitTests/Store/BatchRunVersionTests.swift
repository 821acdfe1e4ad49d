import BatchRunKit
import Foundation
import Testing

/// The version `batchrun --version` and the Debian package take from a build's `git describe`.
@Suite("the version from git describe")
struct BatchRunVersionTests {
    @Test("a tag, commits after it, no tag, uncommitted changes and no checkout",
          arguments: [
              ("v0.1.0", "0.1.0"),
              ("v0.1.0-3-g2976f97", "0.1.0+3.g2976f97"),
              ("v1.2.0-rc1-12-gabc1234", "1.2.0~rc1+12.gabc1234"),
              ("v1.2.0-rc1", "1.2.0~rc1"),
              ("v0.1.0-3-g2976f97-dirty", "0.1.0+3.g2976f97.dirty"),
              ("v0.1.0-dirty", "0.1.0.dirty"),
              ("untagged-523-g2976f97", BatchRunVersion.current + "+523.g2976f97"),
              ("untagged-523-g2976f97-dirty", BatchRunVersion.current + "+523.g2976f97.dirty"),
              ("2976f97", BatchRunVersion.current + "+g2976f97"),
              ("2976f97-dirty", BatchRunVersion.current + "+g2976f97.dirty"),
              ("unknown", BatchRunVersion.current),
              ("", BatchRunVersion.current),
          ])
    func fromDescribe(describe: String, expected: String) {
        #expect(BatchRunVersion.version(describe: describe) == expected)
    }

    @Test("a later commit without a tag sorts after an earlier one, as dpkg compares versions")
    func untaggedSortsInOrder() throws {
        let earlier = BatchRunVersion.version(describe: "untagged-99-gffffff0")
        let later = BatchRunVersion.version(describe: "untagged-100-g0000001")
        let dpkg = Process()
        dpkg.executableURL = URL(filePath: "/usr/bin/dpkg")
        dpkg.arguments = ["--compare-versions", later, "gt", earlier]
        try dpkg.run()
        dpkg.waitUntilExit()
        #expect(dpkg.terminationStatus == 0, "\(later) is not after \(earlier)")
    }

    @Test("every form is a Debian upstream version (a digit first; then letters, digits, . + ~ and no hyphen)")
    func debianForm() throws {
        let valid = try Regex("^[0-9][A-Za-z0-9.+~]*$")
        for describe in ["v0.1.0", "v1.2.0-rc1-12-gabc1234", "v0.1.0-3-g2976f97-dirty", "untagged-523-g2976f97-dirty", "2976f97-dirty", "unknown"] {
            let version = BatchRunVersion.version(describe: describe)
            #expect(version.wholeMatch(of: valid) != nil, "\(version)")
        }
    }
}
