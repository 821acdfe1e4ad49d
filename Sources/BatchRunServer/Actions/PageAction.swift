import BatchRunKit

/// An action a signed-in reader takes on the live page (`serve --actions`), as posted to
/// `actions/NAME` with its form's fields: what it does to the queue and the audit line it leaves.
///
/// ```swift
/// let action = PageAction(name: "retry", form: ["item": "12"])
/// let outcome = action?.perform(on: queue)   // .done("12") or .refused("item 12 is done: ...")
/// ```
package enum PageAction: Sendable, Equatable {
    case cancel(item: String)
    case retry(item: String)
    case pause(group: String?)
    case resume(group: String?)
    case runSchedule(name: String)

    /// What an action came to.
    package enum Outcome: Sendable, Equatable {
        /// Done: the audit line's item (the item, group or schedule acted on; nil for the queue).
        case done(String?)
        /// Nothing changed, and why (the page answers 409 with it).
        case refused(String)
        /// The queue could not be reached or written (the page answers 503 with it).
        case failed(String)
    }

    /// The action posted to `actions/NAME` with `form`; nil for a name that is no action, or a
    /// form without what the action needs.
    package init?(name: String, form: [String: String]) {
        // No control character in a name (a NUL would act on one name and log another).
        guard form.values.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F } }) else { return nil }
        let item = form["item"].flatMap { $0.isEmpty ? nil : $0 }
        let group = form["group"].flatMap { $0.isEmpty ? nil : $0 }
        switch name {
        case "cancel": guard let item else { return nil }; self = .cancel(item: item)
        case "retry": guard let item else { return nil }; self = .retry(item: item)
        case "pause": self = .pause(group: group)
        case "resume": self = .resume(group: group)
        case "run-schedule": guard let schedule = form["schedule"], !schedule.isEmpty else { return nil }; self = .runSchedule(name: schedule)
        default: return nil
        }
    }

    /// The action's name in the audit log: `cancel`, `retry`, `pause`, `resume`, `run-schedule`.
    package var name: String {
        switch self {
        case .cancel: "cancel"
        case .retry: "retry"
        case .pause: "pause"
        case .resume: "resume"
        case .runSchedule: "run-schedule"
        }
    }

    /// Does it (blocking: call it off the server's threads).
    package func perform(on queue: any Queue) -> Outcome {
        do {
            switch self {
            case .cancel(let item):
                switch try queue.cancel(item) {
                case .cancelled, .requested: return .done(item)
                case .ended(let state): return .refused("item \(item) has ended \(state.rawValue): there is nothing to cancel")
                case .notFound: return .refused("the queue has no item \(item)")
                }
            case .retry(let item):
                switch try queue.retry(item) {
                case .retried: return .done(item)
                case .refused(let state): return .refused("item \(item) is \(state.rawValue): only a failed or cancelled item is retried")
                case .notFound: return .refused("the queue has no item \(item)")
                }
            case .pause(let group), .resume(let group):
                if let group, !QueueSubmission.isGroupName(group) { return .refused("'\(group)' is no group name") }
                try queue.setPaused(name == "pause", group: group)
                return .done(group)
            case .runSchedule(let schedule):
                guard let queued = try queue.runScheduleNow(named: schedule) else { return .refused("the queue has no schedule \(schedule)") }
                return .done("\(schedule) (item \(queued))")
            }
        } catch {
            return .failed("\(error)")
        }
    }
}
