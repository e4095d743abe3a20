package metadata

import "github.com/hashicorp/raft"

// RaftState is this node's view of the metadata log, what Kafka's KRaft
// reports as raft-metrics (current-state, current-leader, current-epoch,
// high-watermark, log-end-offset). Offsets are Raft log indexes, as in
// QuorumStatus.
type RaftState struct {
	// State is Kafka's name for the node's role: "leader", "candidate",
	// "follower" or "unattached" (shut down).
	State         string
	LeaderID      int32 // -1 when no leader is known
	Epoch         int64 // the Raft term
	HighWatermark int64 // the commit index
	LogEndOffset  int64 // the last index
	AppliedOffset int64 // the last index applied to the image
}

// RaftState returns this node's Raft view. The metrics collector calls it
// at scrape time; safe for concurrent use.
func (q *Quorum) RaftState() RaftState {
	st := RaftState{LeaderID: -1}
	switch q.raft.State() {
	case raft.Leader:
		st.State = "leader"
	case raft.Candidate:
		st.State = "candidate"
	case raft.Follower:
		st.State = "follower"
	default:
		st.State = "unattached"
	}
	if id, ok := q.Leader(); ok {
		st.LeaderID = id
	}
	st.Epoch = int64(q.raft.CurrentTerm())
	st.HighWatermark = int64(q.raft.CommitIndex())
	st.LogEndOffset = int64(q.raft.LastIndex())
	st.AppliedOffset = int64(q.raft.AppliedIndex())
	return st
}
