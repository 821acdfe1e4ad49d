/// `"a,"` without its `","`: an attribute argument as written, for the schema's call.
extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
