// Package metadataquorum is `silkworm metadata-quorum`, Kafka's
// kafka-metadata-quorum.sh: `describe --status` prints the quorum's
// summary and `describe --replication` a table of every voter and observer
// with its log end offset, lag and fetch times, in Kafka 4's words and
// layout (tools/MetadataQuorumCommand.java):
//
//	ClusterId:              <id>
//	LeaderId:               1
//	LeaderEpoch:            3
//	HighWatermark:          120
//	MaxFollowerLag:         0
//	MaxFollowerLagTimeMs:   0
//	CurrentVoters:          [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://localhost:9093"]}, ...]
//	CurrentObservers:       [{"id": 4, "directoryId": null}]
//
// It sends DescribeQuorum (and, for --status, DescribeCluster for the
// cluster id) to any broker. --bootstrap-controller is accepted for
// Kafka's command lines, but Silkworm's controller listener carries Raft,
// not Kafka requests: its addresses must be brokers' (they are used as
// --bootstrap-server). The add-controller and remove-controller commands
// (dynamic quorums, KIP-853) are not supported.
//
// Run is the only entry point; nothing here keeps state between calls.
package metadataquorum
