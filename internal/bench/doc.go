// Package bench runs the classic Kafka performance study (the "seeds": the
// hand-run studies of producer and consumer throughput against stored data,
// partitions, producers, consumers, replicas, record size, compression,
// retention and broker settings) as one command, `silkworm bench`, and writes
// its report.
//
// # Pieces
//
//   - scenario.go: a [Scenario] is data, one YAML file per scenario under
//     bench/scenarios/. It names the topic layout, broker settings, number of
//     producers and consumers, record size, acks, compression, record count
//     or duration, repetitions, the one parameter it sweeps (and optionally a
//     second "series" parameter drawn as separate lines). [Scenario.Points]
//     expands it into [Point]s for a [Profile] (quick or full).
//   - cluster.go: a [Cluster] is where the runs go: an embedded cluster of
//     1 to [MaxEmbeddedBrokers] `silkworm server` child processes it starts
//     itself (temp data dirs, free ports, per-scenario server properties;
//     with more than one broker every node is also a Raft controller and the
//     cluster is ready when each broker lists all of them in
//     DescribeCluster; CPU and RSS read from /proc/<pid>, bytes on disk by
//     walking the data dirs, every replica counted), or a remote cluster
//     given by --bootstrap-server (bytes on disk from DescribeLogDirs). The
//     runner restarts the embedded cluster when a point needs another broker
//     count (the scenario's brokers, at least its replication factor) or
//     other broker settings.
//   - workload.go: producers and consumers, each with its own franz-go client
//     built by internal/tools/cli, latency in HDR histograms.
//   - runner.go: a [Runner] creates a topic per run (and waits until every
//     broker's metadata has its leaders), drives the workload of the
//     scenario's [Kind], counts records sent, stored (ListOffsets, once the
//     high watermark has caught up with acks=1 replication) and consumed,
//     records the replica count and smallest ISR, deletes the topic,
//     repeats, and keeps the finished [PointResult]s when the context is
//     cancelled (Ctrl-C).
//   - result.go: [Results] as JSON and CSV, median and spread per metric.
//   - report.go, chart.go, conclusions.go: the Markdown summary in the seeds'
//     column layout, a self-contained HTML report with hand-made SVG charts,
//     and each seed conclusion evaluated against the run's data.
//   - compare.go: two result files side by side with a ratio per cell.
//   - seeds.go, seedcompare.go: the seed studies' published figures
//     ([SeedStudy], one YAML file per study under bench/seeds, loaded with
//     [LoadSeeds]), each tied to a scenario; the report puts them beside
//     this run's in a table and, for sweeps, an overlay chart, with the
//     hardware each was measured on. A seed that published only a chart
//     image contributes its statement.
//   - report_html.go, chart.go: the HTML report. Titles are English with
//     the seed's original beside them in a span the page does not depend
//     on (no CJK font needed); numbers are right-aligned, text left;
//     chart titles and legends sit outside the plot; sweeps are lines, a
//     one-point scenario is a set of figures; wide tables are split so
//     the page never scrolls sideways at 1280 px; a print stylesheet.
//   - estimate.go: the time and disk a run will take ([EstimateRun],
//     printed before every run), and for the full profile the scaling
//     that fits it to the host ([HostLimits]: runs use at most half the
//     free disk, the plan fits a time budget); the report lists it.
//   - omb.go, omb_run.go: OpenMessaging Benchmark workloads
//     ([OMBWorkload], OMB's YAML fields; [OMBDriver], OMB's Kafka driver
//     file mapped to client properties) run by [RunOMB]: one consumer
//     group per subscription, producers paced at producerRate (0 searches
//     the sustainable rate as OMB's rate controller does), warm-up thrown
//     away, OMB's backlog mode (consumers paused until
//     consumerBacklogSizeGB waits, then drained), and [OMBResult] in the
//     shape of OMB's TestResult JSON (per-interval lists, aggregated
//     percentiles and quantile maps, milliseconds) so OMB's
//     bin/create_charts.py reads it. bench/omb ships the common workloads.
//
// Benchmarks talk to brokers only over the Kafka protocol, so the same
// scenarios measure Apache Kafka when --bootstrap-server points at it.
//
// Nothing here keeps global state. A Runner is used from one goroutine;
// the progress line it draws runs on a goroutine of its own. RunOMB runs
// its producers, consumers and rate controller on goroutines it ends
// before returning. cmd/silkworm/bench.go and bench_omb.go call Run,
// EstimateRun and RunOMB; internal/console reads the results files.
package bench
