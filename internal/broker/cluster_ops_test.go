package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

// TestClusterOpsSingleNode: on one node the cluster operations answer
// without changing anything.
func TestClusterOpsSingleNode(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "one", 2, nil)
	adm := tb.adm
	self := tb.b.nodeID

	for _, how := range []kadm.ElectLeadersHow{kadm.ElectPreferredReplica, kadm.ElectLiveReplica} {
		res, err := adm.ElectLeaders(ctx, how, kadm.TopicsSet{"one": {0: {}, 1: {}}, "nope": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 2; p++ {
			if err := res["one"][p].Err; !errors.Is(err, kerr.ElectionNotNeeded) {
				t.Fatalf("election %v of one-%d: %v, want ELECTION_NOT_NEEDED", how, p, err)
			}
		}
		if err := res["nope"][0].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("election of an unknown topic: %v", err)
		}
	}
	// All partitions: those needing no election are left out.
	all := kmsg.NewPtrElectLeadersRequest()
	resp := tb.request(ctx, all).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Topic != "one" || len(resp.Topics[0].Partitions) != 0 {
		t.Fatalf("elect all: %+v", resp)
	}
	// v0 is a preferred election; an unknown type is INVALID_REQUEST.
	v0 := kmsg.NewPtrElectLeadersRequest()
	v0.Version = 0
	v0.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "one", Partitions: []int32{1}}}
	resp = tb.request(ctx, v0).(*kmsg.ElectLeadersResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
		t.Fatalf("v0: %+v", resp)
	}
	bad := kmsg.NewPtrElectLeadersRequest()
	bad.Version = 2
	bad.ElectionType = 7
	bad.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "one", Partitions: []int32{0}}}
	resp = tb.request(ctx, bad).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("election type 7: %+v", resp)
	}

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("one", 0, []int32{self + 1})
	req.Assign("one", 1, []int32{self})
	req.Assign("nope", 0, []int32{self})
	ares, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := ares["one"][0].Err; !errors.Is(err, kerr.InvalidReplicaAssignment) {
		t.Fatalf("reassign to another broker: %v", err)
	}
	if err := ares["one"][1].Err; err != nil {
		t.Fatalf("reassign to the current replica: %v", err)
	}
	if err := ares["nope"][0].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("reassign an unknown topic: %v", err)
	}
	req = nil
	req.CancelAssign("one", 0)
	ares, err = adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := ares["one"][0].Err; !errors.Is(err, kerr.NoReassignmentInProgress) {
		t.Fatalf("cancel: %v", err)
	}
	lres, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"one": {0: {}, 1: {}}})
	if err != nil || len(lres) != 0 {
		t.Fatalf("list reassignments: %v %+v", err, lres)
	}
}

func TestImbalancedPartitions(t *testing.T) {
	im := &metadata.Image{
		Brokers: []metadata.Broker{{NodeID: 1}, {NodeID: 2}, {NodeID: 3, Fenced: true}},
		Topics:  map[string]*metadata.Topic{},
	}
	part := func(i int32, replicas []int32, leader int32) metadata.Partition {
		return metadata.Partition{Partition: i, Replicas: replicas, ISR: slices.Clone(replicas), Leader: leader}
	}
	im.Topics["a"] = &metadata.Topic{Name: "a", Partitions: []metadata.Partition{
		part(0, []int32{1, 2}, 2), // broker 1 prefers, 2 leads
		part(1, []int32{1, 2}, 1),
		part(2, []int32{2, 1}, 2),
		part(3, []int32{3, 1}, 1), // broker 3 prefers but is fenced
		{Partition: 4, Replicas: []int32{2, 1, 3}, AddingReplicas: []int32{3}, ISR: []int32{2, 1}, Leader: 1}, // reassigning
	}}
	want := []metadata.TopicPartition{{Topic: "a", Partition: 0}}
	if got := imbalancedPartitions(im, 10); !slices.Equal(got, want) {
		t.Fatalf("10%%: got %v, want %v", got, want)
	}
	// Broker 1 leads 1 of its 2 preferred partitions: 50% is not above 50%.
	if got := imbalancedPartitions(im, 50); len(got) != 0 {
		t.Fatalf("50%%: got %v, want none", got)
	}
	// Not in the ISR: not a candidate.
	im.Topics["a"].Partitions[0].ISR = []int32{2}
	if got := imbalancedPartitions(im, 10); len(got) != 0 {
		t.Fatalf("preferred replica out of ISR: got %v", got)
	}
}

// partitionDetail reads one partition from a Metadata response.
func partitionDetail(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, p int32) (kadm.PartitionDetail, bool) {
	t.Helper()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.PartitionDetail{}, false
	}
	d, ok := md.Topics[topic].Partitions[p]
	return d, ok
}

func imagePartitionOf(tc *testCluster, topic string, p int32) (metadata.Partition, bool) {
	for _, b := range tc.brokers {
		if b == nil {
			continue
		}
		if t := b.meta.Image().Topics[topic]; t != nil && int(p) < len(t.Partitions) {
			return t.Partitions[p], true
		}
	}
	return metadata.Partition{}, false
}

// createClusterTopic creates a topic and waits until every running broker
// knows it with a leader for each partition.
func createClusterTopic(ctx context.Context, t *testing.T, tc *testCluster, adm *kadm.Client, name string, partitions int32, rf int16) {
	t.Helper()
	res, err := adm.CreateTopic(ctx, partitions, rf, nil, name)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	waitFor(t, "every broker knows topic "+name, func() bool {
		for _, b := range tc.brokers {
			if b == nil {
				continue
			}
			tp := b.meta.Image().Topics[name]
			if tp == nil || len(tp.Partitions) != int(partitions) {
				return false
			}
			for _, p := range tp.Partitions {
				if p.Leader < 0 {
					return false
				}
			}
		}
		return true
	})
}

// TestClusterOps runs the admin operations on one 3-broker cluster:
// DescribeCluster, replication factors, CreatePartitions, Metadata with a
// stopped broker, a reassignment that cannot complete and its
// cancellation, preferred and unclean elections.
func TestClusterOps(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := tc.client()
	adm := kadm.NewClient(cl)

	// Every broker's metadata image catches up with the registrations of
	// the others shortly after start.
	waitFor(t, "DescribeCluster lists 3 brokers", func() bool {
		dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return len(dc.Brokers) == 3
	})

	res, err := adm.CreateTopic(ctx, 1, 4, nil, "rf4")
	if err == nil {
		err = res.Err
	}
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Fatalf("RF 4 on 3 brokers: %v, want INVALID_REPLICATION_FACTOR", err)
	}

	createClusterTopic(ctx, t, tc, adm, "ops", 2, 3)
	cp, err := adm.CreatePartitions(ctx, 1, "ops")
	if err == nil {
		err = cp["ops"].Err
	}
	if err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	waitFor(t, "the new partition is replicated on every broker, ISR full", func() bool {
		for _, b := range tc.brokers {
			if _, p := b.partition("ops", 2); p == nil {
				return false
			}
		}
		d, ok := partitionDetail(ctx, t, adm, "ops", 2)
		return ok && len(d.Replicas) == 3 && len(d.ISR) == 3 && d.Leader >= 0
	})

	// Stop the preferred replica of ops-0.
	pa, _ := imagePartitionOf(tc, "ops", 0)
	pref := pa.Replicas[0]
	tc.kill(pref)
	waitFor(t, "Metadata shows the stopped broker offline and out of the ISR", func() bool {
		d, ok := partitionDetail(ctx, t, adm, "ops", 0)
		return ok && d.Leader >= 0 && d.Leader != pref && slices.Contains(d.OfflineReplicas, pref) &&
			!slices.Contains(d.ISR, pref) && len(d.Replicas) == 3
	})
	el, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"ops": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := el["ops"][0].Err; !errors.Is(err, kerr.PreferredLeaderNotAvailable) {
		t.Fatalf("preferred election with the preferred replica down: %v", err)
	}
	el, err = adm.ElectLeaders(ctx, kadm.ElectLiveReplica, kadm.TopicsSet{"ops": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := el["ops"][0].Err; !errors.Is(err, kerr.ElectionNotNeeded) {
		t.Fatalf("unclean election with a leader: %v", err)
	}

	// A reassignment onto the stopped broker cannot complete: it stays
	// listed until cancelled.
	createClusterTopic(ctx, t, tc, adm, "stuck", 1, 1)
	waitFor(t, "stuck-0 has a leader", func() bool { return tc.leaderOf("stuck", 0) >= 0 })
	host := tc.leaderOf("stuck", 0)
	var areq kadm.AlterPartitionAssignmentsReq
	areq.Assign("stuck", 0, []int32{host, pref})
	areq.Assign("stuck", 5, []int32{host})
	areq.Assign("ops", 1, []int32{host, host})
	ares, err := adm.AlterPartitionAssignments(ctx, areq)
	if err != nil {
		t.Fatal(err)
	}
	if err := ares["stuck"][0].Err; err != nil {
		t.Fatalf("reassign stuck-0 to %d,%d: %v", host, pref, err)
	}
	if err := ares["stuck"][5].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("reassign a partition that does not exist: %v", err)
	}
	if err := ares["ops"][1].Err; !errors.Is(err, kerr.InvalidReplicaAssignment) {
		t.Fatalf("reassign to a broker twice: %v", err)
	}
	waitFor(t, "the reassignment is listed", func() bool {
		l, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"stuck": {0: {}}, "ops": {0: {}}})
		if err != nil {
			return false
		}
		r, ok := l["stuck"][0]
		return ok && len(l) == 1 && slices.Equal(r.AddingReplicas, []int32{pref}) && len(r.RemovingReplicas) == 0 &&
			slices.Equal(r.Replicas, []int32{host, pref})
	})
	areq = nil
	areq.CancelAssign("stuck", 0)
	if ares, err = adm.AlterPartitionAssignments(ctx, areq); err == nil {
		err = ares["stuck"][0].Err
	}
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	waitFor(t, "the cancelled reassignment is gone", func() bool {
		l, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"stuck": {0: {}}})
		p, _ := imagePartitionOf(tc, "stuck", 0)
		return err == nil && len(l) == 0 && slices.Equal(p.Replicas, []int32{host})
	})
	if ares, err = adm.AlterPartitionAssignments(ctx, areq); err == nil {
		err = ares["stuck"][0].Err
	}
	if !errors.Is(err, kerr.NoReassignmentInProgress) {
		t.Fatalf("second cancel: %v", err)
	}

	// Back up, the preferred replica catches up, but leadership stays
	// where it is (auto rebalance checks every 300 s by default) until a
	// preferred election moves it back.
	tc.restart(pref)
	waitFor(t, "the restarted broker rejoins the ISR of ops-0", func() bool {
		p, ok := imagePartitionOf(tc, "ops", 0)
		return ok && slices.Contains(p.ISR, pref)
	})
	if l := tc.leaderOf("ops", 0); l == pref {
		t.Fatalf("leadership moved back to %d without an election", pref)
	}
	el, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"ops": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := el["ops"][0].Err; err != nil {
		t.Fatalf("preferred election: %v", err)
	}
	waitFor(t, "the preferred replica leads ops-0 on every broker", func() bool {
		for _, b := range tc.brokers {
			if p := b.meta.Image().Topics["ops"].Partitions[0]; p.Leader != pref {
				return false
			}
		}
		_, p := tc.brokers[pref-1].partition("ops", 0)
		return p != nil && p.IsLeader()
	})
	el, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"ops": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := el["ops"][0].Err; !errors.Is(err, kerr.ElectionNotNeeded) {
		t.Fatalf("second preferred election: %v", err)
	}
	// All partitions: the answer lists only those that needed an election.
	el, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range el {
		for _, r := range ps {
			if errors.Is(r.Err, kerr.ElectionNotNeeded) {
				t.Errorf("elect all: %s-%d reported as ELECTION_NOT_NEEDED", r.Topic, r.Partition)
			}
		}
	}
	// An empty list (not null) names no partition: an empty answer.
	// The controller used to read it as null and elect everything,
	// then the broker failed the request (found by
	// TestRandomRequestsKeepClusterServing).
	none := kmsg.NewPtrElectLeadersRequest()
	none.Topics = []kmsg.ElectLeadersRequestTopic{}
	resp, err := none.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Errorf("elect an empty list: code %d, %d topics; want no error and no topic", resp.ErrorCode, len(resp.Topics))
	}
}

// TestReassignWhileProducing moves an RF 1 partition from its broker to
// the two others while an idempotent acks=all producer writes to it;
// afterwards every acknowledged record is read back once, in order.
func TestReassignWhileProducing(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	createClusterTopic(ctx, t, tc, adm, "move", 1, 1)
	waitFor(t, "move-0 has a leader", func() bool { return tc.leaderOf("move", 0) >= 0 })
	from := tc.leaderOf("move", 0)
	var to []int32
	for id := int32(1); id <= 3; id++ {
		if id != from {
			to = append(to, id)
		}
	}

	prod := tc.client(kgo.DefaultProduceTopic("move"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1000), kgo.RecordDeliveryTimeout(60*time.Second))
	var (
		mu    sync.Mutex
		acked []int
		fails []error
	)
	stop := make(chan struct{})
	produced := make(chan struct{})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	go func() {
		defer close(produced)
		for i := 0; ; i++ {
			select {
			case <-stop:
				prod.Flush(ctx)
				return
			default:
			}
			prod.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("m%07d", i))}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fails = append(fails, err)
					return
				}
				var n int
				fmt.Sscanf(string(r.Value), "m%07d", &n)
				acked = append(acked, n)
			})
			if i%50 == 49 {
				time.Sleep(time.Millisecond) // a steady stream, not a flood
			}
		}
	}()
	waitFor(t, "records acknowledged before the reassignment", func() bool { return count() >= 500 })

	var areq kadm.AlterPartitionAssignmentsReq
	areq.Assign("move", 0, to)
	ares, err := adm.AlterPartitionAssignments(ctx, areq)
	if err == nil {
		err = ares["move"][0].Err
	}
	if err != nil {
		t.Fatalf("reassign move-0 from %d to %v: %v", from, to, err)
	}
	waitFor(t, "the reassignment completes", func() bool {
		l, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"move": {0: {}}})
		p, _ := imagePartitionOf(tc, "move", 0)
		return err == nil && len(l) == 0 && slices.Equal(p.Replicas, to) && slices.Contains(to, p.Leader)
	})
	waitFor(t, "the old broker deleted its replica", func() bool {
		_, p := tc.brokers[from-1].partition("move", 0)
		return p == nil
	})
	after := count()
	waitFor(t, "records acknowledged by the new leader", func() bool { return count() >= after+500 })
	close(stop)
	<-produced

	mu.Lock()
	defer mu.Unlock()
	if len(fails) > 0 {
		t.Fatalf("%d produce failures, first: %v", len(fails), fails[0])
	}
	slices.Sort(acked)
	want := acked[len(acked)-1] + 1
	if len(acked) != want {
		t.Fatalf("acknowledged %d records, highest m%07d: a record failed without an error", len(acked), want-1)
	}
	cons := tc.client(kgo.ConsumeTopics("move"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	// The read-back has its own deadline: on a loaded machine the producer
	// runs longer and leaves more to read.
	rctx, rcancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer rcancel()
	var got []string
	for len(got) < want {
		fs := cons.PollFetches(rctx)
		if err := rctx.Err(); err != nil {
			t.Fatalf("read %d of %d acknowledged records: %v", len(got), want, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != want {
		t.Fatalf("read %d records, %d acknowledged: duplicates", len(got), want)
	}
	for i := 0; i < want; i++ {
		if w := fmt.Sprintf("m%07d", i); got[i] != w {
			t.Fatalf("record %d = %s, want %s (lost, duplicated or reordered)", i, got[i], w)
		}
	}
	t.Logf("moved move-0 from %d to %v under load; %d acknowledged records read back", from, to, want)
}

// TestAutoLeaderRebalance: with a 1 s check interval, leadership returns
// to the preferred replica by itself after a broker comes back.
func TestAutoLeaderRebalance(t *testing.T) {
	tc := newTestCluster(t, 3, "leader.imbalance.check.interval.seconds=1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	createClusterTopic(ctx, t, tc, adm, "bal", 3, 3)
	waitFor(t, "every partition led by its preferred replica", func() bool {
		for i := int32(0); i < 3; i++ {
			p, ok := imagePartitionOf(tc, "bal", i)
			if !ok || p.Leader != p.Replicas[0] || len(p.ISR) != 3 {
				return false
			}
		}
		return true
	})
	pa, _ := imagePartitionOf(tc, "bal", 0)
	victim := pa.Replicas[0]
	tc.kill(victim)
	waitFor(t, "leadership moves away", func() bool {
		l := tc.leaderOf("bal", 0)
		return l >= 0 && l != victim
	})
	tc.restart(victim)
	waitFor(t, "leadership returns to the preferred replicas", func() bool {
		for i := int32(0); i < 3; i++ {
			p, ok := imagePartitionOf(tc, "bal", i)
			if !ok || p.Leader != p.Replicas[0] {
				return false
			}
		}
		return true
	})
}
