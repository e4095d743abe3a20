package broker

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFidelityCreateTopicsManualAssignmentIsPlacedAsAsked: Kafka places
// the replicas of a manual assignment exactly as listed, the first replica
// leading (ReplicationControlManager.createTopic).
func TestFidelityCreateTopicsManualAssignmentIsPlacedAsAsked(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx := testCtx(t)
	cl := tc.client()

	want := [][]int32{{3, 1}, {2, 3}, {1, 2}, {3, 2}, {2, 1}, {1, 3}}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = "manual"
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	// Out of partition order on purpose: the partition index decides.
	for _, p := range []int32{5, 0, 3, 1, 4, 2} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition = p
		a.Replicas = want[p]
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Topics[0]; got.ErrorCode != 0 || got.NumPartitions != 6 || got.ReplicationFactor != 2 {
		t.Fatalf("create: code %d (%v), %d partitions, rf %d; want success with 6 partitions, rf 2",
			got.ErrorCode, got.ErrorMessage, got.NumPartitions, got.ReplicationFactor)
	}

	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(ctx, "manual")
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics["manual"]
	if td.Err != nil || len(td.Partitions) != len(want) {
		t.Fatalf("metadata: err %v, %d partitions; want %d", td.Err, len(td.Partitions), len(want))
	}
	for p, replicas := range want {
		pd := td.Partitions[int32(p)]
		if !slices.Equal(pd.Replicas, replicas) {
			t.Errorf("partition %d: replicas %v, want exactly %v", p, pd.Replicas, replicas)
		}
		if pd.Leader != replicas[0] {
			t.Errorf("partition %d: leader %d, want the first replica %d", p, pd.Leader, replicas[0])
		}
	}
}

// TestFidelityCreateTopicsManualAssignmentErrors: the refusals keep
// Kafka's INVALID_REPLICA_ASSIGNMENT messages.
func TestFidelityCreateTopicsManualAssignmentErrors(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx := testCtx(t)
	cl := tc.client()

	cases := []struct {
		name       string
		assignment map[int32][]int32
		msg        string
	}{
		{"unknown-broker", map[int32][]int32{0: {1, 9}},
			"The manual partition assignment includes broker 9, but no such broker is registered."},
		{"twice", map[int32][]int32{0: {2, 2}},
			"The manual partition assignment includes the broker 2 more than once."},
		{"gap", map[int32][]int32{0: {1}, 2: {2}},
			"partitions should be a consecutive 0-based integer sequence"},
		{"uneven", map[int32][]int32{0: {1, 2}, 1: {3}},
			"The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."},
	}
	for _, c := range cases {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = c.name
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for _, p := range []int32{0, 1, 2} {
			if r, ok := c.assignment[p]; ok {
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = p, r
				rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
			}
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Topics[0]
		if got.ErrorCode != kerr.InvalidReplicaAssignment.Code || got.ErrorMessage == nil || *got.ErrorMessage != c.msg {
			t.Errorf("%s: code %d, message %v; want INVALID_REPLICA_ASSIGNMENT %q", c.name, got.ErrorCode, got.ErrorMessage, c.msg)
		}
	}
}

// TestFidelityCreateTopicsInvalidNameMessages: CreateTopics answers an
// invalid name with INVALID_TOPIC_EXCEPTION and Kafka 4's message
// (Topic.validate: "Topic name is invalid: <reason>").
func TestFidelityCreateTopicsInvalidNameMessages(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	long := strings.Repeat("x", 250)
	cases := map[string]string{
		"":      "Topic name is invalid: the empty string is not allowed",
		".":     "Topic name is invalid: '.' is not allowed",
		"..":    "Topic name is invalid: '..' is not allowed",
		long:    "Topic name is invalid: the length of '" + long + "' is longer than the max allowed length 249",
		"a/b":   "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
		"ünï":   "Topic name is invalid: 'ünï' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
		"ok.a-": "",
	}
	for name, want := range cases {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics = append(req.Topics, rt)
		resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
		got := resp.Topics[0]
		if want == "" {
			if got.ErrorCode != 0 {
				t.Errorf("%q: code %d, want success", name, got.ErrorCode)
			}
			continue
		}
		if got.ErrorCode != kerr.InvalidTopicException.Code || got.ErrorMessage == nil || *got.ErrorMessage != want {
			t.Errorf("%q: code %d message %v, want INVALID_TOPIC_EXCEPTION %q", name, got.ErrorCode, got.ErrorMessage, want)
		}
	}
}

// TestFidelityExcessivelyLargeCreations: Kafka's controller refuses a
// CreateTopics or CreatePartitions request whose creations would take more
// than 10,000 metadata records, every topic of it with POLICY_VIOLATION,
// and creates nothing. Before, Silkworm set out to create them all: a
// CreatePartitions to 1,048,576 partitions (found by
// TestRandomRequestsKeepBrokerServing) held its handler for minutes.
func TestFidelityExcessivelyLargeCreations(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	const msg = "Unable to perform excessively large batch operation."

	// Two topics of 5,000: each fits, together they do not. The third
	// name, a duplicate, is answered like the others (the request fails
	// as a whole).
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, name := range []string{"big-a", "big-b", "big-b"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 5000, 1
		req.Topics = append(req.Topics, rt)
	}
	req.Topics[2].Topic = "big-c"
	resp := tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
	if len(resp.Topics) != 3 {
		t.Fatalf("%d topics answered, want 3", len(resp.Topics))
	}
	for _, st := range resp.Topics {
		if st.ErrorCode != kerr.PolicyViolation.Code || st.ErrorMessage == nil || *st.ErrorMessage != msg {
			t.Errorf("create %s: code %d (%v), want POLICY_VIOLATION %q", st.Topic, st.ErrorCode, st.ErrorMessage, msg)
		}
	}
	md, err := tb.adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"big-a", "big-b", "big-c"} {
		if md.Has(name) {
			t.Errorf("topic %s was created", name)
		}
	}

	// 9,999 partitions and the TopicRecord are 10,000 records: allowed
	// (validated only, to keep the test quick).
	req = kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis, req.ValidateOnly = 10000, true
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "big-ok", 9999, 1
	req.Topics = append(req.Topics, rt)
	resp = tb.request(ctx, req).(*kmsg.CreateTopicsResponse)
	if st := resp.Topics[0]; st.ErrorCode != 0 || st.NumPartitions != 9999 {
		t.Errorf("validate 9,999 partitions: code %d (%v), %d partitions; want success", st.ErrorCode, st.ErrorMessage, st.NumPartitions)
	}

	tb.createTopic(ctx, "grow", 1, nil)
	preq := kmsg.NewPtrCreatePartitionsRequest()
	preq.TimeoutMillis = 10000
	pt := kmsg.NewCreatePartitionsRequestTopic()
	pt.Topic, pt.Count = "grow", 1<<20
	preq.Topics = append(preq.Topics, pt)
	presp := tb.request(ctx, preq).(*kmsg.CreatePartitionsResponse)
	if st := presp.Topics[0]; st.ErrorCode != kerr.PolicyViolation.Code || st.ErrorMessage == nil || *st.ErrorMessage != msg {
		t.Errorf("grow to 2^20 partitions: code %d (%v), want POLICY_VIOLATION %q", st.ErrorCode, st.ErrorMessage, msg)
	}
	td, err := tb.adm.ListTopics(ctx, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["grow"].Partitions); n != 1 {
		t.Errorf("grow has %d partitions after the refusal, want 1", n)
	}
}
