package group

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// Versions of the __consumer_offsets records written (Kafka's current
// non-flexible ones; all versions are read).
const (
	offsetKeyVersion     = 1
	offsetValueVersion   = 3
	groupKeyVersion      = 2
	groupValueVersion    = 3
	maxReplayUncompessed = 64 << 20
)

func offsetRecordKey(group string, k offsetKey) []byte {
	key := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: k.topic, Partition: k.partition}
	return key.AppendTo(nil)
}

// offsetRecordValue is the OffsetCommitValue of o: version 1, with its
// expire timestamp, when o has one (as Kafka's
// GroupCoordinatorRecordHelpers writes it), else version 3.
func offsetRecordValue(o committed) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetValueVersion
	v.Offset = o.offset
	v.LeaderEpoch = o.leaderEpoch
	v.Metadata = o.metadata
	v.CommitTimestamp = o.commitTime.UnixMilli()
	if !o.expire.IsZero() {
		v.Version = 1
		v.ExpireTimestamp = o.expire.UnixMilli()
	}
	return v.AppendTo(nil)
}

// committedFromValue is the offset an OffsetCommitValue record holds.
func committedFromValue(v *kmsg.OffsetCommitValue) committed {
	o := committed{offset: v.Offset, leaderEpoch: -1, metadata: v.Metadata, commitTime: time.UnixMilli(v.CommitTimestamp)}
	if v.Version >= 3 {
		o.leaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 && v.ExpireTimestamp >= 0 {
		o.expire = time.UnixMilli(v.ExpireTimestamp)
	}
	return o
}

func groupRecordKey(group string) []byte {
	key := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return key.AppendTo(nil)
}

// buildBatch makes one uncompressed batch of recs stamped now.
func buildBatch(now time.Time, recs []record.Record) []byte {
	return record.BuildBatch(record.BuildOptions{FirstTimestamp: now.UnixMilli()}, recs)
}

// storeLocked writes the group's metadata (generation, protocol, leader,
// members with subscription and assignment). It returns 0 or the Kafka
// error code for the SyncGroup that triggered it.
func (g *group) storeLocked() int16 {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = g.stateTime.UnixMilli()
	for _, m := range g.members {
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = m.id
		vm.InstanceID = m.instanceID
		vm.ClientID = m.clientID
		vm.ClientHost = m.clientHost
		vm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout / time.Millisecond)
		vm.SessionTimeoutMillis = int32(m.sessionTimeout / time.Millisecond)
		vm.Subscription = m.metadataFor(g.protocol)
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		vm.Assignment = m.assignment
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	batch := buildBatch(g.c.clock(), []record.Record{{Key: groupRecordKey(g.id), Value: v.AppendTo(nil)}})
	if len(batch) > g.c.cfg.MaxBatchBytes {
		// Kafka maps a too large group record to UNKNOWN_SERVER_ERROR.
		g.c.logger.Warn("group metadata too large", "group", g.id, "bytes", len(batch), "max", g.c.cfg.MaxBatchBytes)
		return kerr.UnknownServerError.Code
	}
	if err := g.log.Append(batch); err != nil {
		g.c.logger.Error("store group metadata", "group", g.id, "err", err)
		return kerr.CoordinatorNotAvailable.Code
	}
	return 0
}

// replay rebuilds the groups of one __consumer_offsets partition.
func replay(c *Coordinator, log Log) (map[string]*group, error) {
	groups := map[string]*group{}
	hasMeta := map[string]bool{}
	get := func(id string) *group {
		g := groups[id]
		if g == nil {
			g = newGroup(c, id, log)
			groups[id] = g
		}
		return g
	}
	var txns txnReplay
	err := log.Replay(func(batch []byte) error {
		if c.closing.Load() {
			return ErrClosed
		}
		h, err := record.ParseHeader(batch)
		if err != nil {
			return err
		}
		if done, err := txns.batch(c, get, hasMeta, &h, batch); done || err != nil {
			return err
		}
		if h.IsControl() {
			return nil
		}
		recs, err := record.Records(batch, maxReplayUncompessed)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		for i := range recs {
			if err := applyRecord(c, get, hasMeta, &recs[i]); err != nil {
				return fmt.Errorf("record at offset %d: %w", h.BaseOffset+int64(recs[i].OffsetDelta), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	txns.finish(get)
	for _, g := range groups {
		finishConsumerReplay(g)
	}
	for id, g := range groups {
		if !hasMeta[id] && len(g.offsets) == 0 && len(g.txnOffsets) == 0 {
			delete(groups, id)
		}
	}
	return groups, nil
}

func applyRecord(c *Coordinator, get func(string) *group, hasMeta map[string]bool, r *record.Record) error {
	if len(r.Key) < 2 {
		return fmt.Errorf("key of %d bytes", len(r.Key))
	}
	switch version := int16(binary.BigEndian.Uint16(r.Key)); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(r.Key); err != nil {
			return fmt.Errorf("offset commit key: %w", err)
		}
		g := get(k.Group)
		key := offsetKey{k.Topic, k.Partition}
		if r.Value == nil {
			delete(g.offsets, key)
			return nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(r.Value); err != nil {
			return fmt.Errorf("offset commit value: %w", err)
		}
		g.offsets[key] = committedFromValue(&v)
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(r.Key); err != nil {
			return fmt.Errorf("group metadata key: %w", err)
		}
		g := get(k.Group)
		if r.Value != nil {
			g.cg = nil // a classic group again
		}
		g.members = map[string]*member{}
		g.static = map[string]string{}
		g.protocolType, g.protocol, g.leader, g.generation = "", "", "", 0
		g.state = Empty
		if r.Value == nil {
			hasMeta[k.Group] = false
			return nil
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(r.Value); err != nil {
			return fmt.Errorf("group metadata value: %w", err)
		}
		hasMeta[k.Group] = true
		g.protocolType = v.ProtocolType
		g.generation = v.Generation
		if v.Protocol != nil {
			g.protocol = *v.Protocol
		}
		if v.Leader != nil {
			g.leader = *v.Leader
		}
		g.stateTime = c.clock()
		if v.Version >= 2 && v.CurrentStateTimestamp >= 0 {
			g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
		}
		for _, vm := range v.Members {
			g.joinSeq++
			m := &member{
				id: vm.MemberID, instanceID: vm.InstanceID, clientID: vm.ClientID, clientHost: vm.ClientHost,
				sessionTimeout: time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
				protocolType:   v.ProtocolType,
				protocols:      []protocol{{name: g.protocol, metadata: vm.Subscription}},
				assignment:     vm.Assignment,
				joinSeq:        g.joinSeq,
			}
			m.rebalanceTimeout = m.sessionTimeout
			if v.Version >= 1 && vm.RebalanceTimeoutMillis > 0 {
				m.rebalanceTimeout = time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond
			}
			g.members[m.id] = m
			if m.instanceID != nil {
				g.static[*m.instanceID] = m.id
			}
		}
		if len(g.members) > 0 {
			g.state = Stable
		}
	case cgKeyGroup, cgKeyMember, cgKeyTargetEpoch, cgKeyTargetMember, cgKeyCurrent:
		return applyConsumerRecord(get, hasMeta, version, r)
	default:
		// Kafka fails on unknown key versions; a newer broker's records we
		// cannot read are skipped instead of making the partition unusable.
		c.logger.Warn("skipping __consumer_offsets record with unknown key version", "version", version)
	}
	return nil
}

// OffsetCommit handles an OffsetCommit request (v0-10; the caller maps
// v10's topic ids to names). For a consumer group the generation is the
// member epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID). All offsets of the
// request that pass the checks are written as one batch, and answered
// only once the batch is in the log.
func (c *Coordinator) OffsetCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	setAll := func(code int16) *kmsg.OffsetCommitResponse {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].ErrorCode == 0 {
					resp.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
		return resp
	}
	generation := req.Generation
	if req.GetVersion() == 0 {
		generation = -1
	}
	g, code := c.group(req.Group, generation < 0)
	if code != 0 {
		return setAll(code)
	}
	if g == nil {
		// Not a group we know, and the commit claims a generation.
		return setAll(kerr.IllegalGeneration.Code)
	}
	g.mu.Lock()
	defer g.unlock()
	var perPartition func(string, int32) int16
	if g.cg != nil && g.state != Dead {
		code, perPartition = g.checkConsumerCommitLocked(req.MemberID, generation, req.GetVersion())
	} else {
		code = g.commitCheckLocked(req.MemberID, req.InstanceID, generation)
	}
	if code != 0 {
		return setAll(code)
	}
	now := c.clock()
	type pending struct {
		t, p int
		key  offsetKey
		o    committed
	}
	var writes []pending
	var recs []record.Record
	for i, rt := range req.Topics {
		for j, rp := range rt.Partitions {
			sp := &resp.Topics[i].Partitions[j]
			if !c.host.PartitionExists(rt.Topic, rp.Partition) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			if perPartition != nil {
				if sp.ErrorCode = perPartition(rt.Topic, rp.Partition); sp.ErrorCode != 0 {
					continue
				}
			}
			meta := ""
			if rp.Metadata != nil {
				meta = *rp.Metadata
			}
			if len(meta) > c.cfg.OffsetMetadataMaxBytes {
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			key := offsetKey{rt.Topic, rp.Partition}
			o := committed{offset: rp.Offset, leaderEpoch: rp.LeaderEpoch, metadata: meta, commitTime: now}
			if v := req.GetVersion(); v >= 2 && v <= 4 && req.RetentionTimeMillis != -1 {
				// Kafka's OffsetMetadataManager: an explicit retention
				// sets this offset's own expiry.
				o.expire = now.Add(time.Duration(req.RetentionTimeMillis) * time.Millisecond)
			}
			writes = append(writes, pending{i, j, key, o})
			recs = append(recs, record.Record{Key: offsetRecordKey(g.id, key), Value: offsetRecordValue(o), OffsetDelta: int32(len(recs))})
		}
	}
	if len(recs) == 0 {
		return resp
	}
	batch := buildBatch(now, recs)
	code = 0
	if len(batch) > c.cfg.MaxBatchBytes {
		code = kerr.InvalidCommitOffsetSize.Code
	} else if err := g.log.Append(batch); err != nil {
		c.logger.Error("commit offsets", "group", g.id, "err", err)
		code = kerr.CoordinatorNotAvailable.Code
	}
	for _, w := range writes {
		if code != 0 {
			resp.Topics[w.t].Partitions[w.p].ErrorCode = code
			continue
		}
		g.offsets[w.key] = w.o
	}
	return resp
}

// commitCheckLocked is Kafka's check of who may commit: anyone with
// generation -1 while the group is Empty, otherwise a member of the
// current generation outside CompletingRebalance.
func (g *group) commitCheckLocked(memberID string, instanceID *string, generation int32) int16 {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if g.cg != nil { // a transactional commit to a consumer group
		code, perPartition := g.checkConsumerCommitLocked(memberID, generation, -1)
		if code == 0 && perPartition != nil {
			code = kerr.StaleMemberEpoch.Code // older epochs: plain commits only
		}
		return code
	}
	if generation < 0 && g.state == Empty {
		return 0
	}
	m, code := g.validateMemberLocked(memberID, instanceID)
	if code != 0 {
		return code
	}
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if g.state == CompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	g.resetHeartbeatLocked(m)
	return 0
}

// fetchedPartition is one answer of OffsetFetch.
type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	code        int16
}

type fetchedTopic struct {
	topic      string
	partitions []fetchedPartition
}

// fetchTopic is one topic asked for in OffsetFetch.
type fetchTopic struct {
	topic      string
	partitions []int32
}

// fetchOffsets answers one group of an OffsetFetch: topics nil means every
// committed offset. Offsets never committed are -1.
func (c *Coordinator) fetchOffsets(groupID string, memberID *string, memberEpoch int32, topics []fetchTopic) ([]fetchedTopic, int16) {
	g, code := c.group(groupID, false)
	if code != 0 {
		return nil, code
	}
	var offsets map[offsetKey]committed
	if g != nil {
		g.mu.Lock()
		if g.cg != nil && g.state != Dead {
			if code = g.checkConsumerFetchLocked(memberID, memberEpoch); code != 0 {
				g.unlock()
				return nil, code
			}
		}
		if g.state != Dead {
			offsets = make(map[offsetKey]committed, len(g.offsets))
			for k, v := range g.offsets {
				offsets[k] = v
			}
		}
		g.unlock()
	}
	var out []fetchedTopic
	if topics == nil {
		byTopic := map[string]int{}
		for k, o := range offsets {
			i, ok := byTopic[k.topic]
			if !ok {
				i = len(out)
				byTopic[k.topic] = i
				out = append(out, fetchedTopic{topic: k.topic})
			}
			out[i].partitions = append(out[i].partitions, fetchedPartition{
				partition: k.partition, offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata,
			})
		}
		sortFetched(out)
		return out, 0
	}
	for _, t := range topics {
		ft := fetchedTopic{topic: t.topic}
		for _, p := range t.partitions {
			fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: -1}
			if o, ok := offsets[offsetKey{t.topic, p}]; ok {
				fp.offset, fp.leaderEpoch, fp.metadata = o.offset, o.leaderEpoch, o.metadata
			}
			ft.partitions = append(ft.partitions, fp)
		}
		out = append(out, ft)
	}
	return out, 0
}

// OffsetFetch handles an OffsetFetch request (v0-10; v8+ asks for several
// groups; v9+ carries the member id and epoch of a consumer group member,
// checked as Kafka does: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH). The
// caller maps v10's topic ids to names.
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.GetVersion() >= 8 {
		for _, rg := range req.Groups {
			var topics []fetchTopic
			if rg.Topics != nil {
				topics = []fetchTopic{}
				for _, t := range rg.Topics {
					topics = append(topics, fetchTopic{t.Topic, t.Partitions})
				}
			}
			fetched, code := c.fetchOffsets(rg.Group, rg.MemberID, rg.MemberEpoch, topics)
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group = rg.Group
			sg.ErrorCode = code
			for _, ft := range fetched {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic = ft.topic
				for _, fp := range ft.partitions {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch, sp.ErrorCode = fp.partition, fp.offset, fp.leaderEpoch, fp.code
					m := fp.metadata
					sp.Metadata = &m
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return resp
	}
	var topics []fetchTopic
	if req.Topics != nil || req.GetVersion() < 2 {
		topics = []fetchTopic{}
		for _, t := range req.Topics {
			topics = append(topics, fetchTopic{t.Topic, t.Partitions})
		}
	}
	fetched, code := c.fetchOffsets(req.Group, nil, -1, topics)
	if code != 0 && req.GetVersion() < 2 {
		// v0-1 have no top-level error: each partition carries it.
		fetched = nil
		for _, t := range topics {
			ft := fetchedTopic{topic: t.topic}
			for _, p := range t.partitions {
				ft.partitions = append(ft.partitions, fetchedPartition{partition: p, offset: -1, leaderEpoch: -1, code: code})
			}
			fetched = append(fetched, ft)
		}
	}
	resp.ErrorCode = code
	for _, ft := range fetched {
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = ft.topic
		for _, fp := range ft.partitions {
			sp := kmsg.NewOffsetFetchResponseTopicPartition()
			sp.Partition, sp.Offset, sp.LeaderEpoch, sp.ErrorCode = fp.partition, fp.offset, fp.leaderEpoch, fp.code
			m := fp.metadata
			sp.Metadata = &m
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// expireLocked removes expired offsets as Kafka's cleanupExpiredOffsets
// does, and reports whether the group is now Dead (no member and nothing
// left to keep). Only offsets of topics the group does not subscribe to
// expire, and not while a transaction holds one of the partition. Their
// retention (offsets.retention.minutes, unless the commit gave its own
// expiry) counts from the commit, except in an Empty classic consumer group,
// where it counts from when the group became Empty; a classic group that
// is neither Empty nor a Stable "consumer" group expires nothing
// (ClassicGroup.offsetExpirationCondition).
func (g *group) expireLocked(now time.Time) bool {
	if len(g.pending) > 0 {
		return false
	}
	base := func(o committed) time.Time { return o.commitTime }
	var subscribed map[string]bool
	switch {
	case g.cg != nil:
		if len(g.cg.members) > 0 {
			subscribed = g.consumerSubscribedLocked()
		}
	case g.protocolType == "":
	case g.state == Empty:
		emptySince := g.stateTime
		base = func(committed) time.Time { return emptySince }
	case g.protocolType == "consumer" && g.state == Stable:
		subscribed = g.subscribedTopicsLocked()
	default:
		return false
	}
	var expired []offsetKey
	kept := false
	for k, o := range g.offsets {
		expire := base(o).Add(g.c.cfg.OffsetsRetention)
		if !o.expire.IsZero() {
			expire = o.expire // Kafka's OffsetExpirationConditionImpl
		}
		if subscribed[k.topic] || now.Before(expire) || g.txnHoldsLocked(k) {
			kept = true
			continue
		}
		expired = append(expired, k)
	}
	empty := g.state == Empty && (g.cg == nil || len(g.cg.members) == 0)
	dead := !kept && len(g.txnOffsets) == 0 && empty
	if len(expired) == 0 && !dead {
		return false
	}
	if err := g.tombstoneLocked(expired, dead); err != nil {
		g.c.logger.Error("expire offsets", "group", g.id, "err", err)
		return false
	}
	if len(expired) > 0 {
		g.c.logger.Info("expired offsets", "group", g.id, "offsets", len(expired))
	}
	if dead {
		g.transitionLocked(Dead)
	}
	return dead
}

// txnHoldsLocked reports whether an open transaction has an offset of k
// pending.
func (g *group) txnHoldsLocked(k offsetKey) bool {
	for _, m := range g.txnOffsets {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// OnTopicsDeleted removes every loaded group's committed offsets of the
// deleted topics, writing their tombstones, as Kafka's coordinator does
// when the metadata image drops a topic (OffsetMetadataManager's
// onPartitionsDeleted): a topic recreated under the same name starts
// without the old offsets, which could lie past its new end. Pending
// transactional offsets of those topics are dropped too. It runs in the
// background, in order with partition loads and unloads; the broker's
// metadata goroutine calls it.
func (c *Coordinator) OnTopicsDeleted(topics []string) {
	if len(topics) == 0 {
		return
	}
	deleted := make(map[string]bool, len(topics))
	for _, t := range topics {
		deleted[t] = true
	}
	c.enqueue(func() {
		for _, g := range c.snapshot() {
			g.mu.Lock()
			var keys []offsetKey
			for k := range g.offsets {
				if deleted[k.topic] {
					keys = append(keys, k)
				}
			}
			for _, pending := range g.txnOffsets {
				for k := range pending {
					if deleted[k.topic] {
						delete(pending, k)
					}
				}
			}
			if len(keys) > 0 && g.state != Dead {
				if err := g.tombstoneLocked(keys, false); err != nil {
					c.logger.Error("remove offsets of deleted topics", "group", g.id, "err", err)
				}
			}
			g.unlock()
		}
	})
}

// tombstoneLocked deletes offsets (and with group, the group metadata) in
// one batch, then forgets them.
func (g *group) tombstoneLocked(keys []offsetKey, group bool) error {
	var recs []record.Record
	for _, k := range keys {
		recs = append(recs, record.Record{Key: offsetRecordKey(g.id, k), OffsetDelta: int32(len(recs))})
	}
	if group {
		recs = append(recs, record.Record{Key: groupRecordKey(g.id), OffsetDelta: int32(len(recs))})
		if g.cg != nil {
			g.recordConsumerGroupTombstonesLocked()
			for _, r := range g.pendingRecs {
				r.OffsetDelta = int32(len(recs))
				recs = append(recs, r)
			}
			g.pendingRecs = nil
		}
	}
	if len(recs) == 0 {
		return nil
	}
	if err := g.log.Append(buildBatch(g.c.clock(), recs)); err != nil {
		return fmt.Errorf("write tombstones for group %s: %w", g.id, err)
	}
	for _, k := range keys {
		delete(g.offsets, k)
	}
	return nil
}
