// Package embed runs a Silkworm cluster inside the calling process, for the
// tests of applications that use Kafka: real brokers with real storage,
// Kafka's replication and a Raft metadata quorum, started in milliseconds,
// with a handle to break them.
//
//	c, err := embed.NewCluster(embed.Brokers(3), embed.Dir(t.TempDir()),
//		embed.BrokerConfig("min.insync.replicas", "2"))
//	if err != nil {
//		t.Fatal(err)
//	}
//	defer c.Close()
//	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
//	// ...
//	c.Kill(2)                          // like kill -9: no flush, no controlled shutdown
//	c.Restart(2)                       // same data dir
//	c.Isolate(1)                       // network partition: node 1 cannot reach the others
//	c.Heal()
//	c.SlowDisk(3, 50*time.Millisecond) // every write/fsync on node 3 takes 50 ms
//	c.FailDisk(3)                      // writes fail: the node takes its log dir offline
//	c.WaitISR(ctx, "orders")           // every partition fully in sync again
//
// # The brokers
//
// Each broker is a node numbered by its node.id, from 1. It runs exactly as
// `silkworm server` runs it (the same configuration keys, parsed and
// validated the same way, and the same broker code), with its own client
// listener on 127.0.0.1 and a kernel-chosen port, and its data in its own
// directory under [Dir]. One broker runs alone with its single-node
// metadata store; two or more are each broker and Raft controller (KRaft's
// combined mode), the voters being every node's CONTROLLER listener.
//
// Broker settings are Kafka's server.properties keys ([BrokerConfig],
// [NodeConfig]); topic settings are Kafka's topic config keys ([Topic]).
// A few defaults differ from Kafka's to suit tests (short session timeouts,
// no initial rebalance delay): [DefaultConfig] lists them, and a
// [BrokerConfig] of the same key wins.
//
// # Faults
//
// Every fault is a method call that takes effect before it returns, and
// [Cluster.Heal] lifts them, so a test can script a schedule:
//
//   - process: [Cluster.Kill] (kill -9: no controlled shutdown, nothing
//     written after the kill reaches the disk, every connection dropped),
//     [Cluster.Stop] (controlled shutdown: leadership moves first),
//     [Cluster.Restart] (same data dir, same ports);
//   - network: [Cluster.Isolate] (a node cannot reach the other nodes),
//     [Cluster.Split] (two sets of nodes cannot reach each other),
//     [Cluster.Latency] (every byte a node sends waits);
//   - disk: [Cluster.SlowDisk] (every write and fsync waits),
//     [Cluster.FailDisk] (EIO on every write and fsync), [Cluster.FullDisk]
//     (ENOSPC on every write), [Cluster.TornWrite] (the next segment write
//     stops at a given byte, then the disk is gone).
//
// Cuts act on connections between nodes: inter-broker connections
// (replica fetchers, transaction markers) and the metadata quorum's. New
// connections across a cut are refused and existing ones are closed, in
// both directions. Clients of the cluster still reach every running node,
// as the application in a real partition may still reach the brokers on
// both sides (an isolated leader keeps answering with its stale metadata,
// as Kafka's does). Latency applies to everything a node sends, to clients
// and nodes alike.
//
// Disk faults act on the log dirs (segments, indexes, checkpoints), which
// go through Silkworm's storage file system; the Raft metadata log keeps
// its own files and is not affected. A broker whose log dirs have all gone
// offline after an I/O error stops, as `silkworm server` does (a controlled
// shutdown first); after [Cluster.Heal], [Cluster.Restart] starts it again
// and its logs are recovered.
//
// Errors that injected faults explain (a close that cannot write its
// checkpoints on a failed disk, a killed node's) are logged, not returned.
//
// # Start-up
//
// One broker starts in milliseconds. A cluster waits for its first Raft
// election (about a second) and every node's registration; seed topics
// add the time their replicas take to be in sync.
//
// # Concurrency
//
// A [Cluster] is safe for concurrent use. Calls on the same node are
// serialised; calls on different nodes run concurrently.
package embed
