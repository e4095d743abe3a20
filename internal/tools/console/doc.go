// Package console is `silkworm console-producer` and `silkworm
// console-consumer`, Kafka's kafka-console-producer.sh and
// kafka-console-consumer.sh, built on franz-go.
//
// The producer reads stdin one line per record, parsed like Kafka's
// LineMessageReader (parse.key, key.separator, parse.headers,
// headers.delimiter, headers.separator, headers.key.separator, null.marker,
// ignore.error). The consumer prints records like Kafka's
// DefaultMessageFormatter (print.timestamp gives "CreateTime:123", then
// Partition:, Offset:, headers, key and value separated by key.separator)
// and writes "Processed a total of N messages" to stderr when it stops.
//
// Without --group the consumer reads the partitions directly (no group
// coordinator involved); Kafka joins a throw-away group instead, which
// prints the same records. With --group (or group.id in the consumer
// properties) the offsets of the printed records are committed when the
// consumer stops, also after Ctrl-C, as the Java consumer does on close
// with enable.auto.commit on; a second run in the group resumes after them.
package console
