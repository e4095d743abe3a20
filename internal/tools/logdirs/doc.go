// Package logdirs is `silkworm log-dirs`, Kafka's kafka-log-dirs.sh
// (tools/LogDirsCommand.java): `--describe` asks every broker (or those of
// --broker-list) for its log directories with DescribeLogDirs and prints
// Kafka's two lines and its JSON document:
//
//	Querying brokers for log directories information
//	Received log directory information from brokers 1,2,3
//	{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"t-0","size":0,"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/data"}]}],"version":1}
//
// Kafka builds the document from Java HashMaps, so its keys and lists come
// in hash order; javaHashOrder reproduces that order so that a parser
// comparing text sees the same bytes.
//
// Moving a replica between the log dirs of one broker is not supported:
// the broker answers AlterReplicaLogDirs for the replica's own dir only
// (broker/alterreplicalogdirs.go).
//
// Run is the only command-line entry point; nothing here keeps state
// between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package logdirs
