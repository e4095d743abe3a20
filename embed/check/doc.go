// Package check tells whether a Kafka cluster kept what it acknowledged:
// hand it the records your producers had acknowledged, it reads their
// topics back over the Kafka protocol (with a franz-go client) and reports
// every acknowledged record that was lost, stored somewhere other than
// where it was acknowledged, stored twice, or read back out of the order
// its producer had it acknowledged in.
//
// It is the check of Silkworm's own chaos tests, offered to users of the
// embed package: drive a workload, break the cluster with embed's faults,
// heal it, wait for the ISR (embed's Cluster.WaitISR), then verify:
//
//	acks := &check.Acks{Producer: "p1"}
//	for i := range n {
//		cl.Produce(ctx, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "order-%d", i)}, acks.Promise)
//	}
//	cl.Flush(ctx)
//	// ... faults, Heal, WaitISR ...
//	report, err := check.Verify(ctx, acks.Records(), kgo.SeedBrokers(c.Addrs()...))
//	if err != nil {
//		t.Fatal(err) // the read-back itself failed
//	}
//	if err := report.Err(); err != nil {
//		t.Error(err) // lost, misplaced, duplicated or reordered records
//	}
//
// What is checked, per topic partition, for the records acknowledged to it:
//
//   - Lost: an acknowledged record that is not read back anywhere.
//   - Misplaced: an acknowledged record read back, but not at the partition
//     and offset of its acknowledgement.
//   - Duplicated: a record read back more than once, and more often than
//     it was acknowledged. A record whose produce failed to the producer
//     may have been stored, but once at most. This is a promise of
//     idempotent producers; a producer without idempotence may legally
//     write a retried record twice.
//   - Reordered: of the records of one producer to one partition, a record
//     read back after one that was acknowledged later. The order of a named
//     producer (Record.Producer) is the order of its acknowledgements, as a
//     franz-go client runs the promises of a partition in produce order;
//     records without a producer name are ordered by their acknowledged
//     offsets.
//
// A record is known by its topic, key and value: give each record a
// producer writes a distinct key or value (a sequence number does), and
// keep other writers out of the topics checked, or their records may count
// as duplicates. Headers and timestamps are not compared.
//
// The read-back (Read) consumes every partition of the topics with
// read_uncommitted from its log start offset to its high watermark as
// listed when the read starts: records of aborted transactions count as
// present, and a topic that deletes (retention) or compacts records while
// it is checked reports what it removed as lost. Control records
// (transaction markers) are skipped.
//
// Compare is the pure part (acknowledged records and read-back logs in, a
// Report out) and can be fed from any source, which is how its own tests
// damage a good read-back on purpose.
//
// Acks, Read, Verify and Compare are safe for concurrent use; a Report is
// a value owned by its caller.
package check
