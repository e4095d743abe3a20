// Package verifiable is `silkworm verifiable-producer` and `silkworm
// verifiable-consumer`, Kafka's VerifiableProducer and VerifiableConsumer
// (kafka-verifiable-producer.sh, kafka-verifiable-consumer.sh), built on
// franz-go. Kafka's system tests and other harnesses drive them and parse
// their standard output: one JSON object per line, each opening with
// "timestamp" (milliseconds since the epoch) and "name" (the event), the
// other fields in the order Kafka's tools print them (events.go).
//
// The producer sends the increasing integers 0, 1, 2, ... as string
// values (with --value-prefix "P.0", "P.1", ...), with no retries, and
// prints producer_send_success or producer_send_error for each record as
// its acknowledgement arrives; when it stops (after --max-messages or on
// SIGTERM/Ctrl-C) it flushes, prints shutdown_complete and a tool_data
// summary. The consumer joins --group-id (classic or KIP-848 consumer
// protocol), prints partitions_assigned and partitions_revoked from the
// rebalance callbacks, records_consumed for each poll, and, without
// --enable-autocommit, commits after each poll and prints
// offsets_committed; it prints shutdown_complete after it left the group.
//
// Each tool is one function, func(ctx, args, stdout, stderr) error, run by
// a file in cmd/silkworm; cancelling ctx is Kafka's shutdown hook. Errors
// that Kafka logs (to stderr, through log4j) go to stderr; stdout carries
// only the JSON events.
package verifiable
