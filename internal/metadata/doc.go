// Package metadata holds the cluster metadata every broker works from:
// brokers, topics and their ids, partition assignments, leaders, leader
// epochs, ISR and configs, and the security state (SCRAM credentials, ACL
// bindings, client quotas). It is modelled on KRaft: changes are records
// applied to an immutable Image, and brokers read the latest Image through
// the Store interface, which two stores implement.
//
// Security state. As in KRaft, SCRAM credentials, ACLs and client quotas
// are in the metadata (Image.Scram, ACLs, ClientQuotas), so every broker
// enforces the same set and a restart replays it. One call of
// AlterScramCredentials, CreateACLs, DeleteACLs or AlterClientQuotas is
// one change (one record, one image). The store keeps the state canonical
// (one credential per user and mechanism, ACLs without duplicates and
// sorted, one quota entry per entity, none empty) and validates nothing
// else: mechanisms, iterations, duplicate changes and quota keys are the
// broker's to check. Both stores apply these changes with the same code
// (security.go). A Quorum acknowledges them once every reachable node has
// applied them, as it does topic creations.
//
// # Local
//
// The single-node store: the image is persisted as one JSON document
// (<dir>/silkworm-metadata.json, written atomically with a temporary file
// and rename).
//
// # Quorum
//
// The cluster store, replicated with hashicorp/raft. Files:
//
//	quorum.go      QuorumConfig, OpenQuorum, the Store methods and the
//	               controller API (RegisterBroker, Heartbeat, AlterPartition,
//	               ElectLeaders, ControlledShutdown, ReassignPartitions);
//	               forwarding with bounded retries
//	controller.go  the active controller (runs on the Raft leader only):
//	               request -> record, replica assignment, heartbeat
//	               tracking and fencing
//	fsm.go         the Raft FSM: applies records to a copy of the Image
//	security.go    the security changes (SCRAM, ACLs, client quotas) as
//	               both stores apply them
//	records.go     the record encoding (JSON, versioned by "v")
//	transport.go   the controller listener: Raft and forwarding on one port
//	features.go    SetFeatures: the finalized feature levels (Image.Features,
//	               one set_features record; the broker validates them)
//	quorumstatus.go DescribeQuorum: leader, term, commit index and each
//	               replica's last index and answer times, recorded by a
//	               wrapper of the Raft transport (heartbeat answers)
//
// On disk, QuorumConfig.Dir (e.g. <log.dir>/__cluster_metadata-0) holds
// raft.db (a bbolt file with the Raft log and term/vote, raft-boltdb) and
// snapshots/<term>-<index>-<ms>/{meta.json,state.bin}; state.bin is the
// Image as JSON. Raft snapshots every SnapshotThreshold records and keeps
// two.
//
// Records. Every change is one record appended by the active controller
// (the Raft leader, once it has applied its predecessors' entries and
// appended a set_controller record). Decisions that need randomness or
// clocks (topic ids, replica placement, which broker's session expired)
// are taken by the controller before the record is appended, so applying
// a record is deterministic: every node, voter or not, publishes the same
// Images in the same order, and Image.Epoch is the Raft index of the last
// applied record. A record that fails validation when applied (a topic
// created twice, a stale AlterPartition) changes nothing.
//
// Membership. Controllers (process.roles contains controller) are the
// static voters of controller.quorum.voters; on a fresh dir each voter
// bootstraps the same configuration. A broker-only node starts with an
// empty log; when it registers (SetSelf), its request carries its
// controller-listener address and the active controller adds it as a Raft
// non-voter before appending the registration, so it receives the log
// from then on. Until then it forwards to the voters in turn.
//
// Brokers. A registration leaves the broker fenced; its first heartbeat
// unfences it. The active controller keeps heartbeat times in memory
// (a new controller grants every broker a full session) and fences a
// broker after BrokerSessionTimeout without one. Fencing, controlled
// shutdown and a new incarnation remove the broker from every ISR it is in
// (unless it is the last member) and elect a new leader, first live ISR
// member in replica order, leader epoch bumped; with none, the leader is
// -1 until an ISR member comes back (unclean.leader.election.enable, off
// by default, elects any live replica instead).
//
// Forwarding. The controller listener multiplexes two protocols on one
// port by the first byte of each connection: 'R' for Raft's
// NetworkTransport, 'F' for the forwarding RPC (one JSON request and one
// JSON response per connection). A change asked on a node that is not the
// active controller is forwarded to the Raft leader; while none answers,
// it retries for RequestTimeout, then fails with ErrNotController.
// Sentinel errors keep their identity across the RPC.
//
// Concurrency. Quorum.mu serialises publishing and guards subscribers;
// subscribers run under it, on Raft's apply goroutine, and must not call
// change methods. controller.mu guards heartbeat times only and is never
// held while calling Raft. No lock is held across a Raft call.
package metadata
