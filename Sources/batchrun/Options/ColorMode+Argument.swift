import ArgumentParser
import BatchRunRender

/// `--color auto|always|never`.
extension ColorMode: ExpressibleByArgument {}

extension LogFormat: ExpressibleByArgument {}
