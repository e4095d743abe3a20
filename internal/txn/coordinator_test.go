package txn

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type memLog struct {
	mu      sync.Mutex
	batches [][]byte
}

func (l *memLog) Append(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, append([]byte(nil), b...))
	return nil
}

func (l *memLog) Replay(fn func([]byte) error) error {
	l.mu.Lock()
	bs := append([][]byte(nil), l.batches...)
	l.mu.Unlock()
	for _, b := range bs {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

func (l *memLog) LeaderEpoch() int32 { return 0 }

type fakeHost struct {
	log     *memLog
	mu      sync.Mutex
	nextID  int64
	markers []Markers
	fail    bool
}

func (h *fakeHost) StateLog(int32) (Log, error) { return h.log, nil }
func (h *fakeHost) StateLogs() map[int32]Log    { return map[int32]Log{0: h.log} }
func (h *fakeHost) NextProducerID() (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	return h.nextID, nil
}
func (h *fakeHost) WriteMarkers(m Markers) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail {
		return errors.New("leader unavailable")
	}
	h.markers = append(h.markers, m)
	return nil
}
func (h *fakeHost) PartitionExists(topic string, _ int32) bool { return topic != "missing" }
func (h *fakeHost) GroupPartition(string) (string, int32)      { return "__consumer_offsets", 7 }

func newTestCoordinator(t *testing.T, h *fakeHost, now *time.Time) *Coordinator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NumPartitions = 1
	cfg.AbortCheckInterval = time.Hour // driven by hand
	cfg.Clock = func() time.Time { return *now }
	c, err := New(cfg, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func initPID(t *testing.T, c *Coordinator, id string, version int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = version
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = 1000
	return c.InitProducerID(req)
}

func addPartitions(c *Coordinator, id string, pid int64, epoch int16, topic string) int16 {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0, 1}
	req.Topics = append(req.Topics, rt)
	return c.AddPartitionsToTxn(req).Topics[0].Partitions[0].ErrorCode
}

func endTxn(c *Coordinator, id string, pid int64, epoch int16, commit bool) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return c.EndTxn(req).ErrorCode
}

func TestCommitFenceReload(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)

	r := initPID(t, c, "a", 4)
	if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
		t.Fatalf("init: %+v", r)
	}
	pid := r.ProducerID
	if code := addPartitions(c, "a", pid, 0, "missing"); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: code %d", code)
	}
	if code := addPartitions(c, "a", pid, 0, "t"); code != 0 {
		t.Fatalf("add partitions: code %d", code)
	}
	if code := endTxn(c, "a", pid, 0, true); code != 0 {
		t.Fatalf("commit: code %d", code)
	}
	if len(h.markers) != 1 || !h.markers[0].Commit || len(h.markers[0].Partitions["t"]) != 2 {
		t.Fatalf("markers after commit: %+v", h.markers)
	}
	if s, _, _, _ := c.Describe("a"); s != CompleteCommit {
		t.Fatalf("state %v, want CompleteCommit", s)
	}

	// A new transaction left open is aborted, with a bumped epoch, when
	// another producer initialises the same id; the old epoch is fenced.
	if code := addPartitions(c, "a", pid, 0, "t"); code != 0 {
		t.Fatalf("add partitions: code %d", code)
	}
	r = initPID(t, c, "a", 4)
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 2 {
		t.Fatalf("second init: %+v", r)
	}
	if m := h.markers[len(h.markers)-1]; m.Commit || m.ProducerEpoch != 1 {
		t.Fatalf("abort marker: %+v", m)
	}
	if code := endTxn(c, "a", pid, 0, true); code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie commit: code %d, want PRODUCER_FENCED", code)
	}

	// A new coordinator over the same log knows the id.
	c2 := newTestCoordinator(t, h, &now)
	if s, p, e, ok := c2.Describe("a"); !ok || s != Empty || p != pid || e != 2 {
		t.Fatalf("reloaded: %v %d %d %v", s, p, e, ok)
	}
}

func TestTimeoutAbortAndMarkerRetry(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fakeHost{log: &memLog{}}
	c := newTestCoordinator(t, h, &now)
	r := initPID(t, c, "b", 3)
	if code := addPartitions(c, "b", r.ProducerID, r.ProducerEpoch, "t"); code != 0 {
		t.Fatal(code)
	}
	now = now.Add(2 * time.Second) // past the 1 s timeout
	c.AbortTimedOut()
	if s, _, e, _ := c.Describe("b"); s != CompleteAbort || e != r.ProducerEpoch+1 {
		t.Fatalf("after timeout: %v epoch %d", s, e)
	}
	if code := endTxn(c, "b", r.ProducerID, r.ProducerEpoch, true); code != kerr.ProducerFenced.Code {
		t.Fatalf("timed out producer commit: code %d", code)
	}

	// Markers that cannot be written leave the transaction preparing and
	// are retried until they succeed.
	r = initPID(t, c, "b", 3)
	if code := addPartitions(c, "b", r.ProducerID, r.ProducerEpoch, "t"); code != 0 {
		t.Fatal(code)
	}
	h.mu.Lock()
	h.fail = true
	h.mu.Unlock()
	if code := endTxn(c, "b", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("commit with failing markers: code %d", code)
	}
	if s, _, _, _ := c.Describe("b"); s != PrepareCommit {
		t.Fatalf("state %v, want PrepareCommit", s)
	}
	if code := addPartitions(c, "b", r.ProducerID, r.ProducerEpoch, "t"); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("add during prepare: code %d", code)
	}
	h.mu.Lock()
	h.fail = false
	h.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, _, _, _ := c.Describe("b"); s == CompleteCommit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("markers never retried")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
