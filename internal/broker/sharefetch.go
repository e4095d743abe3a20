package broker

// ShareFetch: v1-2 (Kafka 4.2; v0 was KIP-932's early access)
//
// Fetches records for a share group member from the share-partitions
// this broker leads, acquiring them under a lock of
// share.record.lock.duration.ms (AcquiredRecords carry the ranges and
// delivery counts; Records carries the whole batches around them), and
// applies acknowledgements piggy-backed on the request first.
//
// Share sessions (keyed by group and member on this broker): epoch 0
// opens one with the listed partitions (piggy-backed acknowledgements
// are INVALID_REQUEST then), a positive epoch must equal the session's
// (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND without one) and
// adds the listed partitions and drops the forgotten ones, and -1 closes
// the session after the acknowledgements, releasing what the member
// still holds on its partitions. A closed connection closes its sessions
// the same way. At most group.share.max.share.sessions sessions
// (SHARE_SESSION_LIMIT_REACHED). An incremental answer lists only
// partitions with records, errors or acknowledgements, and partitions new
// to the session.
//
// With nothing to acquire the request waits up to MaxWaitMillis for an
// append or a release. v2's IsRenewAck (KIP-1222) carries only
// acknowledgements (RENEW allowed) and fetches nothing. Acquisition is
// per record (Kafka acquires whole batches where it can); ShareAcquireMode
// and BatchSize are accepted and MaxRecords is the limit.
//
// The handler runs on its own goroutine: acknowledgements wait for the
// share coordinator to commit them, and fetches long-poll.

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/share"
	"github.com/silkworm/silkworm/internal/storage"
)

func init() { register(kmsg.ShareFetch, 1, 2, handleShareFetch) }

// shareTP is a topic-partition of a share session.
type shareTP struct {
	id [16]byte
	p  int32
}

type shareSessionKey struct{ group, member string }

// shareSession is one member's share session on this broker.
type shareSession struct {
	epoch int32
	conn  *conn
	// parts is the session's partitions; true while one must appear in
	// the next answer (new to the session, or its last answer failed).
	parts map[shareTP]bool
}

// shareSessions is the broker's share session cache. Safe for
// concurrent use.
type shareSessions struct {
	max int

	mu      sync.Mutex
	m       map[shareSessionKey]*shareSession
	watched map[*conn]bool // connections with a watchShareConn goroutine
}

func newShareSessions(max int) *shareSessions {
	return &shareSessions{max: max, m: map[shareSessionKey]*shareSession{}, watched: map[*conn]bool{}}
}

// open replaces key's session with a new one at epoch 0; watch reports
// whether the connection needs a watcher (its first session).
func (s *shareSessions) open(key shareSessionKey, c *conn, parts []shareTP) (ss *shareSession, watch bool, code int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok && s.max > 0 && len(s.m) >= s.max {
		return nil, false, kerr.ShareSessionLimitReached.Code
	}
	ss = &shareSession{conn: c, parts: map[shareTP]bool{}}
	for _, tp := range parts {
		ss.parts[tp] = true
	}
	s.m[key] = ss
	if !s.watched[c] {
		s.watched[c] = true
		watch = true
	}
	return ss, watch, 0
}

// ofConn lists the sessions of connection c and forgets its watcher.
func (s *shareSessions) ofConn(c *conn) map[shareSessionKey]*shareSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watched, c)
	out := map[shareSessionKey]*shareSession{}
	for k, ss := range s.m {
		if ss.conn == c {
			out[k] = ss
		}
	}
	return out
}

// check returns key's session if epoch is its current epoch.
func (s *shareSessions) check(key shareSessionKey, epoch int32) (*shareSession, int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.m[key]
	if ss == nil {
		return nil, kerr.ShareSessionNotFound.Code
	}
	if epoch != ss.epoch {
		return nil, kerr.InvalidShareSessionEpoch.Code
	}
	return ss, 0
}

// update adds and forgets partitions of a session.
func (s *shareSessions) update(ss *shareSession, add []shareTP, forget []shareTP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tp := range add {
		if _, ok := ss.parts[tp]; !ok {
			ss.parts[tp] = true
		}
	}
	for _, tp := range forget {
		delete(ss.parts, tp)
	}
}

// partitions lists a session's partitions in order, rotated by its
// epoch so every partition gets its turn to fill a response first.
func (s *shareSessions) partitions(ss *shareSession) []shareTP {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]shareTP, 0, len(ss.parts))
	for tp := range ss.parts {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b shareTP) int {
		if c := slices.Compare(a.id[:], b.id[:]); c != 0 {
			return c
		}
		return int(a.p - b.p)
	})
	if n := len(out); n > 1 {
		k := int(ss.epoch) % n
		out = append(out[k:], out[:k]...)
	}
	return out
}

// pending lists the partitions that must appear in the session's next
// answer.
func (s *shareSessions) pending(ss *shareSession) []shareTP {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []shareTP
	for tp, needs := range ss.parts {
		if needs {
			out = append(out, tp)
		}
	}
	return out
}

// answered bumps the session epoch after a successful request and
// records which partitions the answer carried.
func (s *shareSessions) answered(ss *shareSession, carried map[shareTP]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.epoch++
	if ss.epoch < 1 {
		ss.epoch = 1
	}
	for tp, failed := range carried {
		if _, ok := ss.parts[tp]; ok {
			ss.parts[tp] = failed
		}
	}
}

// close removes key's session if it is still ss and returns its
// partitions.
func (s *shareSessions) close(key shareSessionKey, ss *shareSession) ([]shareTP, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] != ss {
		return nil, false
	}
	delete(s.m, key)
	out := make([]shareTP, 0, len(ss.parts))
	for tp := range ss.parts {
		out = append(out, tp)
	}
	return out, true
}

// closeShareSession closes a session and releases what its member holds
// on the session's partitions.
func (b *Broker) closeShareSession(key shareSessionKey, ss *shareSession) {
	parts, ok := b.shares.sessions.close(key, ss)
	if !ok {
		return
	}
	keys := make([]share.Key, 0, len(parts))
	for _, tp := range parts {
		keys = append(keys, share.Key{Group: key.group, TopicID: tp.id, Partition: tp.p})
	}
	b.shares.mgr.ReleaseMember(key.group, key.member, keys)
	if !b.shares.sessions.hasGroup(key.group) {
		b.shares.mgr.DropGroup(key.group)
	}
}

// hasGroup reports whether a session of group is open.
func (s *shareSessions) hasGroup(group string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if k.group == group {
			return true
		}
	}
	return false
}

// watchShareConn closes the share sessions of c when it goes away, as
// Kafka does when a connection disconnects.
func (b *Broker) watchShareConn(c *conn) {
	select {
	case <-c.done:
		for key, ss := range b.shares.sessions.ofConn(c) {
			b.closeShareSession(key, ss)
		}
	case <-b.stopWatch:
	}
}

func handleShareFetch(b *Broker, r *request) { b.goShare(r, b.shareFetch) }

// shareFetchAnswer builds a ShareFetch response, one entry per partition.
type shareFetchAnswer struct {
	resp  *kmsg.ShareFetchResponse
	index map[shareTP]*kmsg.ShareFetchResponseTopicPartition
	order []shareTP
	nodes map[int32]*metadata.Broker
}

func (a *shareFetchAnswer) part(tp shareTP) *kmsg.ShareFetchResponseTopicPartition {
	if p := a.index[tp]; p != nil {
		return p
	}
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.Partition = tp.p
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
	// Empty, not null, records for an entry that only answers an
	// acknowledgement or an error: librdkafka's share consumer drops the
	// whole response on a null record set, Java's takes either.
	p.Records = []byte{}
	a.index[tp] = &p
	a.order = append(a.order, tp)
	return &p
}

// finish copies the entries into the response, grouped by topic.
func (a *shareFetchAnswer) finish() {
	topics := map[[16]byte]int{}
	for _, tp := range a.order {
		i, ok := topics[tp.id]
		if !ok {
			i = len(a.resp.Topics)
			topics[tp.id] = i
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tp.id
			a.resp.Topics = append(a.resp.Topics, t)
		}
		a.resp.Topics[i].Partitions = append(a.resp.Topics[i].Partitions, *a.index[tp])
	}
	for _, n := range a.nodes {
		ne := kmsg.NewShareFetchResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = n.NodeID, n.Host, n.Port, n.Rack
		a.resp.NodeEndpoints = append(a.resp.NodeEndpoints, ne)
	}
	slices.SortFunc(a.resp.NodeEndpoints, func(x, y kmsg.ShareFetchResponseNodeEndpoint) int { return int(x.NodeID - y.NodeID) })
}

// shareTarget is a session partition this broker leads.
type shareTarget struct {
	tp  shareTP
	key share.Key
	p   *partition.Partition
}

func (b *Broker) shareFetch(r *request) {
	req := r.kreq.(*kmsg.ShareFetchRequest)
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	groupID, memberID, lim, code := b.shareRequestStart(r, req.GroupID, req.MemberID)
	resp.AcquisitionLockTimeoutMillis = int32(lim.LockDuration / time.Millisecond)
	fail := func(code int16) {
		resp.ErrorCode = code
		r.respond(resp)
	}
	if code != 0 {
		fail(code)
		return
	}
	renew := req.Version >= 2 && req.IsRenewAck
	if groupID == "" || memberID == "" || len(memberID) > 36 ||
		(renew && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0)) {
		fail(kerr.InvalidRequest.Code)
		return
	}
	key := shareSessionKey{groupID, memberID}
	hasAcks := false
	var listed []shareTP
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			listed = append(listed, shareTP{t.TopicID, p.Partition})
			if len(p.AcknowledgementBatches) > 0 {
				hasAcks = true
			}
		}
	}
	var forgotten []shareTP
	for _, t := range req.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forgotten = append(forgotten, shareTP{t.TopicID, p})
		}
	}
	ans := &shareFetchAnswer{resp: resp, index: map[shareTP]*kmsg.ShareFetchResponseTopicPartition{}, nodes: map[int32]*metadata.Broker{}}
	sessions := b.shares.sessions
	var ss *shareSession
	switch {
	case req.ShareSessionEpoch == 0:
		if hasAcks {
			fail(kerr.InvalidRequest.Code)
			return
		}
		ss2, watch, code := sessions.open(key, r.c, listed)
		if code != 0 {
			fail(code)
			return
		}
		ss = ss2
		if watch {
			go b.watchShareConn(r.c)
		}
	case req.ShareSessionEpoch == -1:
		s := sessions.get(key)
		if s == nil {
			fail(kerr.ShareSessionNotFound.Code)
			return
		}
		b.applyShareFetchAcks(r, req, groupID, memberID, renew, lim, ans)
		b.closeShareSession(key, s)
		ans.finish()
		r.respond(resp)
		return
	default:
		var code int16
		if ss, code = sessions.check(key, req.ShareSessionEpoch); code != 0 {
			fail(code)
			return
		}
		sessions.update(ss, listed, forgotten)
	}
	b.applyShareFetchAcks(r, req, groupID, memberID, renew, lim, ans)
	if renew {
		sessions.answered(ss, nil)
		ans.finish()
		r.respond(resp)
		return
	}

	// The partitions to fetch: the session's, those this broker leads.
	im := b.meta.Image()
	var targets []shareTarget
	for _, tp := range sessions.partitions(ss) {
		name := b.topicNameByID(tp.id)
		switch {
		case name == "":
			ans.part(tp).ErrorCode = kerr.UnknownTopicID.Code
			continue
		case !b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name):
			ans.part(tp).ErrorCode = kerr.TopicAuthorizationFailed.Code
			continue
		}
		_, p := b.partition(name, tp.p)
		if p == nil || !p.IsLeader() {
			t := im.Topics[name]
			if t == nil || tp.p < 0 || int(tp.p) >= len(t.Partitions) {
				ans.part(tp).ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			rp := ans.part(tp)
			rp.ErrorCode = kerr.NotLeaderForPartition.Code
			if leader, epoch, br := currentLeader(im, name, tp.p, r.c.ls.name); br != nil {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
				ans.nodes[leader] = br
			}
			continue
		}
		targets = append(targets, shareTarget{tp: tp, key: share.Key{Group: groupID, TopicID: tp.id, Partition: tp.p}, p: p})
	}

	maxRecords := int(req.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = 500
	}
	readCommitted := b.groupConfigValue(groupID, "share.isolation.level") == "read_committed"
	got := b.acquireShare(memberID, targets, maxRecords, req.MaxBytes, readCommitted, lim, ans)
	anyErr := false
	for _, p := range ans.index {
		if p.ErrorCode != 0 {
			anyErr = true
		}
	}
	if got == 0 && !anyErr && req.MaxWaitMillis > 0 && len(targets) > 0 {
		got = b.waitShareFetch(r, req, memberID, targets, maxRecords, readCommitted, lim, ans)
		if got < 0 {
			r.respondNone() // the connection closed
			return
		}
	}
	carried := map[shareTP]bool{}
	for tp, p := range ans.index {
		carried[tp] = p.ErrorCode != 0
	}
	// Partitions new to the session appear once even without news.
	for _, tp := range sessions.pending(ss) {
		if ans.index[tp] == nil {
			ans.part(tp)
			carried[tp] = false
		}
	}
	sessions.answered(ss, carried)
	ans.finish()
	r.respond(resp)
}

// get returns key's session, or nil.
func (s *shareSessions) get(key shareSessionKey) *shareSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

// applyShareFetchAcks applies the piggy-backed acknowledgements of a
// ShareFetch into the answer's AcknowledgeErrorCode.
func (b *Broker) applyShareFetchAcks(r *request, req *kmsg.ShareFetchRequest, groupID, memberID string, renew bool, lim share.Limits, ans *shareFetchAnswer) {
	released := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			batches := make([]share.AckBatch, 0, len(p.AcknowledgementBatches))
			for _, ab := range p.AcknowledgementBatches {
				batches = append(batches, share.AckBatch{FirstOffset: ab.FirstOffset, LastOffset: ab.LastOffset, Types: ackTypes(ab.AcknowledgeTypes)})
			}
			tp := shareTP{t.TopicID, p.Partition}
			code, rel, _ := b.shareAcknowledge(r, groupID, memberID, tp, batches, renew, lim)
			ans.part(tp).AcknowledgeErrorCode = code
			released = released || rel
		}
	}
	if released {
		b.shares.mgr.Notify()
	}
}

func ackTypes(in []int8) []share.AckType {
	out := make([]share.AckType, len(in))
	for i, t := range in {
		out[i] = share.AckType(t)
	}
	return out
}

// shareInitialOffset is where a share-partition with no state starts,
// as share.auto.offset.reset says.
func (b *Broker) shareInitialOffset(groupID string, p *partition.Partition) func() int64 {
	return func() int64 {
		reset := b.groupConfigValue(groupID, "share.auto.offset.reset")
		switch {
		case reset == "earliest":
			return p.Log.LogStartOffset()
		case strings.HasPrefix(reset, "by_duration:"):
			if d, ok := parseISODuration(strings.TrimPrefix(reset, "by_duration:")); ok {
				if off, _, found, err := p.Log.OffsetForTimestamp(time.Now().Add(-d).UnixMilli()); err == nil && found {
					return off
				}
			}
		}
		return p.HighWatermark()
	}
}

// acquireShare acquires records for member from targets, in order, until
// maxRecords or maxBytes, reading the batches that hold them into the
// answer. It returns how many records it acquired.
func (b *Broker) acquireShare(member string, targets []shareTarget, maxRecords int, maxBytes int32, readCommitted bool,
	lim share.Limits, ans *shareFetchAnswer) int {
	got := 0
	bytes := int64(0)
	if maxBytes < 0 {
		maxBytes = 50 << 20
	}
	// MaxBytes 0 acquires nothing, as Kafka answers fetch.max.bytes=0
	// (librdkafka's 0180 test): the loop below stops at once.
	now := time.Now()
	for _, t := range targets {
		if got >= maxRecords || bytes >= int64(maxBytes) {
			break
		}
		sp, err := b.shares.mgr.Partition(t.key, t.p.LeaderEpoch(), b.shareInitialOffset(t.key.Group, t.p))
		if err != nil {
			b.log.Debug("load share-partition", "share.partition", t.key.String(), "err", err)
			ans.part(t.tp).ErrorCode = shareLoadErrorCode(err)
			continue
		}
		upTo := t.p.HighWatermarkPosition()
		if readCommitted {
			upTo = t.p.LastStablePosition()
		}
		ranges := sp.Acquire(member, t.p.Log.LogStartOffset(), upTo.Offset, maxRecords-got, lim, now)
		if len(ranges) == 0 {
			continue
		}
		data, err := readShareBatches(t.p, ranges[0].FirstOffset, ranges[len(ranges)-1].LastOffset, int32(int64(maxBytes)-bytes), upTo)
		covered := ranges[0].FirstOffset - 1
		if err == nil && len(data) > 0 {
			covered = lastOffsetIn(data)
		}
		if covered < ranges[len(ranges)-1].LastOffset {
			ranges = sp.Unacquire(member, covered+1, ranges)
		}
		if err != nil {
			ans.part(t.tp).ErrorCode = errorCode(err)
			continue
		}
		if readCommitted && len(ranges) > 0 {
			ranges = b.archiveAborted(t, sp, member, data, ranges, lim, now)
		}
		if len(ranges) == 0 {
			continue
		}
		rp := ans.part(t.tp)
		rp.Records = data
		for _, rg := range ranges {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = rg.FirstOffset, rg.LastOffset, rg.DeliveryCount
			rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
			got += int(rg.LastOffset - rg.FirstOffset + 1)
		}
		bytes += int64(len(data))
		if err := b.shares.mgr.Persist(t.key, sp); err != nil {
			b.log.Debug("persist share-partition", "share.partition", t.key.String(), "err", err)
		}
	}
	return got
}

// shareLoadErrorCode is the partition error for a share-partition whose
// state could not be loaded: retriable, the client tries again.
func shareLoadErrorCode(err error) int16 {
	if errors.Is(err, partition.ErrNotLeader) {
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// readShareBatches reads whole batches from first up to the one holding
// last (or maxBytes, at least one batch), below upTo.
func readShareBatches(p *partition.Partition, first, last int64, maxBytes int32, upTo storage.Position) ([]byte, error) {
	res, err := p.Log.Read(first, max(maxBytes, 1), upTo, true)
	if err != nil || res.Size == 0 {
		return nil, err
	}
	buf := make([]byte, res.Size)
	if _, err := res.File.ReadAt(buf, res.Pos); err != nil {
		return nil, err
	}
	// Keep batches up to the one holding last.
	n := 0
	for n < len(buf) {
		h, err := record.ParseHeader(buf[n:])
		if err != nil || int64(n)+h.Size() > int64(len(buf)) {
			break
		}
		if h.BaseOffset > last {
			break
		}
		n += int(h.Size())
	}
	return buf[:n], nil
}

// lastOffsetIn is the last offset of the last whole batch in data.
func lastOffsetIn(data []byte) int64 {
	last := int64(-1)
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if err != nil || h.Size() > int64(len(data)) {
			break
		}
		last = h.LastOffset()
		data = data[h.Size():]
	}
	return last
}

// waitShareFetch waits for records to acquire until the request's
// MaxWaitMillis; -1 when the connection closed meanwhile.
func (b *Broker) waitShareFetch(r *request, req *kmsg.ShareFetchRequest, member string, targets []shareTarget, maxRecords int,
	readCommitted bool, lim share.Limits, ans *shareFetchAnswer) int {
	wake := make(chan struct{}, 1)
	for _, t := range targets {
		t.p.Watch(wake)
		defer t.p.Unwatch(wake)
	}
	b.shares.mgr.Watch(wake)
	defer b.shares.mgr.Unwatch(wake)
	select { // what happened before the watches woke nobody
	case wake <- struct{}{}:
	default:
	}
	timer := time.NewTimer(max(time.Duration(req.MaxWaitMillis)*time.Millisecond-time.Since(r.received), 0))
	defer timer.Stop()
	for {
		select {
		case <-wake:
			if got := b.acquireShare(member, targets, maxRecords, req.MaxBytes, readCommitted, lim, ans); got > 0 {
				return got
			}
		case <-timer.C:
			return 0
		case <-r.c.done:
			return -1
		case <-b.stopWatch:
			return 0
		}
	}
}

// parseISODuration parses the PnDTnHnMn.nS durations of
// share.auto.offset.reset's by_duration.
func parseISODuration(s string) (time.Duration, bool) {
	if !strings.HasPrefix(s, "P") {
		return 0, false
	}
	s = s[1:]
	var d time.Duration
	inTime := false
	num := ""
	for _, c := range s {
		switch {
		case c == 'T':
			inTime = true
		case c >= '0' && c <= '9' || c == '.':
			num += string(c)
		default:
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			num = ""
			switch {
			case c == 'D' && !inTime:
				d += time.Duration(f * float64(24*time.Hour))
			case c == 'H' && inTime:
				d += time.Duration(f * float64(time.Hour))
			case c == 'M' && inTime:
				d += time.Duration(f * float64(time.Minute))
			case c == 'S' && inTime:
				d += time.Duration(f * float64(time.Second))
			default:
				return 0, false
			}
		}
	}
	return d, num == ""
}

// archiveAborted archives the acquired records of aborted transactions
// in data (read_committed: the consumer must never see them, and share
// fetches carry no aborted-transaction list) and returns the acquired
// ranges without them.
func (b *Broker) archiveAborted(t shareTarget, sp *share.Partition, member string, data []byte, ranges []share.AcquiredRange,
	lim share.Limits, now time.Time) []share.AcquiredRange {
	aborted := t.p.Log.AbortedTransactions(ranges[0].FirstOffset, ranges[len(ranges)-1].LastOffset+1)
	if len(aborted) == 0 {
		return ranges
	}
	var drop [][2]int64 // ascending offset intervals of aborted batches
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if err != nil || h.Size() > int64(len(data)) {
			break
		}
		if h.IsTransactional() && !h.IsControl() {
			for _, a := range aborted {
				if a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.BaseOffset <= a.LastOffset {
					drop = append(drop, [2]int64{h.BaseOffset, h.LastOffset()})
					break
				}
			}
		}
		data = data[h.Size():]
	}
	if len(drop) == 0 {
		return ranges
	}
	var gaps []share.AckBatch
	var kept []share.AcquiredRange
	for _, r := range ranges {
		cur := r.FirstOffset
		for _, d := range drop {
			lo, hi := max(d[0], cur), min(d[1], r.LastOffset)
			if lo > hi {
				continue
			}
			if lo > cur {
				kept = append(kept, share.AcquiredRange{FirstOffset: cur, LastOffset: lo - 1, DeliveryCount: r.DeliveryCount})
			}
			gaps = append(gaps, share.AckBatch{FirstOffset: lo, LastOffset: hi, Types: []share.AckType{share.AckGap}})
			cur = hi + 1
		}
		if cur <= r.LastOffset {
			kept = append(kept, share.AcquiredRange{FirstOffset: cur, LastOffset: r.LastOffset, DeliveryCount: r.DeliveryCount})
		}
	}
	if _, err := sp.Acknowledge(member, gaps, false, lim, now); err != nil {
		b.log.Debug("archive aborted records", "share.partition", t.key.String(), "err", err)
		return ranges
	}
	return kept
}

// shareRequestStart is the common start of ShareFetch and
// ShareAcknowledge: the group and member ids (null as ""), the group's
// share limits (for the acquisition lock timeout every answer carries),
// and GROUP_AUTHORIZATION_FAILED without READ on the group.
func (b *Broker) shareRequestStart(r *request, group, member *string) (groupID, memberID string, lim share.Limits, code int16) {
	if group != nil {
		groupID = *group
	}
	if member != nil {
		memberID = *member
	}
	lim = b.shareLimits(groupID)
	if !b.authorizeGroup(r, kmsg.ACLOperationRead, groupID) {
		code = kerr.GroupAuthorizationFailed.Code
	}
	return groupID, memberID, lim, code
}
