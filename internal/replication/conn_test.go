package replication

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// TestParseFetchResponse: the fetcher's own reading of a Fetch response
// finds every partition's error, high watermark, log start offset and
// record bytes (a slice of the response, not a copy), past the fields it
// skips (aborted transactions, tagged fields such as KIP-951's current
// leader), for topic ids (v13+) and names (v12).
func TestParseFetchResponse(t *testing.T) {
	id1, id2 := [16]byte{1}, [16]byte{2}
	for _, version := range []int16{12, 18} {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		resp.ErrorCode = 0
		resp.SessionID = 77
		t1 := kmsg.NewFetchResponseTopic()
		t1.Topic, t1.TopicID = "a", id1
		p0 := kmsg.NewFetchResponseTopicPartition()
		p0.Partition, p0.HighWatermark, p0.LastStableOffset, p0.LogStartOffset = 0, 10, 10, 3
		p0.RecordBatches = []byte("batch-bytes")
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = 7, 4
		p0.AbortedTransactions = append(p0.AbortedTransactions, at)
		p1 := kmsg.NewFetchResponseTopicPartition()
		p1.Partition, p1.ErrorCode, p1.HighWatermark, p1.LogStartOffset = 1, 74, -1, -1 // FENCED_LEADER_EPOCH
		p1.CurrentLeader.LeaderID, p1.CurrentLeader.LeaderEpoch = 3, 9                  // a tagged field
		t1.Partitions = append(t1.Partitions, p0, p1)
		t2 := kmsg.NewFetchResponseTopic()
		t2.Topic, t2.TopicID = "b", id2
		p2 := kmsg.NewFetchResponseTopicPartition()
		p2.Partition, p2.HighWatermark, p2.LogStartOffset = 5, 1, 0
		t2.Partitions = append(t2.Partitions, p2)
		resp.Topics = append(resp.Topics, t1, t2)
		body := resp.AppendTo(nil)

		code, session, got, err := parseFetchResponse(body, version, nil)
		if err != nil || code != 0 || session != 77 {
			t.Fatalf("v%d: code %d, session %d, err %v", version, code, session, err)
		}
		want := []fetchedPartition{
			{topicID: id1, topic: "a", partition: 0, highWatermark: 10, logStart: 3, records: []byte("batch-bytes")},
			{topicID: id1, topic: "a", partition: 1, errorCode: 74, highWatermark: -1, logStart: -1},
			{topicID: id2, topic: "b", partition: 5, highWatermark: 1, logStart: 0},
		}
		if len(got) != len(want) {
			t.Fatalf("v%d: %d partitions, want %d: %+v", version, len(got), len(want), got)
		}
		for i, w := range want {
			g := got[i]
			if version >= 13 {
				w.topic = ""
			} else {
				w.topicID = [16]byte{}
			}
			if g.topicID != w.topicID || g.topic != w.topic || g.partition != w.partition || g.errorCode != w.errorCode ||
				g.highWatermark != w.highWatermark || g.logStart != w.logStart || !bytes.Equal(g.records, w.records) {
				t.Errorf("v%d partition %d: %+v, want %+v", version, i, g, w)
			}
		}
		if i := bytes.Index(body, []byte("batch-bytes")); i < 0 || &got[0].records[0] != &body[i] {
			t.Errorf("v%d: record bytes copied out of the response", version)
		}
		if _, _, _, err := parseFetchResponse(body[:len(body)-3], version, nil); err == nil {
			t.Errorf("v%d: a truncated response parsed without error", version)
		}
	}
}

// fetchTestParts returns a fetcher of replica 2 and 20 partitions of 4
// topics to fetch, each with its log, and a v18 Fetch response body for
// them, each partition with a few record bytes.
func fetchTestParts(t *testing.T) (*fetcher, []*fetchState, []byte) {
	m, err := storage.OpenManager(storage.DefaultManagerConfig(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cfg := DefaultConfig(2)
	f := &fetcher{m: NewManager(cfg), byKey: map[partKey]*fetchState{}}
	var parts []*fetchState
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(fetchVersion)
	for topic := range 4 {
		id := [16]byte{byte(topic + 1)}
		rt := kmsg.NewFetchResponseTopic()
		rt.TopicID = id
		for i := range int32(5) {
			l, err := m.GetOrCreate(fmt.Sprint("t", topic), i, id, storage.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			p := partition.NewReplica(l.Topic(), i, id, l, 2)
			parts = append(parts, &fetchState{p: p, leaderEpoch: 1})
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.RecordBatches = i, []byte("records")
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return f, parts, resp.AppendTo(nil)
}

// encodeFetch plans and encodes the fetcher's next request for parts at
// version, and decodes it with kmsg.
func encodeFetch(t *testing.T, f *fetcher, version int16, parts []*fetchState) *kmsg.FetchRequest {
	t.Helper()
	sortFetchStates(parts)
	id, epoch := f.sess.plan(parts, version < 13)
	body := f.appendFetchRequest(nil, version, id, epoch)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	if err := req.ReadFrom(body); err != nil {
		t.Fatalf("v%d: decode: %v", version, err)
	}
	return req
}

// TestFetchRequestEncoding: the fetcher's own encoding of its Fetch
// request decodes, with kmsg, as what it means at v18 (topic ids, the
// replica state, each partition's known high watermark, a full fetch that
// asks for a session) and v12 (names, the replica id, sessionless).
func TestFetchRequestEncoding(t *testing.T) {
	f, parts, _ := fetchTestParts(t)
	slices.Reverse(parts) // sorted by the encoder
	for _, version := range []int16{12, 18} {
		req := encodeFetch(t, f, version, parts)
		replica := req.ReplicaID
		if version >= 15 {
			replica = req.ReplicaState.ID
		}
		wantEpoch := int32(0)
		if version < 13 {
			wantEpoch = -1
		}
		if replica != 2 || req.SessionID != 0 || req.SessionEpoch != wantEpoch || req.MaxWaitMillis != 500 || req.MinBytes != 1 || req.MaxBytes != 10<<20 {
			t.Errorf("v%d: replica %d, session %d epoch %d, max wait %d, min bytes %d, max bytes %d",
				version, replica, req.SessionID, req.SessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxBytes)
		}
		if len(req.Topics) != 4 {
			t.Fatalf("v%d: %d topics, want 4", version, len(req.Topics))
		}
		for ti, rt := range req.Topics {
			if version >= 13 && rt.TopicID != ([16]byte{byte(ti + 1)}) || version < 13 && rt.Topic != fmt.Sprint("t", ti) {
				t.Errorf("v%d: topic %d is %q %x", version, ti, rt.Topic, rt.TopicID)
			}
			if len(rt.Partitions) != 5 {
				t.Fatalf("v%d: topic %d has %d partitions, want 5", version, ti, len(rt.Partitions))
			}
			for pi, rp := range rt.Partitions {
				if rp.Partition != int32(pi) || rp.CurrentLeaderEpoch != 1 || rp.FetchOffset != 0 || rp.LogStartOffset != 0 ||
					rp.PartitionMaxBytes != 1<<20 || rp.HighWatermark != 0 || rp.LastFetchedEpoch != -1 {
					t.Errorf("v%d: topic %d partition %d: %+v", version, ti, pi, rp)
				}
			}
		}
	}
}

// TestFetchAllocatesNothingPerPartition: once warm, encoding a fetcher's
// request for many partitions and reading a response for them allocate
// nothing: the buffers and the parsed partitions are reused from fetch
// to fetch.
func TestFetchAllocatesNothingPerPartition(t *testing.T) {
	f, parts, body := fetchTestParts(t)
	var (
		buf []byte
		got []fetchedPartition
	)
	round := func() {
		sortFetchStates(parts)
		id, epoch := f.sess.plan(parts, false)
		buf = f.appendFetchRequest(buf[:0], fetchVersion, id, epoch)
		var err error
		_, _, got, err = parseFetchResponse(body, fetchVersion, got[:0])
		if err != nil || len(got) != len(parts) {
			t.Fatalf("parse: %d partitions, %v", len(got), err)
		}
	}
	round()
	if n := testing.AllocsPerRun(20, round); n != 0 {
		t.Errorf("a full fetch of %d partitions allocates %.0f times, want 0", len(parts), n)
	}
	f.sess.answered(0, 0, 0, 77)
	round()
	if n := testing.AllocsPerRun(20, round); n != 0 {
		t.Errorf("an incremental fetch of %d partitions allocates %.0f times, want 0", len(parts), n)
	}
}

// TestFetchSessionIncremental: once the leader gave a session id, the
// fetcher's requests carry it with the next epoch each time and list only
// the partitions whose fetch parameters changed, forget those it stopped
// fetching, and fall back to a full fetch after a session error.
func TestFetchSessionIncremental(t *testing.T) {
	f, parts, _ := fetchTestParts(t)
	if req := encodeFetch(t, f, fetchVersion, parts); req.SessionID != 0 || req.SessionEpoch != 0 || len(req.Topics) != 4 {
		t.Fatalf("first fetch: session %d epoch %d, %d topics; want a full fetch asking for a session", req.SessionID, req.SessionEpoch, len(req.Topics))
	}
	f.sess.answered(0, 0, 0, 77)

	listed := func(req *kmsg.FetchRequest) (n int) {
		for _, rt := range req.Topics {
			n += len(rt.Partitions)
		}
		return n
	}
	req := encodeFetch(t, f, fetchVersion, parts)
	if req.SessionID != 77 || req.SessionEpoch != 1 || listed(req) != 0 || len(req.ForgottenTopics) != 0 {
		t.Fatalf("nothing changed: session %d epoch %d, %d partitions, %d forgotten topics; want 77, 1, none",
			req.SessionID, req.SessionEpoch, listed(req), len(req.ForgottenTopics))
	}
	f.sess.answered(77, 1, 0, 77)

	// One partition's log end moves and another leaves the fetcher.
	moved, gone := parts[3], parts[7]
	if _, err := moved.p.AppendAsFollower(makeTestBatch()); err != nil {
		t.Fatal(err)
	}
	rest := slices.Delete(slices.Clone(parts), 7, 8)
	req = encodeFetch(t, f, fetchVersion, rest)
	if req.SessionEpoch != 2 || listed(req) != 1 || req.Topics[0].TopicID != moved.p.TopicID ||
		req.Topics[0].Partitions[0].Partition != moved.p.Index || req.Topics[0].Partitions[0].FetchOffset != 1 {
		t.Fatalf("after an append: epoch %d, topics %+v; want epoch 2 and partition %s from offset 1", req.SessionEpoch, req.Topics, moved.p)
	}
	if len(req.ForgottenTopics) != 1 || req.ForgottenTopics[0].TopicID != gone.p.TopicID ||
		!slices.Equal(req.ForgottenTopics[0].Partitions, []int32{gone.p.Index}) {
		t.Fatalf("forgotten %+v, want partition %s", req.ForgottenTopics, gone.p)
	}

	// The leader lost the session: the next fetch is full.
	if !f.sess.answered(77, 2, kerr.FetchSessionIDNotFound.Code, 0) {
		t.Fatal("FETCH_SESSION_ID_NOT_FOUND not taken as a session error")
	}
	if req := encodeFetch(t, f, fetchVersion, rest); req.SessionID != 0 || req.SessionEpoch != 0 || listed(req) != len(rest) {
		t.Fatalf("after a session error: session %d epoch %d, %d partitions; want a full fetch of %d", req.SessionID, req.SessionEpoch, listed(req), len(rest))
	}

	// A sessionless fetch (v12, for topics without ids) closes the
	// session it had; the next v18 fetch asks for a new one.
	f.sess.answered(0, 0, 0, 78)
	if req := encodeFetch(t, f, 12, rest); req.SessionID != 78 || req.SessionEpoch != -1 {
		t.Fatalf("sessionless fetch: session %d epoch %d, want 78, -1 (close)", req.SessionID, req.SessionEpoch)
	}
	if req := encodeFetch(t, f, fetchVersion, rest); req.SessionID != 0 || req.SessionEpoch != 0 {
		t.Fatalf("after closing: session %d epoch %d, want 0, 0", req.SessionID, req.SessionEpoch)
	}
}

// makeTestBatch returns a batch of one record at offset 0 in leader epoch 1.
func makeTestBatch() []byte {
	return record.BuildBatch(record.BuildOptions{PartitionLeaderEpoch: 1, FirstTimestamp: 1},
		[]record.Record{{Value: []byte("v")}})
}
