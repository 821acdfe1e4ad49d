#if NetworkFeeds
/// An AWS access key with its secret (and a session token for temporary credentials). Its
/// description shows the key id only: a secret printed by accident stays hidden.
package struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?

    package var description: String { "AWSCredentials(\(accessKeyID), secret hidden)" }

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}
#endif
