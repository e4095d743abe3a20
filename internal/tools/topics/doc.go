// Package topics is `silkworm topics`, Kafka's kafka-topics.sh: create,
// delete, list, describe and alter (add partitions to) topics over the Kafka
// protocol with franz-go's kadm, so that it works against any Kafka cluster.
//
// Output follows Kafka 3.9's TopicCommand byte for byte. --describe prints
// for each topic a line
//
//	Topic: t	TopicId: <base64url>	PartitionCount: 3	ReplicationFactor: 1	Configs: k=v,...
//
// (Configs lists the entries whose source is not the built-in default) and
// then one line per partition
//
//	\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: N/A\tLastKnownElr: N/A
//
// Elr and LastKnownElr are N/A because topic metadata is read with the
// Metadata API, which does not carry them; this is what Kafka 3.9's tool
// prints against a broker without DescribeTopicPartitions.
//
// Errors are returned to the caller (cmd/silkworm prints them and exits
// non-zero) in Kafka's wording, e.g. "Topic 't' does not exist as expected".
package topics
