/// A closure to keep in a `Mutex`: `Mutex<Callback<@Sendable (Event) -> Void>?>`, never
/// `Mutex<(@Sendable (Event) -> Void)?>` (a test refuses that form in the sources).
///
/// A function type held directly as a `Mutex`'s value is wrapped in two more reabstraction
/// thunks by every `withLock` that touches it, even one that only reads it: the value passes
/// through the closure's generic `inout` parameter, converted on the way in and again on the
/// way back. A run's event handler read once per batch so grew a chain of thunks that each call
/// (and the final release) walked recursively, and the run died of a stack overflow after
/// 13,760 batches. Inside a struct the closure keeps the one representation it was stored in.
///
/// ```swift
/// let events = Mutex<Callback<@Sendable (Int) -> Void>?>(nil)
/// events.withLock { $0 = Callback { print($0) } }
/// events.withLock { $0 }?.function(42)
/// ```
package struct Callback<Function: Sendable>: Sendable {
    package let function: Function

    package init(_ function: Function) {
        self.function = function
    }
}
