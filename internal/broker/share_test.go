package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

// setGroupConfig sets GROUP configs with IncrementalAlterConfigs through
// any broker of cl.
func setGroupConfig(t *testing.T, ctx context.Context, cl *kgo.Client, group string, kv ...string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[i], kmsg.StringPtr(kv[i+1])
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("IncrementalAlterConfigs: %v", err)
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		t.Fatalf("IncrementalAlterConfigs %s: %v (%v)", group, err, kmsg.StringPtr(""))
	}
}

// shareConsume runs n share consumers of group on topic, accepting
// every record, until total distinct records were delivered and finished
// (if set) holds; halfway (if set) is called once a quarter of them come
// from partition 0 (half of it, with two partitions). It returns how many
// times each partition/offset was delivered.
func shareConsume(t *testing.T, ctx context.Context, seeds []string, group, topic string, n, total int,
	halfway func(), finished func() bool, extra ...kgo.Opt) map[string]int {
	t.Helper()
	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		done     = make(chan struct{})
		halfOnce sync.Once
		seen0    int
	)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
			kgo.MetadataMinAge(50 * time.Millisecond), kgo.FetchMaxWait(500 * time.Millisecond)}, extra...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				default:
				}
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				fs := cl.PollFetches(pctx)
				cancel()
				half := false
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					mu.Lock()
					k := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
					seen[k]++
					if r.Partition == 0 && seen[k] == 1 {
						seen0++
					}
					half = seen0 >= total/4
					mu.Unlock()
				})
				if err := cl.FlushAcks(ctx); err != nil && ctx.Err() == nil {
					t.Logf("flush acks: %v", err)
				}
				if half && halfway != nil {
					halfOnce.Do(halfway)
				}
			}
		}()
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		<-tick.C
		mu.Lock()
		distinct := len(seen)
		mu.Unlock()
		if distinct >= total && (finished == nil || finished()) {
			break
		}
	}
	close(done)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < total {
		t.Fatalf("delivered %d of %d records", len(seen), total)
	}
	return seen
}

func TestShareGroupConsumersAcceptEachRecordOnce(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=2")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 4, nil)
	const perPartition = 50
	for p := int32(0); p < 4; p++ {
		tb.produce(ctx, "q", p, perPartition)
	}
	setGroupConfig(t, ctx, tb.cl, "sg", "share.auto.offset.reset", "earliest")
	seen := shareConsume(t, ctx, []string{tb.b.Addr()}, "sg", "q", 3, 4*perPartition, nil, nil)
	if len(seen) != 4*perPartition {
		t.Fatalf("%d distinct records delivered, want %d", len(seen), 4*perPartition)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("record %s delivered %d times", k, n)
		}
	}
}

// rawShare is a share group member driven with raw requests, to check
// the broker's answers exactly.
type rawShare struct {
	t      *testing.T
	cl     *kgo.Client
	group  string
	member string
	epoch  int32
	topic  [16]byte
	// maxBytes is the fetches' MaxBytes; 0 means 1 MiB, a negative
	// value asks for 0.
	maxBytes int32
}

// fetch sends a ShareFetch for the partitions (epoch 0 opens the
// session) with optional piggy-backed acknowledgements, and returns the
// acquired ranges per partition.
func (s *rawShare) fetch(ctx context.Context, node int32, parts []int32, acks map[int32][]kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) (*kmsg.ShareFetchResponse, map[int32][]kmsg.ShareFetchResponseTopicPartitionAcquiredRecord) {
	s.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = &s.group, &s.member
	req.ShareSessionEpoch = s.epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 200, 1, 1<<20, 500, 500
	if s.maxBytes < 0 {
		req.MaxBytes = 0
	} else if s.maxBytes > 0 {
		req.MaxBytes = s.maxBytes
	}
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = s.topic
	for _, p := range parts {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		rp.AcknowledgementBatches = acks[p]
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.cl.Broker(int(node)))
	if err != nil {
		s.t.Fatalf("ShareFetch: %v", err)
	}
	if resp.ErrorCode != 0 {
		s.t.Fatalf("ShareFetch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	s.epoch++
	out := map[int32][]kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Records == nil {
				// librdkafka's share consumer drops a response with one.
				s.t.Fatalf("ShareFetch entry of partition %d has a null record set", p.Partition)
			}
			if p.AcknowledgeErrorCode != 0 {
				s.t.Fatalf("ShareFetch ack on %d: %v", p.Partition, kerr.ErrorForCode(p.AcknowledgeErrorCode))
			}
			out[p.Partition] = append(out[p.Partition], p.AcquiredRecords...)
		}
	}
	return resp, out
}

// ack sends a ShareAcknowledge and returns the per-partition errors.
func (s *rawShare) ack(ctx context.Context, node int32, p int32, first, last int64, typ int8) error {
	s.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID = &s.group, &s.member
	req.ShareSessionEpoch = s.epoch
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = s.topic
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	rp.Partition = p
	ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = first, last, []int8{typ}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.cl.Broker(int(node)))
	if err != nil {
		s.t.Fatalf("ShareAcknowledge: %v", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	s.epoch++
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

func acquiredOffsets(rs []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord) (offsets []int64, counts map[int64]int16) {
	counts = map[int64]int16{}
	for _, r := range rs {
		for o := r.FirstOffset; o <= r.LastOffset; o++ {
			offsets = append(offsets, o)
			counts[o] = r.DeliveryCount
		}
	}
	return offsets, counts
}

func topicID(t *testing.T, b *Broker, topic string) [16]byte {
	t.Helper()
	tp := b.meta.Image().Topics[topic]
	if tp == nil {
		t.Fatalf("no topic %s", topic)
	}
	return tp.ID
}

func TestShareReleaseExpiryAndDeliveryLimit(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1",
		"group.share.min.record.lock.duration.ms=1000")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	tb.produce(ctx, "q", 0, 10)
	setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest",
		"share.record.lock.duration.ms", "1000", "share.delivery.count.limit", "3")
	s := &rawShare{t: t, cl: tb.cl, group: "g", member: "m1-aaaaaaaaaaaaaaaaaaaaa", topic: topicID(t, tb.b, "q")}

	// First delivery: all ten, delivery count 1.
	_, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil)
	offs, counts := acquiredOffsets(got[0])
	if len(offs) != 10 || counts[0] != 1 {
		t.Fatalf("first fetch acquired %v %v, want offsets 0-9 once", offs, counts)
	}
	// Accept 0-4, release 5-9: only 5-9 come back, delivered twice.
	if err := s.ack(ctx, tb.b.nodeID, 0, 0, 4, 1); err != nil {
		t.Fatalf("accept: %v", err)
	}
	if err := s.ack(ctx, tb.b.nodeID, 0, 5, 9, 2); err != nil {
		t.Fatalf("release: %v", err)
	}
	// Acknowledging again what is no longer acquired is INVALID_RECORD_STATE.
	if err := s.ack(ctx, tb.b.nodeID, 0, 0, 0, 1); err != kerr.InvalidRecordState {
		t.Fatalf("second accept of offset 0: %v, want INVALID_RECORD_STATE", err)
	}
	_, got = s.fetch(ctx, tb.b.nodeID, nil, nil)
	offs, counts = acquiredOffsets(got[0])
	if len(offs) != 5 || offs[0] != 5 || counts[5] != 2 {
		t.Fatalf("after release acquired %v %v, want 5-9 with delivery count 2", offs, counts)
	}
	// Let the lock expire: 5-9 come back a third time.
	var third map[int32][]kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	waitFor(t, "lock expiry redelivers", func() bool {
		_, third = s.fetch(ctx, tb.b.nodeID, nil, nil)
		return len(third[0]) > 0
	})
	offs, counts = acquiredOffsets(third[0])
	if len(offs) != 5 || offs[0] != 5 || counts[5] != 3 {
		t.Fatalf("after expiry acquired %v %v, want 5-9 with delivery count 3", offs, counts)
	}
	// At the delivery count limit, a release archives: nothing is left,
	// and the share-partition start offset moves past them.
	if err := s.ack(ctx, tb.b.nodeID, 0, 5, 9, 2); err != nil {
		t.Fatalf("release at the limit: %v", err)
	}
	_, got = s.fetch(ctx, tb.b.nodeID, nil, nil)
	if len(got[0]) != 0 {
		t.Fatalf("archived records delivered again: %v", got[0])
	}
	sp := tb.b.shares.mgr.Loaded(shareKey("g", s.topic, 0))
	if sp == nil || sp.StartOffset() != 10 {
		t.Fatalf("share-partition start offset is not 10 after archiving")
	}
}

func TestShareLeaderKillLosesNoAcknowledgement(t *testing.T) {
	tc := newTestCluster(t, 3, "share.coordinator.state.topic.num.partitions=3")
	ctx := testCtx(t)
	cl := tc.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "q", 1, 3
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	for i := 0; i < 20; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "q", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	setGroupConfig(t, ctx, cl, "g", "share.auto.offset.reset", "earliest")
	leader := tc.leaderOf("q", 0)
	s := &rawShare{t: t, cl: cl, group: "g", member: "member-1-xxxxxxxxxxxxxxxx", topic: topicID(t, tc.brokers[leader-1], "q")}
	var got map[int32][]kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	waitFor(t, "first delivery", func() bool {
		_, got = s.fetch(ctx, leader, []int32{0}, nil)
		return len(got[0]) > 0
	})
	if offs, _ := acquiredOffsets(got[0]); len(offs) != 20 {
		t.Fatalf("acquired %v, want 0-19", offs)
	}
	if err := s.ack(ctx, leader, 0, 0, 9, 1); err != nil {
		t.Fatalf("accept 0-9: %v", err)
	}

	// kill -9 the share-partition leader: no controlled shutdown.
	tc.brokers[leader-1].Kill()
	tc.brokers[leader-1] = nil
	var next int32
	waitFor(t, "a new leader", func() bool {
		next = tc.leaderOf("q", 0)
		return next > 0 && next != leader
	})
	s2 := &rawShare{t: t, cl: tc.client(), group: "g", member: "member-2-xxxxxxxxxxxxxxxx", topic: s.topic}
	// The new leader's high watermark may reach 20 only after its
	// followers' next fetch: keep the session and gather what it hands out.
	var redelivered []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	opened := false
	waitFor(t, "redelivery from the new leader", func() bool {
		if err := s2.cl.Ping(ctx); err != nil {
			return false
		}
		if !opened {
			s2.epoch = 0
		}
		resp, g := s2.fetch(ctx, next, []int32{0}, nil)
		for _, tt := range resp.Topics {
			for _, p := range tt.Partitions {
				if p.ErrorCode != 0 {
					opened = false
					return false
				}
			}
		}
		opened = true
		redelivered = append(redelivered, g[0]...)
		offs, _ := acquiredOffsets(redelivered)
		return len(offs) >= 10
	})
	offs, counts := acquiredOffsets(redelivered)
	if len(offs) != 10 || offs[0] != 10 || offs[9] != 19 {
		t.Fatalf("after the leader died acquired %v, want exactly the unacknowledged 10-19", offs)
	}
	if counts[10] != 2 {
		t.Fatalf("redelivered with delivery count %d, want 2", counts[10])
	}
}

func shareHeartbeat(t *testing.T, ctx context.Context, cl *kgo.Client, group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
	req.SubscribedTopicNames = topics
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ShareGroupHeartbeat: %v", err)
	}
	return resp
}

func TestShareGroupHeartbeatAssignsEveryPartition(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 4, nil)
	id := topicID(t, tb.b, "q")
	assigned := func(r *kmsg.ShareGroupHeartbeatResponse) []int32 {
		if r.Assignment == nil {
			return nil
		}
		for _, tp := range r.Assignment.TopicPartitions {
			if tp.TopicID == id {
				return tp.Partitions
			}
		}
		return nil
	}
	r1 := shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", 0, "q")
	if r1.ErrorCode != 0 || r1.MemberEpoch != 1 || len(assigned(r1)) != 4 {
		t.Fatalf("first member: %v epoch %d assigned %v, want epoch 1 and all 4 partitions", kerr.ErrorForCode(r1.ErrorCode), r1.MemberEpoch, assigned(r1))
	}
	r2 := shareHeartbeat(t, ctx, tb.cl, "sg", "member-b", 0, "q")
	if r2.MemberEpoch != 2 || len(assigned(r2)) != 2 {
		t.Fatalf("second member: epoch %d assigned %v, want epoch 2 and 2 partitions", r2.MemberEpoch, assigned(r2))
	}
	// The first member learns its new assignment on its next heartbeat.
	r1 = shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", 1)
	if r1.MemberEpoch != 2 || len(assigned(r1)) != 2 {
		t.Fatalf("first member after rebalance: epoch %d assigned %v", r1.MemberEpoch, assigned(r1))
	}
	all := map[int32]bool{}
	for _, p := range append(assigned(r1), assigned(r2)...) {
		all[p] = true
	}
	if len(all) != 4 {
		t.Fatalf("partitions assigned: %v, want all 4", all)
	}
	// Five members on four partitions: every partition still has one,
	// and one is shared.
	for i := 0; i < 3; i++ {
		if r := shareHeartbeat(t, ctx, tb.cl, "sg", fmt.Sprintf("member-%d", i), 0, "q"); r.ErrorCode != 0 {
			t.Fatalf("join: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	desc, err := tb.adm.DescribeShareGroups(ctx, "sg")
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	g := desc["sg"]
	if g.Err != nil || len(g.Members) != 5 || g.GroupState != "Stable" {
		t.Fatalf("described %+v", g)
	}
	// A stale epoch is fenced; an unknown member is refused.
	if r := shareHeartbeat(t, ctx, tb.cl, "sg", "member-b", 1); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("stale epoch: %v, want FENCED_MEMBER_EPOCH", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := shareHeartbeat(t, ctx, tb.cl, "sg", "nobody", 3); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", -1); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	// The group id namespace is shared with consumer groups.
	if err := tb.adm.CommitAllOffsets(ctx, "cg", kadmOffsets("q", 0, 1)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if r := shareHeartbeat(t, ctx, tb.cl, "cg", "member-a", 0, "q"); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("share heartbeat on a consumer group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.ErrorCode))
	}
	listed := tb.b.shares.coord.ListGroups()
	if len(listed) != 1 || listed[0].GroupID != "sg" || listed[0].State != "Stable" {
		t.Fatalf("listed share groups %+v", listed)
	}
	if code := tb.b.deleteShareGroup("sg"); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("deleting a group with members: %v", kerr.ErrorForCode(code))
	}
	for _, m := range []string{"member-b", "member-0", "member-1", "member-2"} {
		shareHeartbeat(t, ctx, tb.cl, "sg", m, -1)
	}
	if code := tb.b.deleteShareGroup("sg"); code != 0 || tb.b.shares.coord.HasGroup("sg") {
		t.Fatalf("deleting the empty group: %v", kerr.ErrorForCode(code))
	}
}

func TestShareGroupOffsetsDescribeAlterDelete(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	tb.produce(ctx, "q", 0, 10)
	setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest")
	const member = "member-offsets-xxxxxxxxxxx"
	shareHeartbeat(t, ctx, tb.cl, "g", member, 0, "q")
	s := &rawShare{t: t, cl: tb.cl, group: "g", member: member, topic: topicID(t, tb.b, "q")}
	s.fetch(ctx, tb.b.nodeID, []int32{0}, nil)
	if err := s.ack(ctx, tb.b.nodeID, 0, 0, 4, 1); err != nil {
		t.Fatalf("accept: %v", err)
	}
	described, err := tb.adm.DescribeShareGroupOffsets(ctx, "g")
	if err != nil {
		t.Fatalf("describe offsets: %v", err)
	}
	if o, ok := described["g"].Offsets.Lookup("q", 0); !ok || o.StartOffset != 5 {
		t.Fatalf("described %+v, want start offset 5", described["g"])
	}
	if resps, err := tb.adm.AlterShareGroupOffsets(ctx, "g", kadmOffsets("q", 0, 2)); err == nil && resps.Error() == nil {
		t.Fatalf("altered the offsets of a group with a member")
	}
	shareHeartbeat(t, ctx, tb.cl, "g", member, -1)
	s.epoch = -1
	if err := s.ack(ctx, tb.b.nodeID, 0, 5, 5, 1); err != nil { // closes the session
		t.Fatalf("final acknowledge: %v", err)
	}
	resps, err := tb.adm.AlterShareGroupOffsets(ctx, "g", kadmOffsets("q", 0, 2))
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("alter offsets: %v", err)
	}
	s.epoch = 0
	_, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil)
	if offs, _ := acquiredOffsets(got[0]); len(offs) != 8 || offs[0] != 2 {
		t.Fatalf("after altering to 2 acquired %v, want 2-9", offs)
	}
	s.epoch = -1
	s.ack(ctx, tb.b.nodeID, 0, 2, 9, 2)
	dresps, err := tb.adm.DeleteShareGroupOffsets(ctx, "g", "q")
	if err == nil {
		err = dresps.Error()
	}
	if err != nil {
		t.Fatalf("delete offsets: %v", err)
	}
	st, ok, err := sharePersister{tb.b}.Read(shareKey("g", s.topic, 0))
	if err != nil || ok {
		t.Fatalf("state after delete: %+v %v %v, want none", st, ok, err)
	}
}

func kadmOffsets(topic string, p int32, at int64) kadm.Offsets {
	var os kadm.Offsets
	os.AddOffset(topic, p, at, -1)
	return os
}

// TestShareClusterConsumersSurviveLeaderKill runs share consumers on a
// three-node cluster (state written to remote share coordinators) and
// kills the leader of one partition halfway: every record is accepted,
// and afterwards the share-partitions have nothing left in flight.
func TestShareClusterConsumersSurviveLeaderKill(t *testing.T) {
	tc := newTestCluster(t, 3, "share.coordinator.state.topic.num.partitions=3", "group.share.min.record.lock.duration.ms=1000")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := tc.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "q", 2, 3
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	const per = 150
	for p := int32(0); p < 2; p++ {
		var rs []*kgo.Record
		for i := 0; i < per; i++ {
			rs = append(rs, &kgo.Record{Topic: "q", Partition: p, Value: []byte("v")})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	setGroupConfig(t, ctx, cl, "g", "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "3000")
	victim := tc.leaderOf("q", 0)
	start := time.Now()
	adm := tc.client()
	// Done when every share-partition start offset is at the log end:
	// every record acknowledged. An acknowledgement the killed leader
	// took with it is redelivered (at-least-once) and accepted again.
	atEnd := func() bool {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = "g"
		dt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		dt.Topic, dt.Partitions = "q", []int32{0, 1}
		g.Topics = append(g.Topics, dt)
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, adm)
		if err != nil || len(resp.Groups) != 1 || len(resp.Groups[0].Topics) != 1 {
			return false
		}
		for _, p := range resp.Groups[0].Topics[0].Partitions {
			if p.ErrorCode != 0 || p.StartOffset != per {
				return false
			}
		}
		return true
	}
	seen := shareConsume(t, ctx, tc.seeds(), "g", "q", 4, 2*per, func() {
		tc.brokers[victim-1].Kill()
		tc.brokers[victim-1] = nil
	}, atEnd, kgo.ShareMaxRecords(20))
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("%d records, %d redeliveries after the leader of q-0 was killed, in %v", len(seen), dups, time.Since(start))
	if !atEnd() {
		t.Fatalf("share-partition start offsets are not at the log end")
	}
}

func TestShareReadCommittedSkipsAbortedRecords(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1",
		"transaction.state.log.num.partitions=1", "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	txn, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.TransactionalID("tx"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	write := func(commit bool, n int) {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "q", Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	write(false, 3) // offsets 0-2 aborted, marker at 3
	write(true, 2)  // offsets 4-5 committed, marker at 6
	setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest", "share.isolation.level", "read_committed")
	s := &rawShare{t: t, cl: tb.cl, group: "g", member: "member-rc-xxxxxxxxxxxxxxx", topic: topicID(t, tb.b, "q")}
	_, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil)
	offs, _ := acquiredOffsets(got[0])
	for _, o := range offs {
		if o <= 2 {
			t.Fatalf("acquired %v: aborted offset %d delivered under read_committed", offs, o)
		}
	}
	if !slices.Contains(offs, 4) || !slices.Contains(offs, 5) {
		t.Fatalf("acquired %v, want the committed 4 and 5", offs)
	}
}

func TestGroupConfigsDescribeAlterValidate(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	alter := func(op kmsg.IncrementalAlterConfigOp, kv ...string) int16 {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "g"
		for i := 0; i+1 < len(kv); i += 2 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value, c.Op = kv[i], kmsg.StringPtr(kv[i+1]), op
			res.Configs = append(res.Configs, c)
		}
		req.Resources = append(req.Resources, res)
		return tb.request(ctx, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	if code := alter(kmsg.IncrementalAlterConfigOpSet, "no.such.config", "1"); code != kerr.InvalidConfig.Code {
		t.Fatalf("unknown group config: %v", kerr.ErrorForCode(code))
	}
	if code := alter(kmsg.IncrementalAlterConfigOpSet, "share.record.lock.duration.ms", "1000"); code != kerr.InvalidConfig.Code {
		t.Fatalf("lock duration below group.share.min.record.lock.duration.ms: %v", kerr.ErrorForCode(code))
	}
	if code := alter(kmsg.IncrementalAlterConfigOpSet, "share.auto.offset.reset", "sometimes"); code != kerr.InvalidConfig.Code {
		t.Fatalf("bad share.auto.offset.reset: %v", kerr.ErrorForCode(code))
	}
	if code := alter(kmsg.IncrementalAlterConfigOpSet, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "20000"); code != 0 {
		t.Fatalf("valid group configs: %v", kerr.ErrorForCode(code))
	}
	describe := func() map[string]kmsg.DescribeConfigsResponseResourceConfig {
		req := kmsg.NewPtrDescribeConfigsRequest()
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "g"
		req.Resources = append(req.Resources, res)
		r := tb.request(ctx, req).(*kmsg.DescribeConfigsResponse).Resources[0]
		if r.ErrorCode != 0 {
			t.Fatalf("describe: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, c := range r.Configs {
			out[c.Name] = c
		}
		return out
	}
	got := describe()
	if c := got["share.auto.offset.reset"]; c.Value == nil || *c.Value != "earliest" || c.Source != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("share.auto.offset.reset described as %+v", c)
	}
	if c := got["share.session.timeout.ms"]; c.Value == nil || *c.Value != "45000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("share.session.timeout.ms described as %+v", c)
	}
	if tb.b.shareLimits("g").LockDuration != 20*time.Second {
		t.Fatalf("lock duration %v, want the group's 20s", tb.b.shareLimits("g").LockDuration)
	}
	if code := alter(kmsg.IncrementalAlterConfigOpDelete, "share.auto.offset.reset", ""); code != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(code))
	}
	if c := describe()["share.auto.offset.reset"]; *c.Value != "latest" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("after delete %+v", c)
	}
	// The overrides survive a restart (they are cluster metadata).
	tb.restart()
	if tb.b.shareLimits("g").LockDuration != 20*time.Second {
		t.Fatalf("group config lost across a restart")
	}
}

func TestShareCoordinatorForKey(t *testing.T) {
	tb := newTestBroker(t, "share.coordinator.state.topic.num.partitions=2")
	k := shareKey("g", [16]byte{1, 2, 3}, 4)
	node, code := tb.b.shareCoordinatorFor(shareCoordinatorKey(k))
	if code != 0 || node != tb.b.nodeID {
		t.Fatalf("coordinator of %s: node %d %v", shareCoordinatorKey(k), node, kerr.ErrorForCode(code))
	}
	for _, bad := range []string{"g", "g:1", "g:notbase64:1", "g:" + shareCoordinatorKey(k)[2:24] + ":x"} {
		if _, code := tb.b.shareCoordinatorFor(bad); code != kerr.InvalidRequest.Code {
			t.Errorf("key %q: %v, want INVALID_REQUEST", bad, kerr.ErrorForCode(code))
		}
	}
}

// TestShareConnectionCloseReleasesRecords: records a member holds come
// back at once when its connection closes, not after the lock expires.
func TestShareConnectionCloseReleasesRecords(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	tb.produce(ctx, "q", 0, 3)
	setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest")
	cl1, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	s1 := &rawShare{t: t, cl: cl1, group: "g", member: "member-closing-xxxxxxxxxx", topic: topicID(t, tb.b, "q")}
	if _, got := s1.fetch(ctx, tb.b.nodeID, []int32{0}, nil); len(got[0]) == 0 {
		t.Fatalf("first member acquired nothing")
	}
	cl1.Close()
	s2 := &rawShare{t: t, cl: tb.cl, group: "g", member: "member-next-xxxxxxxxxxxxx", topic: s1.topic}
	var got map[int32][]kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	waitFor(t, "records released by the closed connection", func() bool {
		s2.epoch = 0
		_, got = s2.fetch(ctx, tb.b.nodeID, []int32{0}, nil)
		return len(got[0]) > 0
	})
	if offs, counts := acquiredOffsets(got[0]); len(offs) != 3 || counts[0] != 2 {
		t.Fatalf("second member acquired %v %v, want 0-2 delivered a second time", offs, counts)
	}
}

// TestShareStateInterBrokerAPIs drives the share coordinator's
// inter-broker APIs directly: write, read, summary, initialize (fenced by
// an older state epoch), delete.
func TestShareStateInterBrokerAPIs(t *testing.T) {
	tb := newTestBroker(t, "share.coordinator.state.topic.num.partitions=2")
	ctx := testCtx(t)
	tid := [16]byte{7}
	write := kmsg.NewPtrWriteShareGroupStateRequest()
	write.GroupID = "g"
	wt := kmsg.NewWriteShareGroupStateRequestTopic()
	wt.TopicID = tid
	wp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	wp.Partition, wp.StateEpoch, wp.LeaderEpoch, wp.StartOffset = 0, 2, 1, 10
	sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
	sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = 10, 14, int8(share.Acknowledged), 1
	sb2 := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
	sb2.FirstOffset, sb2.LastOffset, sb2.DeliveryState, sb2.DeliveryCount = 15, 15, int8(share.Available), 3
	wp.StateBatches = append(wp.StateBatches, sb, sb2)
	wt.Partitions = append(wt.Partitions, wp)
	write.Topics = append(write.Topics, wt)
	if code := tb.request(ctx, write).(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("write: %v", kerr.ErrorForCode(code))
	}
	read := kmsg.NewPtrReadShareGroupStateRequest()
	read.GroupID = "g"
	rt := kmsg.NewReadShareGroupStateRequestTopic()
	rt.TopicID = tid
	rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	read.Topics = append(read.Topics, rt)
	got := tb.request(ctx, read).(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0]
	if got.ErrorCode != 0 || got.StateEpoch != 2 || got.StartOffset != 10 || len(got.StateBatches) != 2 || got.StateBatches[1].DeliveryCount != 3 {
		t.Fatalf("read %+v", got)
	}
	sum := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	sum.GroupID = "g"
	st := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	st.TopicID = tid
	st.Partitions = append(st.Partitions, kmsg.NewReadShareGroupStateSummaryRequestTopicPartition())
	sum.Topics = append(sum.Topics, st)
	if s := tb.request(ctx, sum).(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0]; s.StartOffset != 10 || s.LeaderEpoch != 1 || s.DeliveryCompleteCount != 5 {
		t.Fatalf("summary %+v (read %+v)", s, got.StateBatches)
	}
	initReq := func(epoch int32, start int64) int16 {
		req := kmsg.NewPtrInitializeShareGroupStateRequest()
		req.GroupID = "g"
		it := kmsg.NewInitializeShareGroupStateRequestTopic()
		it.TopicID = tid
		ip := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
		ip.StateEpoch, ip.StartOffset = epoch, start
		it.Partitions = append(it.Partitions, ip)
		req.Topics = append(req.Topics, it)
		return tb.request(ctx, req).(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := initReq(1, 0); code != kerr.FencedStateEpoch.Code {
		t.Fatalf("initialize with an older state epoch: %v", kerr.ErrorForCode(code))
	}
	if code := initReq(3, 20); code != 0 {
		t.Fatalf("initialize: %v", kerr.ErrorForCode(code))
	}
	if got := tb.request(ctx, read).(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0]; got.StartOffset != 20 || got.StateEpoch != 3 || len(got.StateBatches) != 0 {
		t.Fatalf("after initialize %+v", got)
	}
	del := kmsg.NewPtrDeleteShareGroupStateRequest()
	del.GroupID = "g"
	dt := kmsg.NewDeleteShareGroupStateRequestTopic()
	dt.TopicID = tid
	dt.Partitions = append(dt.Partitions, kmsg.NewDeleteShareGroupStateRequestTopicPartition())
	del.Topics = append(del.Topics, dt)
	if code := tb.request(ctx, del).(*kmsg.DeleteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(code))
	}
	if got := tb.request(ctx, read).(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0]; got.StartOffset != -1 {
		t.Fatalf("after delete %+v", got)
	}
}

// TestAlterShareGroupOffsetsCreatesTheGroup: altering the offsets of a
// share group that never had members creates it, as Kafka's coordinator
// does, so that describing all its offsets lists the altered topic and
// DeleteGroups finds the group (franz-go's TestShareGroupOffsetsAdmin).
func TestAlterShareGroupOffsetsCreatesTheGroup(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 2, nil)
	tb.produce(ctx, "q", 0, 5)
	resps, err := tb.adm.AlterShareGroupOffsets(ctx, "fresh", kadmOffsets("q", 0, 3))
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("alter offsets of a new share group: %v", err)
	}
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	g.GroupID = "fresh" // Topics null: all of the group's topics
	req.Groups = append(req.Groups, g)
	resp, err := req.RequestWith(ctx, tb.cl)
	if err != nil {
		t.Fatalf("describe offsets: %v", err)
	}
	rg := resp.Groups[0]
	if rg.ErrorCode != 0 || len(rg.Topics) != 1 || rg.Topics[0].Topic != "q" || len(rg.Topics[0].Partitions) != 2 {
		t.Fatalf("described all offsets of the group: %+v, want topic q with its 2 partitions", rg)
	}
	for _, p := range rg.Topics[0].Partitions {
		if want := map[int32]int64{0: 3, 1: -1}[p.Partition]; p.ErrorCode != 0 || p.StartOffset != want {
			t.Errorf("partition %d: start offset %d, error %d; want %d", p.Partition, p.StartOffset, p.ErrorCode, want)
		}
	}
	deleted, err := tb.adm.DeleteGroup(ctx, "fresh")
	if err == nil {
		err = deleted.Err
	}
	if err != nil {
		t.Fatalf("delete the share group: %v", err)
	}
}

// A ShareFetch entry that carries only an acknowledgement's result, with no
// records left to acquire, has an empty record set, not a null one:
// librdkafka's share consumer drops a whole response with a null one
// (found by librdkafka's 0170 share consumer tests).
func TestShareFetchAckOnlyEntryHasEmptyRecords(t *testing.T) {
	tb, ctx, s := newRawShareMember(t, 3)
	if _, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil); len(got[0]) == 0 {
		t.Fatalf("nothing acquired")
	}
	ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 0, 2, []int8{1}
	resp, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, map[int32][]kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{0: {ab}})
	if len(got[0]) != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("acknowledging everything: %+v", resp.Topics)
	}
	if p := resp.Topics[0].Partitions[0]; p.Records == nil || len(p.Records) != 0 {
		t.Fatalf("the acknowledgement's entry has records %v (nil %v), want an empty set", p.Records, p.Records == nil)
	}
	s.epoch = -1
	s.fetch(ctx, tb.b.nodeID, nil, nil)
}

// A ShareFetch with MaxBytes 0 acquires nothing, as Kafka answers
// fetch.max.bytes=0 (librdkafka's 0180); the records stay available.
func TestShareFetchMaxBytesZeroAcquiresNothing(t *testing.T) {
	tb, ctx, s := newRawShareMember(t, 10)
	s.maxBytes = -1
	if _, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil); len(got[0]) != 0 {
		t.Fatalf("MaxBytes 0 acquired %v, want nothing", got[0])
	}
	s.maxBytes = 0
	if _, got := s.fetch(ctx, tb.b.nodeID, []int32{0}, nil); len(got[0]) == 0 {
		t.Fatalf("MaxBytes 1 MiB afterwards acquired nothing")
	}
	s.epoch = -1
	s.fetch(ctx, tb.b.nodeID, nil, nil)
}

// newRawShareMember starts a broker with a one-partition topic q holding
// records records and share group g (reading from the earliest), and joins
// one raw member to it.
func newRawShareMember(t *testing.T, records int) (*testBroker, context.Context, *rawShare) {
	t.Helper()
	tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	tb.produce(ctx, "q", 0, records)
	setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest")
	const member = "member-raw-xxxxxxxxxxxxxxx"
	shareHeartbeat(t, ctx, tb.cl, "g", member, 0, "q")
	return tb, ctx, &rawShare{t: t, cl: tb.cl, group: "g", member: member, topic: topicID(t, tb.b, "q")}
}
