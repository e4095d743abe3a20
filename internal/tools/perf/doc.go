// Package perf holds Kafka's performance tools on franz-go:
// producer-perf-test (kafka-producer-perf-test.sh), consumer-perf-test
// (kafka-consumer-perf-test.sh) and e2e-latency (Kafka's EndToEndLatency).
// They take Kafka's options, print Kafka's lines with Kafka's number and
// date formats (see javafmt.go: Java rounds half up on the shortest
// decimal digits), and talk to brokers only over the Kafka protocol, so
// they measure Apache Kafka as well as Silkworm.
//
// Each tool is one function, func(ctx, args, stdout, stderr) error, run by
// a file in cmd/silkworm. Cancelling ctx (Ctrl-C) ends the run early and
// prints the summary of what was done so far.
//
// Producer latency is measured per record from send to acknowledgement and
// kept in an HDR histogram in microseconds (percentiles are printed in whole
// milliseconds, as Kafka does). With --throughput the send loop paces
// records at start+i/throughput and measures latency from that intended
// send time, so a stall counts against every record it delays instead of
// being hidden (no coordinated omission).
package perf
