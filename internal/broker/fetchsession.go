package broker

// Fetch sessions (KIP-227), as Kafka's FetchSession.scala (FetchManager,
// FetchSessionCacheShard, FetchSession, CachedPartition and the four
// FetchContexts). A Fetch request (v7+) carries a session id and epoch:
//
//   - id 0, epoch 0: a full fetch that asks for a session. The answer lists
//     every requested partition; a session holding them is created when the
//     cache has room (FullFetchContext) and its id returned, else id 0.
//   - any id, epoch −1: a full fetch that closes the named session (if any)
//     and creates none (SessionlessFetchContext). Requests before v7 are
//     answered this way too.
//   - id N, epoch 0: closes session N and asks for a new one.
//   - id N, epoch E > 0: an incremental fetch (IncrementalFetchContext).
//     Session N must exist (else FETCH_SESSION_ID_NOT_FOUND), expect epoch
//     E (else INVALID_FETCH_SESSION_EPOCH) and use topic ids exactly when
//     the request version does, v13+ (else FETCH_SESSION_TOPIC_ID_ERROR);
//     these errors answer at once with session id 0 and no partitions
//     (SessionErrorContext). Otherwise the request's partitions are added
//     to the session or update its fetch parameters, forgotten_topics_data
//     removes partitions, and the session's epoch moves on. A session left
//     without partitions is closed and the request answered sessionless.
//     Every partition of the session is read, and the answer lists only
//     those with something to say: records, a high watermark or log start
//     offset that differs from the last one sent, or an error. A partition
//     that returned records moves to the end of the session, so that
//     max_bytes does not starve the others.
//
// The cache has max.incremental.fetch.session.cache.slots slots split over
// eight shards, as Kafka 3.8+ does; a new session goes to the next shard in
// turn and takes a slot there, evicting (as tryEvict) a session unused for
// two minutes, or else the smallest evictable session, privileged
// (follower) sessions last, when the new one is at least as large. Session
// ids are random in their shard's range.

import (
	"container/list"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// fetchSessionShards is Kafka's NumFetchSessionCacheShards.
	fetchSessionShards = 8
	// fetchSessionEvictionMs is Kafka's
	// MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: an unused session older
	// than this may be evicted by any new one.
	fetchSessionEvictionMs = 120000

	invalidSessionID = 0
	initialEpoch     = 0
	finalEpoch       = -1
)

// nextFetchEpoch is Kafka's FetchMetadata.nextEpoch.
func nextFetchEpoch(e int32) int32 {
	switch {
	case e < 0:
		return finalEpoch
	case e == math.MaxInt32:
		return 1
	}
	return e + 1
}

// fetchKey identifies a partition in a fetch: by topic id from v13, by
// name before.
type fetchKey struct {
	id        [16]byte
	topic     string
	partition int32
}

// fetchPartReq is what a fetch asks of one partition.
type fetchPartReq struct {
	key                fetchKey
	topic              string   // name; "" for an unknown topic id
	id                 [16]byte // zero before v13
	partition          int32
	fetchOffset        int64
	currentLeaderEpoch int32
	logStartOffset     int64 // the follower's
	maxBytes           int32
	lastFetchedEpoch   int32
	// replicaHW is the high watermark a follower says it knows (KIP-1166,
	// tagged in every flexible version; math.MaxInt64 when not sent).
	replicaHW int64
}

// cachedPartition is a partition of a session: the last fetch parameters
// the client sent, and what the last answer told it (Kafka's
// CachedPartition).
type cachedPartition struct {
	req           fetchPartReq
	highWatermark int64
	logStart      int64
}

// fetchSession is one incremental fetch session. Its fields after mu are
// guarded by mu; cachedSize and the evictable flags by its shard's mu.
type fetchSession struct {
	id           int32
	privileged   bool // created by a follower
	usesTopicIDs bool
	creationMs   int64

	mu         sync.Mutex
	lastUsedMs int64
	epoch      int32
	parts      map[fetchKey]*list.Element // of *cachedPartition, in order
	order      *list.List

	cachedSize                int // -1 until touched
	evictableAll, evictablePr bool
}

func (s *fetchSession) sizeLocked() int { return s.order.Len() }

// updateLocked applies an incremental request: new partitions are added
// at the end, known ones take the new fetch parameters, forgotten ones
// are removed (Kafka's FetchSession.update).
func (s *fetchSession) updateLocked(parts []fetchPartReq, forget []fetchKey) {
	for _, p := range parts {
		if e, ok := s.parts[p.key]; ok {
			e.Value.(*cachedPartition).req = p
			continue
		}
		s.parts[p.key] = s.order.PushBack(&cachedPartition{req: p, highWatermark: -1, logStart: -1})
	}
	for _, k := range forget {
		if e, ok := s.parts[k]; ok {
			s.order.Remove(e)
			delete(s.parts, k)
		}
	}
}

// requestsLocked returns the session's partitions, in session order, with
// their cached fetch parameters, and their elements in s.order.
func (s *fetchSession) requestsLocked() ([]fetchPartReq, []*list.Element) {
	out := make([]fetchPartReq, 0, s.order.Len())
	elems := make([]*list.Element, 0, s.order.Len())
	for e := s.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*cachedPartition).req)
		elems = append(elems, e)
	}
	return out, elems
}

// fetchSessionShard is one of the cache's shards (Kafka's
// FetchSessionCacheShard). Safe for concurrent use.
type fetchSessionShard struct {
	num        int32
	idRange    int32
	maxEntries int

	mu            sync.Mutex
	sessions      map[int32]*fetchSession
	numPartitions int64
}

// fetchSessionCache holds the incremental fetch sessions of a broker.
// Safe for concurrent use; lock order: shard mu, then session mu.
type fetchSessionCache struct {
	shards  []*fetchSessionShard
	counter atomic.Uint32
	now     func() time.Time // time.Now; tests replace it
}

// newFetchSessionCache returns a cache of slots sessions in all.
func newFetchSessionCache(slots int) *fetchSessionCache {
	c := &fetchSessionCache{now: time.Now}
	idRange := int32(math.MaxInt32 / fetchSessionShards)
	for i := range int32(fetchSessionShards) {
		c.shards = append(c.shards, &fetchSessionShard{
			num: i, idRange: idRange, maxEntries: slots / fetchSessionShards,
			sessions: map[int32]*fetchSession{},
		})
	}
	return c
}

func (c *fetchSessionCache) shardFor(id int32) *fetchSessionShard {
	n := int(id / c.shards[0].idRange)
	if n < 0 || n >= len(c.shards) {
		return nil
	}
	return c.shards[n]
}

// size is the number of sessions cached.
func (c *fetchSessionCache) size() int {
	n := 0
	for _, sh := range c.shards {
		sh.mu.Lock()
		n += len(sh.sessions)
		sh.mu.Unlock()
	}
	return n
}

// remove closes session id, reporting whether it existed.
func (c *fetchSessionCache) remove(id int32) bool {
	sh := c.shardFor(id)
	if sh == nil {
		return false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.sessions[id]
	if ok {
		sh.removeLocked(s)
	}
	return ok
}

func (sh *fetchSessionShard) removeLocked(s *fetchSession) {
	if _, ok := sh.sessions[s.id]; !ok {
		return
	}
	delete(sh.sessions, s.id)
	if s.cachedSize > 0 {
		sh.numPartitions -= int64(s.cachedSize)
	}
}

// touchLocked records a use of s at now and recomputes whether it may be
// evicted (Kafka's touch). Called with sh.mu and s.mu held.
func (sh *fetchSessionShard) touchLocked(s *fetchSession, now int64) {
	s.lastUsedMs = now
	if s.cachedSize >= 0 {
		sh.numPartitions -= int64(s.cachedSize)
	}
	s.cachedSize = s.sizeLocked()
	old := now-s.creationMs > fetchSessionEvictionMs
	s.evictablePr = !s.privileged || old
	s.evictableAll = old
	sh.numPartitions += int64(s.cachedSize)
}

// evictKeyLess orders sessions as Kafka's EvictableKey: unprivileged
// before privileged, then smaller before larger, then by id.
func evictKeyLess(aPriv bool, aSize int, aID int32, bPriv bool, bSize int, bID int32) bool {
	if aPriv != bPriv {
		return !aPriv
	}
	if aSize != bSize {
		return aSize < bSize
	}
	return aID < bID
}

// tryEvictLocked frees a slot for a new session of the given size, as
// Kafka's tryEvict: the least recently used session if it has been unused
// for fetchSessionEvictionMs, else the first evictable session by
// (privileged, size, id) if the new one does not sort before it.
func (sh *fetchSessionShard) tryEvictLocked(privileged bool, size int, now int64) bool {
	var lru, ev *fetchSession
	for _, s := range sh.sessions {
		if lru == nil || s.lastUsedMs < lru.lastUsedMs || (s.lastUsedMs == lru.lastUsedMs && s.id < lru.id) {
			lru = s
		}
		if (privileged && s.evictablePr) || (!privileged && s.evictableAll) {
			if ev == nil || evictKeyLess(s.privileged, s.cachedSize, s.id, ev.privileged, ev.cachedSize, ev.id) {
				ev = s
			}
		}
	}
	switch {
	case lru == nil:
		return false
	case now-lru.lastUsedMs > fetchSessionEvictionMs:
		sh.removeLocked(lru)
		return true
	case ev == nil || evictKeyLess(privileged, size, 0, ev.privileged, ev.cachedSize, ev.id):
		return false
	}
	sh.removeLocked(ev)
	return true
}

// maybeCreate creates a session holding parts in the next shard if it has
// room (or can make some) and returns its id, else invalidSessionID.
func (c *fetchSessionCache) maybeCreate(privileged, usesTopicIDs bool, parts []*cachedPartition) int32 {
	sh := c.shards[int(c.counter.Add(1)-1)%len(c.shards)]
	now := c.now().UnixMilli()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.sessions) >= sh.maxEntries && !sh.tryEvictLocked(privileged, len(parts), now) {
		return invalidSessionID
	}
	s := &fetchSession{
		id: sh.newIDLocked(), privileged: privileged, usesTopicIDs: usesTopicIDs, creationMs: now,
		epoch: nextFetchEpoch(initialEpoch), parts: make(map[fetchKey]*list.Element, len(parts)),
		order: list.New(), cachedSize: -1,
	}
	for _, p := range parts {
		if _, dup := s.parts[p.req.key]; !dup {
			s.parts[p.req.key] = s.order.PushBack(p)
		}
	}
	sh.sessions[s.id] = s
	s.mu.Lock()
	sh.touchLocked(s, now)
	s.mu.Unlock()
	return s.id
}

func (sh *fetchSessionShard) newIDLocked() int32 {
	lo := max(1, sh.num*sh.idRange)
	hi := (sh.num + 1) * sh.idRange
	for {
		id := lo + rand.Int32N(hi-lo)
		if _, used := sh.sessions[id]; !used && id != invalidSessionID {
			return id
		}
	}
}

// fetchContextKind says how a fetch is answered.
type fetchContextKind int

const (
	sessionlessFetch fetchContextKind = iota
	fullFetch
	incrementalFetch
	sessionErrorFetch
)

// fetchContext is a fetch request resolved against the session cache
// (Kafka's FetchContext): which partitions to read and how to answer.
type fetchContext struct {
	kind      fetchContextKind
	errorCode int16 // sessionErrorFetch
	parts     []fetchPartReq
	cache     *fetchSessionCache
	session   *fetchSession // incrementalFetch
	// elems are the session's partitions in the order of parts (and of
	// the answers read for them), valid while the session's epoch is the
	// one after reqEpoch: every change of the session's partitions moves
	// the epoch on.
	elems        []*list.Element
	reqEpoch     int32
	privileged   bool
	usesTopicIDs bool
}

// fetchRequestParts returns the partitions of a fetch request in request
// order, a partition named twice keeping its first place and last
// parameters (as Kafka's LinkedHashMap), and the partitions to forget.
// names resolves topic ids (v13+) to names, "" when unknown.
func fetchRequestParts(req *kmsg.FetchRequest, v int16, names func([16]byte) string) ([]fetchPartReq, []fetchKey) {
	var parts []fetchPartReq
	at := map[fetchKey]int{}
	for _, rt := range req.Topics {
		name := rt.Topic
		var id [16]byte
		if v >= 13 {
			id, name = rt.TopicID, names(rt.TopicID)
		}
		for _, rp := range rt.Partitions {
			p := fetchPartReq{
				topic: name, id: id, partition: rp.Partition, fetchOffset: rp.FetchOffset,
				currentLeaderEpoch: rp.CurrentLeaderEpoch, logStartOffset: rp.LogStartOffset,
				maxBytes: rp.PartitionMaxBytes, lastFetchedEpoch: rp.LastFetchedEpoch,
				replicaHW: rp.HighWatermark,
			}
			p.key = fetchKey{partition: rp.Partition}
			if v >= 13 {
				p.key.id = id
			} else {
				p.key.topic = name
			}
			if i, ok := at[p.key]; ok {
				parts[i] = p
				continue
			}
			at[p.key] = len(parts)
			parts = append(parts, p)
		}
	}
	var forget []fetchKey
	if v >= 7 {
		for _, ft := range req.ForgottenTopics {
			for _, p := range ft.Partitions {
				k := fetchKey{partition: p}
				if v >= 13 {
					k.id = ft.TopicID
				} else {
					k.topic = ft.Topic
				}
				forget = append(forget, k)
			}
		}
	}
	return parts, forget
}

// newFetchContext resolves a fetch against the session cache, as Kafka's
// FetchManager.newContext.
func (c *fetchSessionCache) newFetchContext(v int16, sessionID, epoch int32, follower bool,
	parts []fetchPartReq, forget []fetchKey) *fetchContext {
	if v < 7 {
		return &fetchContext{kind: sessionlessFetch, parts: parts}
	}
	if epoch == initialEpoch || epoch == finalEpoch {
		if sessionID != invalidSessionID {
			c.remove(sessionID)
		}
		if epoch == finalEpoch {
			return &fetchContext{kind: sessionlessFetch, parts: parts}
		}
		return &fetchContext{kind: fullFetch, parts: parts, cache: c, privileged: follower, usesTopicIDs: v >= 13}
	}
	sh := c.shardFor(sessionID)
	if sh == nil {
		return &fetchContext{kind: sessionErrorFetch, errorCode: kerr.FetchSessionIDNotFound.Code}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.sessions[sessionID]
	if !ok {
		return &fetchContext{kind: sessionErrorFetch, errorCode: kerr.FetchSessionIDNotFound.Code}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.epoch != epoch:
		return &fetchContext{kind: sessionErrorFetch, errorCode: kerr.InvalidFetchSessionEpoch.Code}
	case s.usesTopicIDs != (v >= 13):
		return &fetchContext{kind: sessionErrorFetch, errorCode: kerr.FetchSessionTopicIDError.Code}
	}
	s.updateLocked(parts, forget)
	if s.sizeLocked() == 0 {
		sh.removeLocked(s)
		return &fetchContext{kind: sessionlessFetch, parts: parts}
	}
	sh.touchLocked(s, c.now().UnixMilli())
	s.epoch = nextFetchEpoch(s.epoch)
	reqs, elems := s.requestsLocked()
	return &fetchContext{kind: incrementalFetch, parts: reqs, elems: elems, session: s, reqEpoch: epoch}
}

// mustRespond reports whether an incremental answer includes a partition
// (Kafka's CachedPartition.maybeUpdateResponseData), and with update set
// records what the answer tells the client.
func (cp *cachedPartition) mustRespond(fp *fetchPart, update bool) bool {
	must := fp.hasData && fp.read.Size > 0
	if cp.highWatermark != fp.highWatermark {
		must = true
		if update {
			cp.highWatermark = fp.highWatermark
		}
	}
	if cp.logStart != fp.logStart {
		must = true
		if update {
			cp.logStart = fp.logStart
		}
	}
	if fp.errorCode != 0 {
		if update {
			cp.highWatermark = -1
		}
		must = true
	}
	if fp.preferredReplica >= 0 {
		must = true
	}
	return must
}

// response returns what to answer: the partitions (for an incremental
// fetch only those that must be sent), the top-level error and the
// session id (for a full fetch, 0 until commit creates the session). It
// changes nothing.
func (fc *fetchContext) response(topics []fetchTopic) ([]fetchTopic, int16, int32) {
	if fc.kind != incrementalFetch {
		return topics, 0, invalidSessionID
	}
	s := fc.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != nextFetchEpoch(fc.reqEpoch) {
		return nil, kerr.InvalidFetchSessionEpoch.Code, s.id
	}
	var out []fetchTopic
	k := 0 // the answers are in the order of fc.elems
	for _, t := range topics {
		nt := fetchTopic{name: t.name, id: t.id}
		for i := range t.parts {
			fp := &t.parts[i]
			if fc.elems[k].Value.(*cachedPartition).mustRespond(fp, false) {
				nt.parts = append(nt.parts, *fp)
			}
			k++
		}
		if len(nt.parts) > 0 {
			out = append(out, nt)
		}
	}
	return out, 0, s.id
}

// throttled returns the top-level error and session id of an answer
// withheld by a quota (Kafka's getThrottledResponse).
func (fc *fetchContext) throttled() (int16, int32) {
	if fc.kind != incrementalFetch {
		return 0, invalidSessionID
	}
	s := fc.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != nextFetchEpoch(fc.reqEpoch) {
		return kerr.InvalidFetchSessionEpoch.Code, s.id
	}
	return 0, s.id
}

// commit records a sent answer: a full fetch creates its session (and
// returns its id, 0 when the cache has no room); an incremental one
// updates what the session's partitions last told the client and moves
// those that returned records to the end.
func (fc *fetchContext) commit(topics []fetchTopic) int32 {
	switch fc.kind {
	case fullFetch:
		reqs := make(map[fetchKey]fetchPartReq, len(fc.parts))
		for _, p := range fc.parts {
			reqs[p.key] = p
		}
		var cached []*cachedPartition
		for ti := range topics {
			t := &topics[ti]
			for i := range t.parts {
				fp := &t.parts[i]
				req, ok := reqs[fc.keyOf(t, fp)]
				if !ok {
					continue
				}
				cached = append(cached, &cachedPartition{req: req, highWatermark: fp.highWatermark, logStart: fp.logStart})
			}
		}
		return fc.cache.maybeCreate(fc.privileged, fc.usesTopicIDs, cached)
	case incrementalFetch:
		s := fc.session
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.epoch != nextFetchEpoch(fc.reqEpoch) {
			return s.id
		}
		k := 0 // the answers are in the order of fc.elems
		for ti := range topics {
			t := &topics[ti]
			for i := range t.parts {
				fp := &t.parts[i]
				e := fc.elems[k]
				k++
				e.Value.(*cachedPartition).mustRespond(fp, true)
				if fp.hasData && fp.read.Size > 0 {
					s.order.MoveToBack(e)
				}
			}
		}
		return s.id
	}
	return invalidSessionID
}

// keyOf is the session key of an answered partition.
func (fc *fetchContext) keyOf(t *fetchTopic, fp *fetchPart) fetchKey {
	if fc.usesTopicIDs || (fc.session != nil && fc.session.usesTopicIDs) {
		return fetchKey{id: t.id, partition: fp.partition}
	}
	return fetchKey{topic: t.name, partition: fp.partition}
}
