package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReplicationControlManager.createPartitions places the new partitions of
// a manual Assignment exactly as listed (Silkworm used to check the
// assignment and then place the partitions itself), and refuses an
// assignment of the wrong replica count with Kafka's message.
func TestFidelity3CreatePartitionsManualAssignmentIsPlacedAsAsked(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx := testCtx(t)
	cl := tc.client()

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "grow", -1, -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}}
	ct.Topics = append(ct.Topics, rt)
	if resp, err := ct.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %+v", err, resp)
	}

	cp := func(validateOnly bool, assignment ...[]int32) kmsg.CreatePartitionsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis, req.ValidateOnly = 10000, validateOnly
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "grow", int32(1+len(assignment))
		for _, a := range assignment {
			rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0]
	}
	if st := cp(false, []int32{3}); st.ErrorCode != kerr.InvalidReplicaAssignment.Code ||
		msgOf(st.ErrorMessage) != "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)." {
		t.Fatalf("wrong replica count: code %d %q", st.ErrorCode, msgOf(st.ErrorMessage))
	}
	want := [][]int32{{1, 2}, {3, 1}, {2, 3}}
	if st := cp(false, want[1:]...); st.ErrorCode != 0 {
		t.Fatalf("create partitions: code %d %q", st.ErrorCode, msgOf(st.ErrorMessage))
	}
	for _, b := range tc.brokers {
		waitFor(t, "the new partitions on every node", func() bool {
			tp := b.meta.Image().Topics["grow"]
			return tp != nil && len(tp.Partitions) == len(want)
		})
	}
	tp := tc.brokers[0].meta.Image().Topics["grow"]
	for p, replicas := range want {
		if got := tp.Partitions[p].Replicas; !slices.Equal(got, replicas) {
			t.Errorf("partition %d: replicas %v, want exactly %v", p, got, replicas)
		}
	}

	// ReplicaManager.lastOffsetForLeaderEpoch asks for the leader whatever
	// the replica id: the debugging id -2 gets NOT_LEADER_OR_FOLLOWER from
	// a follower too. Partition 0 is led by 1 and followed by 2.
	follower := tc.brokers[1]
	waitFor(t, "node 2 hosting its replica of grow-0", func() bool {
		ts := follower.topic("grow")
		return ts != nil && len(ts.partitions) > 0 && ts.partitions[0] != nil
	})
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.ReplicaID = -2
	oe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "grow",
		Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: 0}}}}
	resp, err := cl.Broker(2).Request(ctx, oe)
	if err != nil {
		t.Fatal(err)
	}
	if sp := resp.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]; sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("debugging replica id on a follower: code %d, want NOT_LEADER_OR_FOLLOWER", sp.ErrorCode)
	}
}
