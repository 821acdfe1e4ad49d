import BatchRunStore
import Foundation

/// Where an output's bytes go, whole or not at all: `finish()` puts them in place, `abandon()`
/// leaves no trace of them (the previous file, or no object, stays).
package protocol OutputSink: AnyObject {
    func write(_ bytes: Data) throws
    func finish() throws
    func abandon()
}

package enum OutputSinks {
    /// A local file (written aside, renamed into place) or, with network feeds, `s3://BUCKET/KEY`
    /// (`network`: where a confined item's upload may connect; nil: anywhere).
    package static func open(_ path: String, confinement: PathConfinement?, network: NetworkRules? = nil) throws -> any OutputSink {
        if case .s3(let location) = FeedLocation(path) {
            #if NetworkFeeds
            return try S3Upload(location: location, network: network)
            #else
            throw S3Error(message: "cannot write \(location): this batchrun was built without network feeds (the NetworkFeeds package trait is off)")
            #endif
        }
        return try LocalFileSink(path: path, confinement: confinement)
    }
}
