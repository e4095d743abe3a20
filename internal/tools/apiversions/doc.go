// Package apiversions is `silkworm broker-api-versions`, Kafka's
// kafka-broker-api-versions.sh (tools/BrokerApiVersionsCommand.java): it
// asks every broker of the cluster for its ApiVersions and prints one
// block per broker in Kafka's NodeApiVersions.toString(true) layout:
//
//	localhost:9092 (id: 1 rack: null isFenced: false) -> (
//		Produce(0): 3 to 13 [usable: 13],
//		...
//		Vote(52): UNSUPPORTED,
//	)
//
// "usable" is the version this tool's client (franz-go's kmsg) would use:
// the smaller of the broker's maximum and the client's; an API the client
// knows and the broker does not list is UNSUPPORTED, one the broker lists
// and the client does not know is UNKNOWN(key). Brokers are printed in
// node id order (Kafka: hash-map order).
//
// Run is the only command-line entry point; nothing here keeps state
// between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package apiversions
