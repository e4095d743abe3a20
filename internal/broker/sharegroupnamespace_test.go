package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareGroupsShareTheGroupNamespace: share groups are listed by
// ListGroups (type "share", with the type and state filters), deleted by
// DeleteGroups once empty, and their ids are refused by the classic and
// consumer protocols, as Kafka's group coordinator does.
func TestShareGroupsShareTheGroupNamespace(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 2, nil)
	if r := shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", 0, "q"); r.ErrorCode != 0 {
		t.Fatalf("join share group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if err := tb.adm.CommitAllOffsets(ctx, "cg", kadmOffsets("q", 0, 1)); err != nil {
		t.Fatalf("commit: %v", err)
	}

	list := func(types, states []string) map[string]kmsg.ListGroupsResponseGroup {
		t.Helper()
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter, req.StatesFilter = types, states
		resp, err := req.RequestWith(ctx, tb.cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("ListGroups: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
		}
		out := map[string]kmsg.ListGroupsResponseGroup{}
		for _, g := range resp.Groups {
			out[g.Group] = g
		}
		return out
	}
	all := list(nil, nil)
	if g, ok := all["sg"]; !ok || g.GroupType != "share" || g.ProtocolType != "share" || g.GroupState != "Stable" {
		t.Fatalf("unfiltered list: share group %+v (present %v), want type share, protocol type share, Stable", g, ok)
	}
	if _, ok := all["cg"]; !ok {
		t.Fatalf("unfiltered list lacks the classic group: %v", all)
	}
	if got := list([]string{"SHARE"}, nil); len(got) != 1 || got["sg"].Group != "sg" {
		t.Fatalf("type filter share: %v, want only sg", got)
	}
	if got := list([]string{"classic"}, nil); got["sg"].Group != "" {
		t.Fatalf("type filter classic lists the share group: %v", got)
	}
	if got := list(nil, []string{"empty"}); got["sg"].Group != "" {
		t.Fatalf("state filter Empty lists the Stable share group: %v", got)
	}

	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "sg", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0}}}
	if resp, err := join.RequestWith(ctx, tb.cl); err != nil || resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("JoinGroup on a share group: %v %v, want GROUP_ID_NOT_FOUND", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberEpoch, hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = "sg", 0, 10000, []string{"q"}
	if resp, err := hb.RequestWith(ctx, tb.cl); err != nil || resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("ConsumerGroupHeartbeat on a share group: %v %v, want GROUP_ID_NOT_FOUND", err, kerr.ErrorForCode(resp.ErrorCode))
	}

	del := func() int16 {
		t.Helper()
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"sg"}
		resp, err := req.RequestWith(ctx, tb.cl)
		if err != nil || len(resp.Groups) != 1 {
			t.Fatalf("DeleteGroups: %v %+v", err, resp)
		}
		return resp.Groups[0].ErrorCode
	}
	if code := del(); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete with a member: %v, want NON_EMPTY_GROUP", kerr.ErrorForCode(code))
	}
	shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", -1)
	if code := del(); code != 0 {
		t.Fatalf("delete of the empty share group: %v", kerr.ErrorForCode(code))
	}
	if _, ok := list(nil, nil)["sg"]; ok {
		t.Fatal("the deleted share group is still listed")
	}
}

// TestApiVersionsWithoutConsumerProtocol: with
// group.coordinator.rebalance.protocols=classic the KIP-848 APIs are not
// advertised, so clients use the classic protocol.
func TestApiVersionsWithoutConsumerProtocol(t *testing.T) {
	advertised := func(tb *testBroker) []int16 {
		resp := tb.request(testCtx(t), kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
		var keys []int16
		for _, k := range resp.ApiKeys {
			keys = append(keys, k.ApiKey)
		}
		return keys
	}
	on := advertised(newTestBroker(t))
	off := advertised(newTestBroker(t, "group.coordinator.rebalance.protocols=classic"))
	for _, k := range []kmsg.Key{kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe} {
		if !slices.Contains(on, k.Int16()) {
			t.Errorf("%s not advertised by default", kmsg.NameForKey(k.Int16()))
		}
		if slices.Contains(off, k.Int16()) {
			t.Errorf("%s advertised with the consumer protocol disabled", kmsg.NameForKey(k.Int16()))
		}
	}
}
