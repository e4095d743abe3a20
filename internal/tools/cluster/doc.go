// Package cluster is `silkworm cluster`, Kafka's kafka-cluster.sh
// (tools/ClusterTool.java):
//
//   - cluster-id prints "Cluster ID: <id>" (DescribeCluster);
//   - unregister --id N sends UnregisterBroker and prints "Broker N is no
//     longer registered.", or, when the cluster does not serve that API,
//     "The target cluster does not support the broker unregistration API."
//     (exit 0, as Kafka). Like Kafka's controller, the broker side refuses
//     only an id that is not registered (BROKER_ID_NOT_REGISTERED); a live
//     broker can be unregistered and registers again.
//
// Run is the only command-line entry point; nothing here keeps state
// between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package cluster
