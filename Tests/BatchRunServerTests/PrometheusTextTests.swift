import BatchRunServer
import Testing

@Suite("Prometheus text")
struct PrometheusTextTests {
    static let item = """
        # TYPE batchrun_rows_total counter
        batchrun_rows_total{entity="Row",change="inserted"} 200
        # TYPE batchrun_batch_duration_seconds histogram
        batchrun_batch_duration_seconds_bucket{le="0.001"} 1
        batchrun_batch_duration_seconds_bucket{le="+Inf"} 3
        batchrun_batch_duration_seconds_sum 0.25
        batchrun_batch_duration_seconds_count 3
        # TYPE batchrun_worker_slots gauge
        batchrun_worker_slots{state="busy"} 1

        """

    @Test("counters and histograms add up, gauges keep the latest value, families keep their TYPE")
    func merges() {
        var total = PrometheusText(parsing: Self.item)
        total.add(PrometheusText(parsing: Self.item.replacingOccurrences(of: "{state=\"busy\"} 1", with: "{state=\"busy\"} 0")))
        let text = total.rendered
        #expect(text.contains("batchrun_rows_total{entity=\"Row\",change=\"inserted\"} 400\n"))
        #expect(text.contains("batchrun_batch_duration_seconds_bucket{le=\"+Inf\"} 6\n"))
        #expect(text.contains("batchrun_batch_duration_seconds_sum 0.5\n"))
        #expect(text.contains("batchrun_batch_duration_seconds_count 6\n"))
        #expect(text.contains("batchrun_worker_slots{state=\"busy\"} 0\n"))
        #expect(text.contains("# TYPE batchrun_batch_duration_seconds histogram\n"))
        #expect(text.components(separatedBy: "# TYPE batchrun_rows_total").count == 2)
    }

    @Test("listen addresses: loopback by default, brackets for IPv6, bad ones refused")
    func listenAddresses() {
        #expect(ListenAddress("127.0.0.1:9464") == ListenAddress(":9464"))
        #expect(ListenAddress(":9464")?.isLoopback == true)
        #expect(ListenAddress("0.0.0.0:8080")?.isLoopback == false)
        #expect(ListenAddress("[::1]:8080")?.host == "::1")
        #expect(ListenAddress("[::1]:8080")?.isLoopback == true)
        #expect(ListenAddress("localhost") == nil)
        #expect(ListenAddress("::1:80") == nil)
        #expect(ListenAddress("host:99999") == nil)
    }
}
