package metadata

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// QuorumStatus is the state of the metadata quorum as its leader sees it,
// what Kafka's DescribeQuorum answers (KIP-595, KIP-836). Offsets are Raft
// log indexes: the log end offset of a replica is its last index (Raft
// counts from 1, Kafka's offsets from 0, so the numbers agree), and the
// high watermark is the commit index.
type QuorumStatus struct {
	LeaderID      int32 `json:"leader_id"`
	LeaderEpoch   int32 `json:"leader_epoch"` // the Raft term
	HighWatermark int64 `json:"high_watermark"`
	// Voters are the controllers, Observers the broker-only nodes, each
	// sorted by node id.
	Voters    []ReplicaStatus `json:"voters"`
	Observers []ReplicaStatus `json:"observers"`
}

// ReplicaStatus is one replica of the metadata log. Times are Unix
// milliseconds, -1 when unknown (no answer from it in this leader's term).
type ReplicaStatus struct {
	NodeID       int32 `json:"node_id"`
	LogEndOffset int64 `json:"log_end_offset"`
	// LastFetchTimestamp is when the leader last heard from the replica
	// (its last AppendEntries answer); LastCaughtUpTimestamp the last
	// time the replica had every entry the leader had when it asked.
	LastFetchTimestamp    int64 `json:"last_fetch_timestamp"`
	LastCaughtUpTimestamp int64 `json:"last_caught_up_timestamp"`
	// Address is the replica's controller listener address (host:port).
	Address string `json:"address"`
}

// DescribeQuorum returns the quorum's state from the active controller
// (asked over the controller listener when it is another node). It fails
// with ErrNotController while no controller answers.
func (q *Quorum) DescribeQuorum() (QuorumStatus, error) {
	return call[QuorumStatus](q, &request{Op: opDescribeQuorum})
}

// quorumStatus is this node's view, meaningful on the leader only (the
// controller answers opDescribeQuorum with it).
func (q *Quorum) quorumStatus() QuorumStatus {
	st := QuorumStatus{
		LeaderID:      q.cfg.NodeID,
		LeaderEpoch:   int32(q.raft.CurrentTerm()),
		HighWatermark: int64(q.raft.CommitIndex()),
	}
	now := time.Now().UnixMilli()
	var servers []raft.Server
	if f := q.raft.GetConfiguration(); f.Error() == nil {
		servers = f.Configuration().Servers
	}
	term := q.raft.CurrentTerm()
	for _, s := range servers {
		id, err := strconv.ParseInt(string(s.ID), 10, 32)
		if err != nil {
			continue
		}
		rs := ReplicaStatus{NodeID: int32(id), LogEndOffset: -1, LastFetchTimestamp: -1, LastCaughtUpTimestamp: -1,
			Address: string(s.Address)}
		if int32(id) == q.cfg.NodeID {
			rs.LogEndOffset = int64(q.raft.LastIndex())
			rs.LastFetchTimestamp, rs.LastCaughtUpTimestamp = now, now
		} else if p, ok := q.tracker.progress(s.ID, term); ok {
			rs.LogEndOffset = int64(p.lastLog)
			rs.LastFetchTimestamp = p.lastFetch.UnixMilli()
			if !p.caughtUp.IsZero() {
				rs.LastCaughtUpTimestamp = p.caughtUp.UnixMilli()
			}
		}
		if s.Suffrage == raft.Voter {
			st.Voters = append(st.Voters, rs)
		} else {
			st.Observers = append(st.Observers, rs)
		}
	}
	byID := func(a, b ReplicaStatus) int { return int(a.NodeID) - int(b.NodeID) }
	slices.SortFunc(st.Voters, byID)
	slices.SortFunc(st.Observers, byID)
	if st.Voters == nil {
		st.Voters = []ReplicaStatus{}
	}
	if st.Observers == nil {
		st.Observers = []ReplicaStatus{}
	}
	return st
}

// followerProgress is what a leader learnt of one follower in one term.
type followerProgress struct {
	term      uint64
	lastLog   uint64
	lastFetch time.Time
	caughtUp  time.Time
}

// trackingTransport is the Raft transport with a record of every
// follower's answers to the non-pipelined AppendEntries calls (heartbeats,
// every ElectionTimeout/10, and catch-up appends): its last log index and
// when it answered. hashicorp/raft keeps its own replication state
// private; this is how DescribeQuorum learns it. Safe for concurrent use.
type trackingTransport struct {
	*raft.NetworkTransport
	lastIndex func() (uint64, bool) // the leader's last log index, once Raft runs

	mu        sync.Mutex
	followers map[raft.ServerID]followerProgress
}

func newTrackingTransport(t *raft.NetworkTransport, lastIndex func() (uint64, bool)) *trackingTransport {
	return &trackingTransport{NetworkTransport: t, lastIndex: lastIndex, followers: map[raft.ServerID]followerProgress{}}
}

// AppendEntries sends the request and records the follower's answer.
func (t *trackingTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress,
	args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	leaderLast, ok := t.lastIndex()
	if err := t.NetworkTransport.AppendEntries(id, target, args, resp); err != nil {
		return err
	}
	if !ok || resp.Term > args.Term {
		return nil
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.followers[id]
	if p.term != args.Term {
		p = followerProgress{term: args.Term}
	}
	// The follower's last index as it answered (before it appended what
	// this call carried), or, on success, what the call brought it to.
	p.lastLog = resp.LastLog
	if resp.Success && len(args.Entries) > 0 {
		p.lastLog = max(p.lastLog, args.Entries[len(args.Entries)-1].Index)
	}
	p.lastFetch = now
	if p.lastLog >= leaderLast {
		p.caughtUp = now
	}
	t.followers[id] = p
	return nil
}

// progress returns what is known of a follower in term.
func (t *trackingTransport) progress(id raft.ServerID, term uint64) (followerProgress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.followers[id]
	return p, ok && p.term == term
}

// raftLastIndex is the local log's last index once Raft runs.
func (q *Quorum) raftLastIndex() (uint64, bool) {
	select {
	case <-q.started:
		return q.raft.LastIndex(), true
	default:
		return 0, false
	}
}
