import BatchRunStore
import Foundation

/// Gone: a date becomes text through `DateText` (BatchRunStore), the one way. This forward is
/// left only for `batchrun runs` (Sources/batchrun/Commands/RunsCommand.swift), which is being
/// edited elsewhere; once it calls `DateText.text`, delete this file.
@available(*, deprecated, message: "use DateText.text(_:): dates become text through DateText")
package enum LedgerTimestamp {
    package static func string(_ date: Date) -> String { DateText.text(date) }
}
