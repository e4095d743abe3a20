// Package chaos holds the in-process chaos test of the embed package
// (issue 14): a three-node embed.Cluster, idempotent acks=all producers
// on a topic with RF 3 and min.insync.replicas=2, and a random schedule,
// from a fixed and logged seed, of every fault embed offers — kill -9,
// controlled shutdown, isolation of a node, a split between two nodes,
// latency on a node's links, a slow disk, a failing disk (EIO), a full
// disk (ENOSPC), a torn write. After each fault the test heals the
// cluster, restarts what stopped and waits until every replica is in the
// ISR again; at the end embed/check reads every partition back and the
// test fails on any acknowledged record lost, misplaced, doubled or
// reordered.
//
// The test logs the seed, each fault with its victim, how many faults of
// each kind it injected and the time it took.
//
// Environment:
//
//	SILKWORM_CHAOS_SEED=n     the schedule's seed (default 14)
//	SILKWORM_CHAOS_SECONDS=n  keep injecting faults for n seconds (default
//	                          45) once every kind has had its turn
//
// The process-level chaos test, with silkworm server child processes
// killed with SIGKILL, is test/interop's TestClusterChaos.
//
// There is no non-test code in this package.
package chaos
