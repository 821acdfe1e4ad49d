#if NetworkFeeds
/// An AWS access key with its secret (and a session token for temporary credentials). Its
/// description shows the key id only: a secret printed by accident stays hidden.
struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    var accessKeyID: String
    var secretAccessKey: String
    var sessionToken: String?

    var description: String { "AWSCredentials(\(accessKeyID), secret hidden)" }
}
#endif
