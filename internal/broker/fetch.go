package broker

// Fetch: v0-18
//
// v0-v3 read the legacy message formats: their answers are converted from
// the stored batches (fetchlegacy.go); v0 has no throttle time, v0-v3 no
// last stable offset nor aborted transactions.
//
// Record data is never decoded: each partition's answer is a byte range of
// whole batches in one segment file, written to the socket with sendfile.
// A fetch from the middle of a batch returns that whole batch. Consumers
// read up to the high watermark (read_uncommitted) or the last stable
// offset (read_committed: the first offset of the oldest ongoing
// transaction, or the high watermark). A read_committed answer lists the
// aborted transactions whose ABORT marker is at or after the fetch offset
// and that began below the last stable offset, so the client can drop
// their records; control batches are sent as they are (clients skip them).
//
// Long-poll: when fewer than min.bytes are available and max.wait.ms > 0,
// the request parks on the partitions' waiters and is answered when an
// append moves a high watermark enough, or when max.wait.ms passes. A
// consumer's parked fetch wakes only when a high watermark moves (it reads
// no further), and one that waits for more than one byte reads only when
// the bytes up to the partitions' log ends could make min.bytes (as Kafka's
// DelayedFetch counts them, from positions); a follower's wakes on every append, and is answered as soon
// as there is data. A follower that sends the high watermark it knows
// (KIP-1166's tagged field, which Silkworm's followers send) and is behind
// the leader's, with nothing to read, is answered with the news after
// hwNewsDelay unless data comes first to carry it: followers learn the
// high watermark promptly when the partition goes quiet, without a round
// trip per append while it is busy.
//
// Fetch sessions (KIP-227) are Kafka's: see fetchsession.go for every
// (session id, epoch) combination. A partition named twice in one request
// is read and answered once (Kafka keys a fetch by partition). A partition
// that fails answers -1 for its high watermark, last stable offset and log
// start offset, as Kafka's readFromLog does. Only brokers may fetch as replicas: a replica
// id that is not in the partition's replica set gets NOT_LEADER_OR_FOLLOWER.
// A follower's fetch offset is its log end offset: the leader records it,
// which may advance the high watermark (waking acks=all producers), and
// reads for it up to the log end rather than the high watermark.
//
// From v16 (KIP-951) a NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH
// partition names the current leader and epoch that metadata knows (tagged
// field 1), and the response lists those leaders' endpoints (tagged field
// 0), as Kafka, so consumers can redirect without a metadata round trip.
//
// v17 (KIP-853) adds the follower's ReplicaDirectoryId and v18 (KIP-1166)
// the follower's known high watermark, both tagged request fields that
// Kafka uses for KRaft's own replication only: a partition fetch ignores
// them, and the response is v16's. From v13 topics are named by id: an id
// this broker does not know answers UNKNOWN_TOPIC_ID for each of its
// partitions (before authorization, which needs the name).
//
// The response body is encoded here rather than by kmsg because its record
// fields are file regions; the layout follows the FetchResponse schema.

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/storage"
	"github.com/silkworm/silkworm/internal/wire"
)

func init() { register(kmsg.Fetch, 0, 18, handleFetch) }

// fetchPart is the answer for one partition.
type fetchPart struct {
	partition        int32
	errorCode        int16
	highWatermark    int64
	lastStable       int64
	logStart         int64
	read             storage.ReadResult
	legacy           []byte // v0-v3: converted message set, sent instead of read
	hasData          bool
	aborted          []storage.AbortedTxn // read_committed only
	currentLeader    int32
	currentLeaderEpo int32
	preferredReplica int32 // v11+: where the consumer should fetch instead (replicaselector.go), -1 none
}

// fetchTopic is the answer for a run of partitions of one topic; a topic
// whose partitions are not adjacent in the fetch is answered in several
// runs, as Kafka does.
type fetchTopic struct {
	name  string
	id    [16]byte
	parts []fetchPart
}

// fetchReplicaID is the replica id of a fetch: a follower's node id, or
// negative for a consumer.
func fetchReplicaID(r *request) int32 {
	req := r.kreq.(*kmsg.FetchRequest)
	if r.hdr.APIVersion >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

func handleFetch(b *Broker, r *request) {
	req := r.kreq.(*kmsg.FetchRequest)
	replicaID := fetchReplicaID(r)
	v := r.hdr.APIVersion
	parts, forget := fetchRequestParts(req, v, b.topicNameByID)
	fc := b.fetchSessions().newFetchContext(v, req.SessionID, req.SessionEpoch, replicaID >= 0, parts, forget)
	if fc.kind == sessionErrorFetch {
		r.respondRaw(encodeFetchError(r, fc.errorCode))
		return
	}
	topics, total, anyErr := b.readFetchParts(r, req, fc.parts, replicaID)
	if total >= int64(req.MinBytes) || req.MaxWaitMillis <= 0 || anyErr {
		b.respondFetch(r, fc, topics, replicaID)
		return
	}
	go b.waitFetch(r, req, fc, replicaID)
}

// topicNameByID is the name of a local topic by id, "" when unknown.
func (b *Broker) topicNameByID(id [16]byte) string {
	if ts := b.topicByID(id); ts != nil {
		return ts.name
	}
	return ""
}

// hwNewsDelay is how long a follower's parked fetch that has only a newer
// high watermark to tell waits for data to carry it along.
const hwNewsDelay = 5 * time.Millisecond

// hwNews reports whether a follower's fetch of parts, answered with
// topics (in the same order), would teach it a high watermark it can use:
// one above what it says it knows, up to its log end.
func hwNews(parts []fetchPartReq, topics []fetchTopic) bool {
	i := 0
	for _, t := range topics {
		for _, fp := range t.parts {
			rp := &parts[i]
			i++
			if rp.replicaHW != math.MaxInt64 && fp.errorCode == 0 && min(fp.highWatermark, rp.fetchOffset) > rp.replicaHW {
				return true
			}
		}
	}
	return false
}

// replicaWakeMatters reports whether a wake of a follower's parked fetch
// may change its answer: a partition has data past the fetch offset or is
// no longer led here, or, unless the news is already due, has a high
// watermark the follower can learn. A high watermark move the follower
// knows, or another one while the news is due, needs no read of the log.
func replicaWakeMatters(parts []fetchPartReq, parked []*partition.Partition, newsDue bool) bool {
	for i, p := range parked {
		if p == nil {
			continue
		}
		rp := &parts[i]
		if p.Log.LogEndOffset() > rp.fetchOffset || !p.IsLeader() {
			return true
		}
		if !newsDue && rp.replicaHW != math.MaxInt64 && min(p.HighWatermark(), rp.fetchOffset) > rp.replicaHW {
			return true
		}
	}
	return false
}

// fetchMark is where a consumer's parked fetch would start reading one
// partition, for fetchMarks.
type fetchMark struct {
	p     *partition.Partition // nil: not a local partition
	from  storage.Position
	known bool // from was found
}

func markFetch(p *partition.Partition, offset int64) fetchMark {
	from, err := p.Log.PositionOf(offset)
	return fetchMark{p: p, from: from, known: err == nil}
}

// fetchMarks are the start positions of a consumer's parked fetch that
// waits for more than one byte. As a partition.WakeCond it spares the
// fetch the wakes that cannot give it minBytes.
type fetchMarks struct {
	marks    []fetchMark
	minBytes int64
}

// Wakes is reach without the leadership test, which would take partition
// locks: a partition that stops leading wakes every waiter anyway.
func (m *fetchMarks) Wakes() bool { return m.reach(false) }

// reach reports whether the fetch may find minBytes now, as Kafka's
// DelayedFetch.tryComplete reckons it without reading: the bytes from each
// fetch position to its high watermark bound what the fetch can read (a
// last stable offset is never past the high watermark). When a bound is
// unknown, because the position was not found, the log rolled or was
// truncated or trimmed past it, or (with leader) the partition is no
// longer led here, the fetch must read.
func (m *fetchMarks) reach(leader bool) bool {
	var bound int64
	for i := range m.marks {
		k := &m.marks[i]
		if k.p == nil {
			continue
		}
		if !k.known || leader && !k.p.IsLeader() {
			return true
		}
		end := k.p.Log.EndPosition()
		if end.SegmentBase != k.from.SegmentBase || end.Offset < k.from.Offset || k.p.Log.LogStartOffset() > k.from.Offset {
			return true
		}
		hw := k.p.HighWatermarkAt()
		if hw.Offset <= k.from.Offset {
			continue
		}
		if hw.SegmentBase != k.from.SegmentBase {
			return true
		}
		if bound += hw.Pos - k.from.Pos; bound >= m.minBytes {
			return true
		}
	}
	return false
}

// olderSegment reports whether a fetch position lies on another segment
// than its partition's high watermark, which Kafka's DelayedFetch answers
// at once whatever minBytes ("fetching older segments", or a truncated
// leader's later ones): a read stops at a segment's end, so a consumer
// catching up over small segments (a compacted topic) would otherwise wait
// out MaxWait for every batch.
func (m *fetchMarks) olderSegment() bool {
	for i := range m.marks {
		k := &m.marks[i]
		if k.p == nil || !k.known {
			continue
		}
		if hw := k.p.HighWatermarkAt(); hw.Offset != k.from.Offset && hw.SegmentBase != k.from.SegmentBase {
			return true
		}
	}
	return false
}

// waitFetch parks a fetch until enough bytes are available or its wait
// expires, then answers it. It runs on its own goroutine, not an io one.
func (b *Broker) waitFetch(r *request, req *kmsg.FetchRequest, fc *fetchContext, replicaID int32) {
	follower := replicaID >= 0
	wake := make(chan struct{}, 1)
	var watched []*partition.Partition
	var parked []*partition.Partition // a follower's, by fc.parts index
	if follower {
		parked = make([]*partition.Partition, len(fc.parts))
	}
	// A consumer waiting for more than one byte is woken only when its
	// partitions may give them: marks bound what each could now give.
	var marks *fetchMarks
	if !follower && req.MinBytes > 1 {
		marks = &fetchMarks{marks: make([]fetchMark, len(fc.parts)), minBytes: int64(req.MinBytes)}
	}
	var ts *topicState
	for i, fp := range fc.parts {
		if i == 0 || fp.key.id != fc.parts[i-1].key.id || fp.key.topic != fc.parts[i-1].key.topic {
			ts = b.fetchTopicState(r, fp)
		}
		if ts == nil {
			continue
		}
		if fp.partition >= 0 && int(fp.partition) < len(ts.partitions) && ts.partitions[fp.partition] != nil {
			p := ts.partitions[fp.partition]
			if follower {
				parked[i] = p
			} else if marks != nil {
				marks.marks[i] = markFetch(p, fp.fetchOffset)
			}
			watched = append(watched, p)
		}
	}
	// Every mark is set before the first watch: other partitions' appends
	// read them from now on.
	for _, p := range watched {
		switch {
		case follower:
			p.WatchLogEnd(wake)
		case marks != nil:
			p.WatchIf(wake, marks)
		default:
			p.Watch(wake)
		}
	}
	defer func() {
		for _, p := range watched {
			p.Unwatch(wake)
		}
	}()
	// An append between handleFetch's read and the watches above woke
	// nobody: read once more now that appends wake us.
	select {
	case wake <- struct{}{}:
	default: // an append already did
	}
	timer := time.NewTimer(time.Duration(req.MaxWaitMillis)*time.Millisecond - time.Since(r.received))
	defer timer.Stop()
	var news <-chan time.Time // armed when the follower has a high watermark to learn
	for {
		select {
		case <-wake:
			if follower && !replicaWakeMatters(fc.parts, parked, news != nil) ||
				marks != nil && !marks.reach(true) {
				continue
			}
			topics, total, anyErr := b.readFetchParts(r, req, fc.parts, replicaID)
			if total >= int64(req.MinBytes) || anyErr || marks != nil && marks.olderSegment() {
				b.respondFetch(r, fc, topics, replicaID)
				return
			}
			if follower && news == nil && hwNews(fc.parts, topics) {
				t := time.NewTimer(hwNewsDelay)
				defer t.Stop()
				news = t.C
			}
		case <-news:
			topics, _, _ := b.readFetchParts(r, req, fc.parts, replicaID)
			b.respondFetch(r, fc, topics, replicaID)
			return
		case <-timer.C:
			topics, _, _ := b.readFetchParts(r, req, fc.parts, replicaID)
			b.respondFetch(r, fc, topics, replicaID)
			return
		case <-r.c.done:
			r.respondNone()
			return
		}
	}
}

func (b *Broker) fetchTopicState(r *request, fp fetchPartReq) *topicState {
	if r.hdr.APIVersion >= 13 {
		return b.topicByID(fp.id)
	}
	return b.topic(fp.topic)
}

// readFetch is readFetchParts for the partitions of a sessionless fetch.
func (b *Broker) readFetch(r *request, req *kmsg.FetchRequest, replicaID int32) ([]fetchTopic, int64, bool) {
	parts, _ := fetchRequestParts(req, r.hdr.APIVersion, b.topicNameByID)
	return b.readFetchParts(r, req, parts, replicaID)
}

// readFetchParts locates the data of every partition to fetch (the request's,
// or an incremental session's), in order. It returns the answers, the
// number of record bytes found, and whether any partition has an error
// (which makes Kafka answer at once).
func (b *Broker) readFetchParts(r *request, req *kmsg.FetchRequest, parts []fetchPartReq, replicaID int32) ([]fetchTopic, int64, bool) {
	var (
		topics   []fetchTopic
		total    int64
		anyErr   bool
		maxBytes = int64(req.MaxBytes)
	)
	if maxBytes <= 0 {
		maxBytes = 1
	}
	// A consumer with a byte-rate quota gets no more than its quota window
	// allows (Kafka's getMaxValueInQuotaWindow), or it would be throttled
	// and answered empty forever.
	if replicaID < 0 && b.authz.quotas.Enabled(quota.FetchBytes) {
		if w := b.authz.quotas.MaxValueInQuotaWindow(quota.FetchBytes, r.principal.Name, r.hdr.ClientID); w < float64(maxBytes) {
			maxBytes = max(int64(w), 1)
		}
	}
	// A follower needs CLUSTER_ACTION, a consumer READ on each topic.
	follower := replicaID >= 0
	followerOK := follower && b.authorizeCluster(r, kmsg.ACLOperationClusterAction)
	var (
		ts         *topicState
		authorized bool
	)
	for i, rp := range parts {
		if i == 0 || rp.key.id != parts[i-1].key.id || rp.key.topic != parts[i-1].key.topic {
			// A new run of one topic's partitions.
			ts = b.fetchTopicState(r, rp)
			name := rp.topic
			run := i + 1
			for run < len(parts) && parts[run].key.id == rp.key.id && parts[run].key.topic == rp.key.topic {
				run++
			}
			ft := fetchTopic{name: rp.topic, id: rp.id, parts: make([]fetchPart, 0, run-i)}
			if ts != nil {
				name = ts.name
				ft.name, ft.id = ts.name, ts.id
			}
			authorized = followerOK || (!follower && b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name))
			topics = append(topics, ft)
		}
		ft := &topics[len(topics)-1]
		fp := fetchPart{partition: rp.partition, highWatermark: -1, lastStable: -1, logStart: -1,
			currentLeader: -1, currentLeaderEpo: -1, preferredReplica: -1}
		switch {
		case ts == nil && r.hdr.APIVersion >= 13:
			fp.errorCode = kerr.UnknownTopicID.Code
		case !authorized:
			fp.errorCode = kerr.TopicAuthorizationFailed.Code
		case ts == nil || rp.partition < 0 || int(rp.partition) >= len(ts.partitions):
			fp.errorCode = kerr.UnknownTopicOrPartition.Code
		case ts.partitions[rp.partition] == nil:
			fp.errorCode = kerr.NotLeaderForPartition.Code
		default:
			total += b.readFetchPartition(r, req, &rp, ts, &fp, replicaID, maxBytes, total)
			// A preferred read replica is answered at once, as Kafka's
			// fetchMessages does.
			anyErr = anyErr || fp.preferredReplica >= 0
		}
		if fp.errorCode != 0 {
			anyErr = true
			// As Kafka's readFromLog: a failed read knows no offsets.
			fp.highWatermark, fp.lastStable, fp.logStart = -1, -1, -1
		}
		ft.parts = append(ft.parts, fp)
	}
	return topics, total, anyErr
}

// readFetchPartition reads one local partition for a fetch into fp and
// returns the number of record bytes found; total is what the fetch has
// found so far.
func (b *Broker) readFetchPartition(r *request, req *kmsg.FetchRequest, rp *fetchPartReq, ts *topicState, fp *fetchPart,
	replicaID int32, maxBytes, total int64) int64 {
	p := ts.partitions[rp.partition]
	epoch := p.LeaderEpoch()
	if replicaID >= 0 {
		// A follower's fetch: its offset is its log end, which may move
		// the high watermark before we read.
		expand, err := p.UpdateFollower(replicaID, rp.fetchOffset, time.Now())
		if err != nil {
			fp.errorCode = kerr.NotLeaderForPartition.Code
			return 0
		}
		if expand {
			b.requestISRExpand(p, replicaID)
		}
		p.SetFollowerLogStart(replicaID, rp.logStartOffset)
	} else if !p.IsLeader() && !readsFollowers(req.Version, replicaID) {
		fp.errorCode = kerr.NotLeaderForPartition.Code
		return 0
	}
	hw := p.HighWatermarkPosition()
	upTo := hw
	if replicaID >= 0 {
		upTo = p.Log.EndPosition() // followers read to the log end
	}
	fp.highWatermark = hw.Offset
	fp.lastStable = hw.Offset
	if replicaID < 0 {
		lso := p.LastStablePosition()
		fp.lastStable = lso.Offset
		if req.IsolationLevel == 1 {
			upTo = lso
		}
	}
	fp.logStart = p.Log.LogStartOffset()
	switch {
	case rp.currentLeaderEpoch >= 0 && rp.currentLeaderEpoch < epoch:
		fp.errorCode = kerr.FencedLeaderEpoch.Code
	case rp.currentLeaderEpoch > epoch:
		fp.errorCode = kerr.UnknownLeaderEpoch.Code
	case rp.fetchOffset < fp.logStart || rp.fetchOffset > p.Log.LogEndOffset():
		fp.errorCode = kerr.OffsetOutOfRange.Code
	case req.Version < 4:
		return b.readFetchLegacy(req, rp, ts, p, fp, maxBytes, total) // fetchlegacy.go
	case req.Version >= 11 && replicaID == -1 && req.Rack != "" && p.IsLeader() &&
		b.setPreferredReadReplica(r, req.Rack, p, rp.fetchOffset, fp):
		// read from the replica named instead
	case rp.fetchOffset >= upTo.Offset:
		// nothing to read yet
	default:
		var throttled bool
		if replicaID >= 0 {
			var hold bool
			if throttled, hold = b.leaderThrottleRead(p, replicaID); hold {
				return 0 // over leader.replication.throttled.rate (throttle.go)
			}
		}
		limit := min(int64(rp.maxBytes), maxBytes-total)
		minOne := total == 0
		if limit <= 0 && !minOne {
			return 0
		}
		res, err := p.Log.Read(rp.fetchOffset, int32(max(limit, 0)), upTo, minOne)
		if err != nil {
			fp.errorCode = errorCode(err)
			return 0
		}
		if res.Size > 0 {
			fp.read = res
			fp.hasData = true
			if req.IsolationLevel == 1 && replicaID < 0 {
				fp.aborted = p.Log.AbortedTransactions(rp.fetchOffset, upTo.Offset)
			}
			if throttled {
				b.leaderThrottleRecord(res.Size)
			}
			return res.Size
		}
	}
	return 0
}

// readsFollowers reports whether a fetch that is not a follower's may read
// a follower replica, as Kafka's FetchParams.fetchOnlyFromLeader allows:
// a consumer fetch from v11 on (it carries client metadata, KIP-392's
// fetch from follower) and the debugging consumer (replica id -2, used by
// kafka-replica-verification.sh). Such a read stops at the follower's own
// high watermark (or last stable offset), which moves, and wakes parked
// fetches, as the leader's answers move it.
func readsFollowers(version int16, replicaID int32) bool {
	return replicaID == -2 || (replicaID == -1 && version >= 11)
}

// fetchCurrentLeaders fills the current leader of every partition that
// failed with NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH and returns the
// endpoints of those leaders (Fetch v16+).
func (b *Broker) fetchCurrentLeaders(r *request, topics []fetchTopic) []*metadata.Broker {
	if r.hdr.APIVersion < 16 {
		return nil
	}
	var (
		im     *metadata.Image
		nodes  []*metadata.Broker
		listed = map[int32]bool{}
	)
	for ti := range topics {
		t := &topics[ti]
		for pi := range t.parts {
			p := &t.parts[pi]
			if p.errorCode != kerr.NotLeaderForPartition.Code && p.errorCode != kerr.FencedLeaderEpoch.Code {
				continue
			}
			if im == nil {
				im = b.meta.Image()
			}
			leader, epoch, br := currentLeader(im, t.name, p.partition, r.c.ls.name)
			if br == nil {
				continue
			}
			p.currentLeader, p.currentLeaderEpo = leader, epoch
			if !listed[leader] {
				listed[leader] = true
				nodes = append(nodes, br)
			}
		}
	}
	return nodes
}

// encodeFetch writes a FetchResponse with record data as file regions;
// nodes are the v16+ NodeEndpoints (from fetchCurrentLeaders).
func encodeFetch(r *request, topics []fetchTopic, nodes ...*metadata.Broker) *wire.Response {
	return encodeFetchSession(r, 0, invalidSessionID, topics, nodes...)
}

// encodeFetchSession is encodeFetch with a top-level error code and
// session id (v7+).
func encodeFetchSession(r *request, errorCode int16, sessionID int32, topics []fetchTopic, nodes ...*metadata.Broker) *wire.Response {
	v := r.hdr.APIVersion
	flexible := v >= 12
	// Room for every header, so that the response allocates its buffers
	// once and not per partition: a partition's header is at most 56 bytes
	// (with a current leader) and 17 per aborted transaction, a topic's
	// 24 and its name; a file region follows each partition with data.
	size, regions := 64, 0
	for _, t := range topics {
		size += 24 + len(t.name) + len(t.parts)*56
		for _, p := range t.parts {
			size += len(p.aborted)*17 + len(p.legacy)
			if p.hasData && p.legacy == nil {
				regions++
			}
		}
	}
	resp := wire.NewResponseCap(r.hdr.CorrelationID, flexible, size, 2*regions+1)
	buf := resp.Tail()
	if v >= 1 {
		buf = kbin.AppendInt32(buf, 0) // throttle
	}
	if v >= 7 {
		buf = kbin.AppendInt16(buf, errorCode)
		buf = kbin.AppendInt32(buf, sessionID)
	}
	buf = appendArrayLen(buf, len(topics), flexible)
	for _, t := range topics {
		if v >= 13 {
			buf = kbin.AppendUuid(buf, t.id)
		} else if flexible {
			buf = kbin.AppendCompactString(buf, t.name)
		} else {
			buf = kbin.AppendString(buf, t.name)
		}
		buf = appendArrayLen(buf, len(t.parts), flexible)
		for _, p := range t.parts {
			buf = kbin.AppendInt32(buf, p.partition)
			buf = kbin.AppendInt16(buf, p.errorCode)
			buf = kbin.AppendInt64(buf, p.highWatermark)
			if v >= 4 {
				buf = kbin.AppendInt64(buf, p.lastStable)
			}
			if v >= 5 {
				buf = kbin.AppendInt64(buf, p.logStart)
			}
			// aborted transactions (v4+): null unless read_committed found some
			switch {
			case flexible:
				buf = kbin.AppendCompactNullableArrayLen(buf, len(p.aborted), p.aborted == nil)
			case v >= 4:
				buf = kbin.AppendNullableArrayLen(buf, len(p.aborted), p.aborted == nil)
			}
			for _, a := range p.aborted {
				buf = kbin.AppendInt64(buf, a.ProducerID)
				buf = kbin.AppendInt64(buf, a.FirstOffset)
				if flexible {
					buf = append(buf, 0) // aborted transaction tagged fields
				}
			}
			if v >= 11 {
				buf = kbin.AppendInt32(buf, p.preferredReplica)
			}
			size := p.read.Size
			if p.legacy != nil {
				size = int64(len(p.legacy))
			}
			if !p.hasData {
				size = 0
			}
			if flexible {
				buf = kbin.AppendUvarint(buf, uint32(size+1))
			} else {
				buf = kbin.AppendInt32(buf, int32(size))
			}
			if size > 0 && p.legacy != nil {
				buf = append(buf, p.legacy...)
			} else if size > 0 {
				resp.SetTail(buf)
				resp.AppendFile(p.read.File, p.read.Pos, size, p.read.Active)
				buf = resp.Tail()
			}
			switch {
			case v >= 16 && p.currentLeader >= 0:
				buf = append(buf, 1)                 // one partition tagged field:
				buf = kbin.AppendUvarint(buf, 1)     // CurrentLeader
				buf = kbin.AppendUvarint(buf, 4+4+1) // its size
				buf = kbin.AppendInt32(buf, p.currentLeader)
				buf = kbin.AppendInt32(buf, p.currentLeaderEpo)
				buf = append(buf, 0) // its own tagged fields
			case flexible:
				buf = append(buf, 0) // partition tagged fields
			}
		}
		if flexible {
			buf = append(buf, 0) // topic tagged fields
		}
	}
	switch {
	case len(nodes) > 0:
		var ne []byte // NodeEndpoints, response tagged field 0
		ne = kbin.AppendCompactArrayLen(ne, len(nodes))
		for _, n := range nodes {
			ne = kbin.AppendInt32(ne, n.NodeID)
			ne = kbin.AppendCompactString(ne, n.Host)
			ne = kbin.AppendInt32(ne, n.Port)
			ne = kbin.AppendCompactNullableString(ne, n.Rack)
			ne = append(ne, 0) // node tagged fields
		}
		buf = append(buf, 1) // one response tagged field
		buf = kbin.AppendUvarint(buf, 0)
		buf = kbin.AppendUvarint(buf, uint32(len(ne)))
		buf = append(buf, ne...)
	case flexible:
		buf = append(buf, 0) // response tagged fields
	}
	resp.SetTail(buf)
	resp.Finish()
	return resp
}

// respondFetch encodes and sends a fetch response, as fc says: for an
// incremental fetch only the partitions with news, for a full one with the
// id of the session it creates. A consumer's response bytes count against
// its consumer_byte_rate quota; over it, as Kafka does, the answer carries
// no data (the bytes are un-recorded), only the throttle time, the
// connection is muted for that long, and the session is left as it was
// (a full fetch creates none).
func (b *Broker) respondFetch(r *request, fc *fetchContext, topics []fetchTopic, replicaID int32) {
	sel, code, sid := fc.response(topics)
	b.metrics.fetchRead(topics)
	resp := encodeFetchSession(r, code, sid, sel, b.fetchCurrentLeaders(r, sel)...)
	at := 8 // size, correlation id: where the body starts
	if r.hdr.APIVersion >= 12 {
		at++ // header tagged fields
	}
	if replicaID < 0 && b.authz.quotas.Enabled(quota.FetchBytes) {
		now := time.Now()
		q, user, size := b.authz.quotas, r.principal.Name, float64(resp.Size())
		if d := q.Record(quota.FetchBytes, user, r.hdr.ClientID, size, now); d > 0 {
			q.Unrecord(quota.FetchBytes, user, r.hdr.ClientID, size, now)
			r.c.mute(now.Add(d))
			code, sid := fc.throttled()
			resp = encodeFetchSession(r, code, sid, nil)
			if r.hdr.APIVersion >= 1 { // v0 has no throttle time
				binary.BigEndian.PutUint32(resp.Chunks[0].Bytes[at:], uint32(d/time.Millisecond))
			}
			r.respondRaw(resp)
			return
		}
	}
	if code == 0 {
		if id := fc.commit(topics); fc.kind == fullFetch && r.hdr.APIVersion >= 7 {
			binary.BigEndian.PutUint32(resp.Chunks[0].Bytes[at+4+2:], uint32(id))
		}
	}
	b.metrics.fetchSent(r, sel, replicaID)
	r.respondRaw(resp)
}

// encodeFetchError answers a whole fetch with a top-level error (v7+).
func encodeFetchError(r *request, code int16) *wire.Response {
	resp := kmsg.NewPtrFetchResponse()
	resp.ErrorCode = code
	resp.SetVersion(r.hdr.APIVersion)
	return wire.EncodeResponse(r.hdr.CorrelationID, resp.IsFlexible(), resp)
}

func appendArrayLen(buf []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(buf, n)
	}
	return kbin.AppendArrayLen(buf, n)
}

// fetchSessions returns the broker's fetch session cache, sized by
// max.incremental.fetch.session.cache.slots.
func (b *Broker) fetchSessions() *fetchSessionCache { return b.sessions }
