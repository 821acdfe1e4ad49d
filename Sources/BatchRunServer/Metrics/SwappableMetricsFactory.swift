import CoreMetrics
import Prometheus
import Synchronization

/// A swift-metrics backend that hands every new handler to the Prometheus registry of the
/// moment, which `takeRegistry()` swaps for a fresh one: a process that runs several items
/// (a worker's runner) writes each item's metrics alone. Handlers are made anew at each record
/// (`BatchRunMetrics` keeps none), so what is recorded after a swap goes to the new registry.
final class SwappableMetricsFactory: MetricsFactory {
    private let current: Mutex<PrometheusMetricsFactory>

    init() {
        current = Mutex(Self.makeFactory())
    }

    /// The registry in use now.
    var registry: PrometheusCollectorRegistry { current.withLock { $0.registry } }

    /// The registry in use until now, replaced by an empty one.
    func takeRegistry() -> PrometheusCollectorRegistry {
        let fresh = Self.makeFactory()
        return current.withLock { factory in
            let taken = factory.registry
            factory = fresh
            return taken
        }
    }

    /// A Prometheus factory whose histograms' buckets suit batches (milliseconds to seconds) and
    /// items (seconds to hours).
    private static func makeFactory() -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
        factory.durationHistogramBuckets["batchrun_item_duration_seconds"] =
            [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200].map { Duration.seconds($0) }
        factory.durationHistogramBuckets["batchrun_batch_duration_seconds"] =
            [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000].map { Duration.milliseconds($0) }
        return factory
    }

    private var factory: PrometheusMetricsFactory { current.withLock { $0 } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        factory.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        factory.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        factory.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        factory.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        factory.makeTimer(label: label, dimensions: dimensions)
    }

    // Nothing is destroyed: a handler belongs to the registry it was made by, and a taken
    // registry goes away whole.
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
