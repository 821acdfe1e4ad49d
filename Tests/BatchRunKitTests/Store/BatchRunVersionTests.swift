import BatchRunKit
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
              ("2976f97", BatchRunVersion.current + "+g2976f97"),
              ("2976f97-dirty", BatchRunVersion.current + "+g2976f97.dirty"),
              ("unknown", BatchRunVersion.current),
              ("", BatchRunVersion.current),
          ])
    func fromDescribe(describe: String, expected: String) {
        #expect(BatchRunVersion.version(describe: describe) == expected)
    }

    @Test("every form is a Debian upstream version (a digit first; then letters, digits, . + ~ and no hyphen)")
    func debianForm() throws {
        let valid = try Regex("^[0-9][A-Za-z0-9.+~]*$")
        for describe in ["v0.1.0", "v1.2.0-rc1-12-gabc1234", "v0.1.0-3-g2976f97-dirty", "2976f97-dirty", "unknown"] {
            let version = BatchRunVersion.version(describe: describe)
            #expect(version.wholeMatch(of: valid) != nil, "\(version)")
        }
    }
}
