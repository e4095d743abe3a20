// Package replicaverify is `silkworm replica-verification`, Kafka's
// kafka-replica-verification.sh (ReplicaVerificationTool): it fetches every
// partition of the chosen topics from every replica and checks that the
// replicas hold the same record batches (the same last offsets and CRCs) up
// to each replica's high watermark, reporting the largest lag between the
// verified offset and the high watermark every --report-interval-ms.
//
// Like Kafka's tool it sends Fetch requests directly to each broker that
// hosts a replica, with replica id -2 (Kafka's DEBUGGING_CONSUMER_ID): a
// consumer fetch, so a follower serves it only if the broker serves
// consumers from followers (KIP-392; Kafka does for Fetch v11+). A replica
// that answers with an error contributes no batches, so its partitions'
// lag stays up; the tool says so once on stderr.
//
// Rounds work as Kafka's fetcher threads and barrier: every broker is
// fetched at once, then the verifier compares what came back, then the
// next round starts from the verified offsets. A batch whose last offset
// differs between replicas ends the run (exit 1) after Kafka's message; a
// CRC that differs is reported and verification goes on.
//
// Run is called by cmd/silkworm; the verifier (verify.go) is not safe for
// concurrent use and is driven by Run's goroutine only.
package replicaverify
