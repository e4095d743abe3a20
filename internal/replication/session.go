package replication

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
)

// fetchSession is a fetcher's side of an incremental fetch session with
// its leader (KIP-227), as Kafka's FetchSessionHandler keeps it for a
// replica fetcher. The first fetch (session id 0, epoch 0) lists every
// partition and asks for a session; the leader answers with its id. Each
// later fetch carries the id and the next epoch and lists only the
// partitions whose fetch parameters changed since they were last sent (a
// new log end offset, log start offset, leader epoch or known high
// watermark) or that are new, and forgets those no longer fetched; the
// leader still reads every partition of the session and answers only
// those with something to say. So a follower of many partitions, most of
// them idle, sends and receives a few bytes per fetch rather than a line
// per partition. Any error (transport, a top-level error, an unknown
// session or a wrong epoch after the leader restarted or evicted the
// session) drops the session; the next fetch is full and asks for a new
// one. Topics without ids (Fetch v12) are fetched sessionless; the first
// such fetch closes the session the fetcher had.
type fetchSession struct {
	id    int32 // 0: none; the next fetch is full and asks for one
	epoch int32
	sent  map[partKey]sentEntry // what the leader's session holds
	gen   uint64                // counts plans, to find the partitions to forget

	// Scratch of one request, reused: the partitions to list with the
	// parameters sent, and the partitions to forget.
	list   []listedFetch
	forget []partKey
}

// sentFetch is one partition's fetch parameters as last sent.
type sentFetch struct {
	fetchOffset, logStart, highWatermark int64
	leaderEpoch                          int32
}

type sentEntry struct {
	sentFetch
	gen uint64 // the last plan that fetched the partition
}

// listedFetch is a partition listed in a fetch request, with the
// parameters it is sent with.
type listedFetch struct {
	st *fetchState
	sentFetch
}

func (st *fetchState) params() sentFetch {
	return sentFetch{fetchOffset: st.p.Log.LogEndOffset(), logStart: st.p.Log.LogStartOffset(),
		highWatermark: st.p.HighWatermark(), leaderEpoch: st.leaderEpoch}
}

// plan fills s.list and s.forget for a fetch of parts (sorted by topic id,
// then partition) and returns the session id and epoch to send. Without a
// session, or sessionless, it lists every partition.
func (s *fetchSession) plan(parts []*fetchState, sessionless bool) (id, epoch int32) {
	s.list, s.forget = s.list[:0], s.forget[:0]
	s.gen++
	full := sessionless || s.id == 0
	if full {
		if s.sent == nil {
			s.sent = map[partKey]sentEntry{}
		}
		clear(s.sent)
	}
	for _, st := range parts {
		key := partKey{st.p.TopicID, st.p.Index}
		cur := st.params()
		old, ok := s.sent[key]
		if full || !ok || old.sentFetch != cur {
			s.list = append(s.list, listedFetch{st: st, sentFetch: cur})
		}
		if !sessionless {
			s.sent[key] = sentEntry{sentFetch: cur, gen: s.gen}
		}
	}
	switch {
	case sessionless:
		// Epoch -1 closes the session named (if any) and creates none.
		id, s.id = s.id, 0
		return id, -1
	case full:
		return 0, 0
	}
	if len(s.sent) > len(parts) {
		for key, e := range s.sent {
			if e.gen != s.gen {
				s.forget = append(s.forget, key)
				delete(s.sent, key)
			}
		}
		slices.SortFunc(s.forget, func(a, b partKey) int {
			if c := bytes.Compare(a.id[:], b.id[:]); c != 0 {
				return c
			}
			return cmp.Compare(a.index, b.index)
		})
	}
	return s.id, s.epoch
}

// answered moves the session on after the leader answered a fetch sent
// with plan's id and epoch: code is the answer's top-level error and id
// its session id. It reports whether code is a session error, which only
// means the next fetch is full.
func (s *fetchSession) answered(sentID, sentEpoch int32, code int16, id int32) (sessionErr bool) {
	switch {
	case code != 0:
		s.reset()
		return code == kerr.FetchSessionIDNotFound.Code || code == kerr.InvalidFetchSessionEpoch.Code ||
			code == kerr.FetchSessionTopicIDError.Code
	case sentEpoch < 0:
	case sentID == 0:
		// A full fetch that asked for a session: id is 0 when the
		// leader's cache had no room, and the next fetch asks again.
		s.id, s.epoch = id, 1
	default:
		s.epoch = nextEpoch(s.epoch)
	}
	return false
}

// reset drops the session: the next fetch is full.
func (s *fetchSession) reset() { s.id, s.epoch = 0, 0 }

// nextEpoch is Kafka's FetchMetadata.nextEpoch for a live session.
func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// appendForgotten appends the forgotten topics of a Fetch request (v13+:
// by topic id) from s.forget, sorted by topic.
func (s *fetchSession) appendForgotten(dst []byte) []byte {
	topics := 0
	for i, k := range s.forget {
		if i == 0 || k.id != s.forget[i-1].id {
			topics++
		}
	}
	dst = kbin.AppendCompactArrayLen(dst, topics)
	for i := 0; i < len(s.forget); {
		run := i + 1
		for run < len(s.forget) && s.forget[run].id == s.forget[i].id {
			run++
		}
		dst = kbin.AppendUuid(dst, s.forget[i].id)
		dst = kbin.AppendCompactArrayLen(dst, run-i)
		for _, k := range s.forget[i:run] {
			dst = kbin.AppendInt32(dst, k.index)
		}
		dst = append(dst, 0) // topic tagged fields
		i = run
	}
	return dst
}
