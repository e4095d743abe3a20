package console

// The message browser (GET /api/topics/{topic}/messages) and produce
// (POST /api/topics/{topic}/messages). Reading uses a short-lived
// consumer of the user's own (no group, no committed offsets), bounded in
// records and time.

import (
	"bytes"
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	handle("GET /api/topics/{topic}/messages", serveMessages)
	handle("POST /api/topics/{topic}/messages", serveProduce)
}

const (
	// maxBrowsePartitions is how many partitions one read may span; a
	// topic with more needs a partition chosen.
	maxBrowsePartitions = 100
	// maxScan is how many records a filtered read looks at, at most.
	maxScan = 20000
	// maxShownBytes is how much of a key, value or header value is sent.
	maxShownBytes = 64 << 10
	// browseTime bounds a read.
	browseTime = 8 * time.Second
)

type headerJSON struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

type messageJSON struct {
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	TimestampType string       `json:"timestampType"`
	Key           []byte       `json:"key"`   // base64; null for a null key
	Value         []byte       `json:"value"` // base64; null for a null value (tombstone)
	KeySize       int          `json:"keySize"`
	ValueSize     int          `json:"valueSize"`
	Headers       []headerJSON `json:"headers"`
	Truncated     bool         `json:"truncated,omitempty"`
	LeaderEpoch   int32        `json:"leaderEpoch"`
}

func clip(b []byte) ([]byte, bool) {
	if len(b) > maxShownBytes {
		return b[:maxShownBytes], true
	}
	return b, false
}

func messageOf(rec *kgo.Record) messageJSON {
	m := messageJSON{
		Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(),
		TimestampType: "CreateTime", KeySize: len(rec.Key), ValueSize: len(rec.Value),
		Headers: []headerJSON{}, LeaderEpoch: rec.LeaderEpoch,
	}
	if rec.Attrs.TimestampType() == 1 {
		m.TimestampType = "LogAppendTime"
	}
	var t1, t2 bool
	if rec.Key != nil {
		m.Key, t1 = clip(rec.Key)
	}
	if rec.Value != nil {
		m.Value, t2 = clip(rec.Value)
	}
	m.Truncated = t1 || t2
	for _, h := range rec.Headers {
		v, t := clip(h.Value)
		m.Truncated = m.Truncated || t
		m.Headers = append(m.Headers, headerJSON{h.Key, v})
	}
	return m
}

// browseQuery is what the message browser asks for.
type browseQuery struct {
	partition int32 // -1: every partition
	mode      string
	offset    int64
	timestamp int64
	limit     int
	filter    []byte
}

func parseBrowse(r *http.Request) (browseQuery, error) {
	q := r.URL.Query()
	b := browseQuery{partition: -1, mode: "newest", limit: 50}
	var err error
	if v := q.Get("partition"); v != "" && v != "all" {
		p, err := strconv.ParseInt(v, 10, 32)
		if err != nil || p < -1 {
			return b, badRequest("partition %q is not a partition number", v)
		}
		b.partition = int32(p)
	}
	if v := q.Get("mode"); v != "" {
		b.mode = v
	}
	switch b.mode {
	case "newest", "oldest":
	case "offset":
		if b.offset, err = strconv.ParseInt(q.Get("offset"), 10, 64); err != nil || b.offset < 0 {
			return b, badRequest("offset %q is not a non-negative number", q.Get("offset"))
		}
	case "timestamp":
		v := q.Get("timestamp")
		if b.timestamp, err = strconv.ParseInt(v, 10, 64); err != nil {
			t, terr := time.Parse(time.RFC3339Nano, v)
			if terr != nil {
				return b, badRequest("timestamp %q is neither milliseconds since the epoch nor RFC 3339", v)
			}
			b.timestamp = t.UnixMilli()
		}
	default:
		return b, badRequest("mode %q: want newest, oldest, offset or timestamp", b.mode)
	}
	if v := q.Get("limit"); v != "" {
		if b.limit, err = strconv.Atoi(v); err != nil || b.limit <= 0 {
			return b, badRequest("limit %q is not a positive number", v)
		}
	}
	b.limit = min(b.limit, 500)
	if v := q.Get("filter"); v != "" {
		b.filter = []byte(v)
	}
	return b, nil
}

func (b *browseQuery) matches(rec *kgo.Record) bool {
	if b.filter == nil {
		return true
	}
	if bytes.Contains(rec.Key, b.filter) || bytes.Contains(rec.Value, b.filter) {
		return true
	}
	for _, h := range rec.Headers {
		if strings.Contains(h.Key, string(b.filter)) || bytes.Contains(h.Value, b.filter) {
			return true
		}
	}
	return false
}

func serveMessages(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	bq, err := parseBrowse(r)
	if err != nil {
		writeError(w, err)
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cl, _ := s.client(r)
	ctx, cancel := context.WithTimeout(r.Context(), browseTime+requestTimeout)
	defer cancel()
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		writeError(w, err)
		return
	}
	var ids []int32
	for _, pd := range td.Partitions.Sorted() {
		if bq.partition < 0 || pd.Partition == bq.partition {
			ids = append(ids, pd.Partition)
		}
	}
	if len(ids) == 0 {
		writeError(w, notFound("topic %s has no partition %d", topic, bq.partition))
		return
	}
	if len(ids) > maxBrowsePartitions {
		writeError(w, badRequest("topic %s has %d partitions: choose one partition to browse (at most %d at once)", topic, len(ids), maxBrowsePartitions))
		return
	}
	starts, err := listOffsets(ctx, cl, topic, ids, -2)
	if err != nil {
		writeError(w, err)
		return
	}
	ends, err := listOffsets(ctx, cl, topic, ids, -1)
	if err != nil {
		writeError(w, err)
		return
	}
	var atTime map[int32]int64
	if bq.mode == "timestamp" {
		if atTime, err = listOffsets(ctx, cl, topic, ids, bq.timestamp); err != nil {
			writeError(w, err)
			return
		}
	}
	from := map[int32]int64{}
	for _, p := range ids {
		start, end := starts[p], ends[p]
		var o int64
		switch bq.mode {
		case "newest":
			o = end - int64(bq.limit)
			if bq.filter != nil {
				o = end - maxScan/int64(len(ids))
			}
		case "oldest":
			o = start
		case "offset":
			o = bq.offset
		case "timestamp":
			o = atTime[p]
			if o < 0 {
				o = end
			}
		}
		o = max(o, start)
		if o < end {
			from[p] = o
		}
	}
	msgs, scanned, complete, err := s.browse(ctx, r, topic, from, ends, &bq)
	if err != nil {
		writeError(w, err)
		return
	}
	partitions := make([]map[string]any, 0, len(ids))
	for _, p := range ids {
		partitions = append(partitions, map[string]any{"partition": p, "logStartOffset": starts[p], "highWatermark": ends[p]})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"topic": topic, "messages": msgs, "scanned": scanned, "complete": complete, "partitions": partitions,
	})
}

// browse reads from each partition in from (start offset) up to its end
// offset in ends, keeping the records bq matches: the last bq.limit by
// timestamp for "newest", else the first bq.limit. complete is false when
// the read stopped at its time or scan bound before reaching the ends.
func (s *Server) browse(ctx context.Context, r *http.Request, topic string, from, ends map[int32]int64, bq *browseQuery) (msgs []messageJSON, scanned int, complete bool, err error) {
	msgs = []messageJSON{}
	if len(from) == 0 {
		return msgs, 0, true, nil
	}
	offsets := map[int32]kgo.Offset{}
	for p, o := range from {
		offsets[p] = kgo.NewOffset().At(o)
	}
	cl, err := s.newConsumer(r,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(300*time.Millisecond),
		kgo.FetchMaxBytes(16<<20),
	)
	if err != nil {
		return nil, 0, false, err
	}
	defer cl.Close()
	deadline, cancel := context.WithTimeout(ctx, browseTime)
	defer cancel()
	pending := map[int32]bool{}
	for p := range from {
		pending[p] = true
	}
	perPartition := map[int32]int{}
	for len(pending) > 0 && scanned < maxScan {
		pctx, pcancel := context.WithTimeout(deadline, 1500*time.Millisecond)
		fetches := cl.PollFetches(pctx)
		pcancel()
		if deadline.Err() != nil {
			break
		}
		got := 0
		var ferr error
		fetches.EachError(func(_ string, _ int32, e error) {
			if e != context.DeadlineExceeded && e != context.Canceled && ferr == nil {
				ferr = e
			}
		})
		if ferr != nil {
			return nil, scanned, false, ferr
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			got++
			if !pending[rec.Partition] {
				return
			}
			if rec.Offset >= ends[rec.Partition] {
				delete(pending, rec.Partition)
				return
			}
			scanned++
			if bq.matches(rec) && (bq.mode == "newest" || perPartition[rec.Partition] < bq.limit) {
				msgs = append(msgs, messageOf(rec))
				perPartition[rec.Partition]++
			}
			if rec.Offset >= ends[rec.Partition]-1 || (bq.mode != "newest" && perPartition[rec.Partition] >= bq.limit) {
				delete(pending, rec.Partition)
			}
		})
		if got == 0 {
			// Nothing more arrived: what is left before the end offsets
			// are control records (transaction markers) or compacted away.
			break
		}
	}
	complete = len(pending) == 0
	sort.Slice(msgs, func(i, j int) bool {
		if msgs[i].Timestamp != msgs[j].Timestamp {
			return msgs[i].Timestamp < msgs[j].Timestamp
		}
		if msgs[i].Partition != msgs[j].Partition {
			return msgs[i].Partition < msgs[j].Partition
		}
		return msgs[i].Offset < msgs[j].Offset
	})
	if len(msgs) > bq.limit {
		if bq.mode == "newest" {
			msgs = msgs[len(msgs)-bq.limit:]
		} else {
			msgs = msgs[:bq.limit]
		}
	}
	return msgs, scanned, complete, nil
}

// produceJSON is a record to produce. Partition nil lets the default
// partitioner choose (by key hash when there is a key); Key nil is a null
// key, Value nil a null value (a tombstone).
type produceJSON struct {
	Partition *int32  `json:"partition"`
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Headers   []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"headers"`
}

func serveProduce(s *Server, w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	var in produceJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, err)
		return
	}
	adm, err := s.admin(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		writeError(w, err)
		return
	}
	rec := &kgo.Record{Topic: topic}
	if in.Key != nil {
		rec.Key = []byte(*in.Key)
	}
	if in.Value != nil {
		rec.Value = []byte(*in.Value)
	}
	for _, h := range in.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	var opts []kgo.Opt
	if in.Partition != nil && *in.Partition >= 0 {
		if _, ok := td.Partitions[*in.Partition]; !ok {
			writeError(w, badRequest("topic %s has no partition %d", topic, *in.Partition))
			return
		}
		rec.Partition = *in.Partition
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := s.newConsumer(r, append(opts, kgo.ProducerLinger(0), kgo.UnknownTopicRetries(2))...)
	if err != nil {
		writeError(w, err)
		return
	}
	defer cl.Close()
	res, err := cl.ProduceSync(ctx, rec).First()
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("web console: produced a record", "topic", topic, "partition", res.Partition, "offset", res.Offset, "user", userOf(r))
	writeJSON(w, http.StatusOK, map[string]any{"topic": topic, "partition": res.Partition, "offset": res.Offset, "timestamp": res.Timestamp.UnixMilli()})
}
