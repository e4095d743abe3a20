package group

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var topicT = [16]byte{0x74}

// hbOpts is one ConsumerGroupHeartbeat.
type hbOpts struct {
	member   string
	epoch    int32
	instance *string
	rack     *string
	topics   []string
	regex    *string
	assignor *string
	owned    assignment // nil: not reported
	keep     bool       // a keep-alive: no subscription, no owned, rebalance -1
}

func cghb(c *Coordinator, group string, o hbOpts) *kmsg.ConsumerGroupHeartbeatResponse {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = group, o.member, o.epoch
	req.InstanceID, req.RackID, req.ServerAssignor = o.instance, o.rack, o.assignor
	req.RebalanceTimeoutMillis = 30000
	if o.keep {
		req.RebalanceTimeoutMillis = -1
	} else {
		req.SubscribedTopicNames = o.topics
		req.SubscribedTopicRegex = o.regex
		if o.topics == nil && o.regex == nil {
			req.SubscribedTopicNames = []string{"t"}
		}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, tid := range o.owned.sortedTopics() {
			rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			rt.TopicID, rt.Partitions = tid, o.owned[tid]
			req.Topics = append(req.Topics, rt)
		}
	}
	return c.ConsumerGroupHeartbeat(req, "client", "/127.0.0.1")
}

func respAssignment(r *kmsg.ConsumerGroupHeartbeatResponse) assignment {
	if r.Assignment == nil {
		return nil
	}
	a := assignment{}
	for _, t := range r.Assignment.Topics {
		for _, p := range t.Partitions {
			a.add(t.TopicID, p)
		}
	}
	return a
}

func mustOK(t *testing.T, what string, r *kmsg.ConsumerGroupHeartbeatResponse) {
	t.Helper()
	if r.ErrorCode != 0 {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		t.Fatalf("%s: %v %s", what, kerr.ErrorForCode(r.ErrorCode), msg)
	}
}

func parts(a assignment, t [16]byte) []int32 { return a[t] }

// client is a simulated consumer: what it owns follows its responses.
type client struct {
	id    string
	epoch int32
	owned assignment
}

func (cl *client) beat(t *testing.T, c *Coordinator, group string, topics ...string) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	if topics == nil {
		topics = []string{"t"}
	}
	o := hbOpts{member: cl.id, epoch: cl.epoch, topics: topics, owned: cl.owned}
	if cl.owned == nil {
		o.owned = assignment{}
	}
	r := cghb(c, group, o)
	mustOK(t, "heartbeat of "+cl.id, r)
	cl.epoch = r.MemberEpoch
	if a := respAssignment(r); a != nil {
		cl.owned = a
	}
	return r
}

// noDoubleOwnership fails if two clients own the same partition.
func noDoubleOwnership(t *testing.T, cls ...*client) {
	t.Helper()
	seen := map[tpKey]string{}
	for _, cl := range cls {
		for tid, ps := range cl.owned {
			for _, p := range ps {
				k := tpKey{tid, p}
				if o, ok := seen[k]; ok {
					t.Fatalf("partition %d owned by %s and %s", p, o, cl.id)
				}
				seen[k] = cl.id
			}
		}
	}
}

func TestConsumerGroupRevocationBeforeAssignment(t *testing.T) {
	for _, assignor := range []string{"uniform", "range"} {
		t.Run(assignor, func(t *testing.T) {
			cfg := testConfig()
			cfg.Consumer.Assignors = []string{assignor}
			c := newTestCoordinator(t, cfg, newMemHost())
			a := &client{id: "a"}
			r := a.beat(t, c, "g")
			if r.MemberEpoch != 1 || len(parts(a.owned, topicT)) != 6 {
				t.Fatalf("first member: epoch %d owns %v, want epoch 1 and all 6", r.MemberEpoch, a.owned)
			}
			b := &client{id: "b"}
			r = b.beat(t, c, "g")
			if r.MemberEpoch != 2 || len(b.owned) != 0 {
				t.Fatalf("second member: epoch %d owns %v, want epoch 2 and nothing (partitions unreleased)", r.MemberEpoch, b.owned)
			}
			noDoubleOwnership(t, a, b)
			// a is told to revoke half, still at its epoch.
			r = a.beat(t, c, "g")
			if r.MemberEpoch != 1 || len(parts(a.owned, topicT)) != 3 {
				t.Fatalf("a after rebalance: epoch %d owns %v, want epoch 1 keeping 3", r.MemberEpoch, a.owned)
			}
			// b gets nothing until a's heartbeat reports the revocation...
			b.beat(t, c, "g")
			if len(b.owned) != 0 {
				t.Fatalf("b got %v before a revoked", b.owned)
			}
			// ...which a now sends (its owned shrank to 3) and moves to epoch 2.
			r = a.beat(t, c, "g")
			if r.MemberEpoch != 2 {
				t.Fatalf("a after revoking: epoch %d, want 2", r.MemberEpoch)
			}
			b.beat(t, c, "g")
			if len(parts(b.owned, topicT)) != 3 {
				t.Fatalf("b owns %v, want 3 partitions", b.owned)
			}
			noDoubleOwnership(t, a, b)
			if assignor == "range" && !slices.Equal(parts(a.owned, topicT), []int32{0, 1, 2}) {
				t.Fatalf("range: a owns %v, want 0-2", parts(a.owned, topicT))
			}
			d := cgDescribe(t, c, "g")
			if d.State != "Stable" || d.Epoch != 2 || d.AssignmentEpoch != 2 || d.AssignorName != assignor {
				t.Fatalf("describe: %s epoch %d/%d assignor %s", d.State, d.Epoch, d.AssignmentEpoch, d.AssignorName)
			}
		})
	}
}

func cgDescribe(t *testing.T, c *Coordinator, group string) kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{group}
	resp := c.ConsumerGroupDescribe(req)
	if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("describe %s: %+v", group, resp.Groups)
	}
	return resp.Groups[0]
}

func TestConsumerGroupHeartbeatErrors(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	str := func(s string) *string { return &s }
	check := func(what string, r *kmsg.ConsumerGroupHeartbeatResponse, want *kerr.Error) {
		t.Helper()
		if r.ErrorCode != want.Code {
			t.Errorf("%s: got %v, want %v", what, kerr.ErrorForCode(r.ErrorCode), want)
		}
	}
	check("unknown group", cghb(c, "none", hbOpts{member: "m", epoch: 3}), kerr.GroupIDNotFound)
	check("empty member id on v1", cghb(c, "g", hbOpts{}), kerr.InvalidRequest)
	check("epoch below -2", cghb(c, "g", hbOpts{member: "m", epoch: -3}), kerr.InvalidRequest)
	check("bad regex", cghb(c, "g", hbOpts{member: "m", regex: str("(")}), kerr.InvalidRegularExpression)
	check("unknown assignor", cghb(c, "g", hbOpts{member: "m", assignor: str("sticky")}), kerr.UnsupportedAssignor)
	check("static leave without instance", cghb(c, "g", hbOpts{member: "m", epoch: -2}), kerr.InvalidRequest)
	owned := cghb(c, "g", hbOpts{member: "m", owned: assignment{topicT: {0}}})
	check("join owning partitions", owned, kerr.InvalidRequest)

	mustOK(t, "join", cghb(c, "g", hbOpts{member: "m"}))
	check("epoch ahead", cghb(c, "g", hbOpts{member: "m", epoch: 5, owned: assignment{}}), kerr.FencedMemberEpoch)
	check("unknown member", cghb(c, "g", hbOpts{member: "x", epoch: 1, owned: assignment{}}), kerr.UnknownMemberID)
	check("unknown member leaves", cghb(c, "g", hbOpts{member: "x", epoch: -1, keep: true}), kerr.UnknownMemberID)
	// A rejoin at epoch 0 under the same id is accepted (KAFKA-19233).
	mustOK(t, "rejoin", cghb(c, "g", hbOpts{member: "m"}))
	// A member that left is gone.
	r := cghb(c, "g", hbOpts{member: "m", epoch: -1, keep: true})
	mustOK(t, "leave", r)
	if r.MemberEpoch != -1 {
		t.Fatalf("leave answered epoch %d, want -1", r.MemberEpoch)
	}
	check("heartbeat after leave", cghb(c, "g", hbOpts{member: "m", epoch: 1, owned: assignment{}}), kerr.UnknownMemberID)

	cfg := testConfig()
	cfg.Consumer.MaxSize = 1
	c2 := newTestCoordinator(t, cfg, newMemHost())
	mustOK(t, "first", cghb(c2, "g", hbOpts{member: "a"}))
	check("group full", cghb(c2, "g", hbOpts{member: "b"}), kerr.GroupMaxSizeReached)
}

func TestConsumerGroupPreviousEpochAccepted(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	a := &client{id: "a"}
	a.beat(t, c, "g")
	b := &client{id: "b"}
	b.beat(t, c, "g")
	a.beat(t, c, "g") // told to revoke
	a.beat(t, c, "g") // revoked: epoch 2
	if a.epoch != 2 {
		t.Fatalf("a at epoch %d", a.epoch)
	}
	// The response with epoch 2 was lost: epoch 1 with a subset of its
	// assignment is accepted; with partitions it no longer has, fenced.
	r := cghb(c, "g", hbOpts{member: "a", epoch: 1, owned: a.owned})
	mustOK(t, "previous epoch", r)
	r = cghb(c, "g", hbOpts{member: "a", epoch: 1, owned: assignment{topicT: {0, 1, 2, 3, 4, 5}}})
	if r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("previous epoch owning too much: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestConsumerGroupStaticMember(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	inst := "i1"
	r := cghb(c, "g", hbOpts{member: "m1", instance: &inst})
	mustOK(t, "join", r)
	before := respAssignment(r)
	r = cghb(c, "g", hbOpts{member: "m2", instance: &inst})
	if r.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("second member with the same instance: %v, want UNRELEASED_INSTANCE_ID", kerr.ErrorForCode(r.ErrorCode))
	}
	r = cghb(c, "g", hbOpts{member: "m2", epoch: 1, instance: &inst, owned: assignment{}})
	if r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("heartbeat with another member id: %v, want FENCED_INSTANCE_ID", kerr.ErrorForCode(r.ErrorCode))
	}
	r = cghb(c, "g", hbOpts{member: "m1", epoch: -2, instance: &inst, keep: true})
	mustOK(t, "static leave", r)
	if r.MemberEpoch != -2 {
		t.Fatalf("static leave answered epoch %d", r.MemberEpoch)
	}
	if d := cgDescribe(t, c, "g"); d.Epoch != 1 || len(d.Members) != 1 {
		t.Fatalf("after static leave: epoch %d, %d members; want no rebalance", d.Epoch, len(d.Members))
	}
	r = cghb(c, "g", hbOpts{member: "m2", instance: &inst})
	mustOK(t, "static rejoin", r)
	if r.MemberEpoch != 1 || !respAssignment(r).equal(before) {
		t.Fatalf("static rejoin: epoch %d assignment %v, want epoch 1 and %v", r.MemberEpoch, respAssignment(r), before)
	}
	d := cgDescribe(t, c, "g")
	if len(d.Members) != 1 || d.Members[0].MemberID != "m2" || d.Epoch != 1 {
		t.Fatalf("after rejoin: %+v", d)
	}
}

func TestConsumerGroupRegexAndMetadataChanges(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	re := "t.*"
	r := cghb(c, "g", hbOpts{member: "m", regex: &re})
	mustOK(t, "join", r)
	if got := respAssignment(r); len(got[topicT]) != 6 {
		t.Fatalf("regex join got %v", got)
	}
	// A new matching topic and a non-matching one; t grows to 8 partitions.
	t2 := [16]byte{0x75}
	h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 8}, &TopicMeta{Name: "t2", ID: t2, Partitions: 2},
		&TopicMeta{Name: "other", ID: [16]byte{0x76}, Partitions: 3}, &TopicMeta{Name: "__consumer_offsets", ID: [16]byte{0x77}, Partitions: 3})
	r = cghb(c, "g", hbOpts{member: "m", epoch: 1, keep: true})
	mustOK(t, "heartbeat", r)
	got := respAssignment(r)
	if r.MemberEpoch != 2 || len(got[topicT]) != 8 || len(got[t2]) != 2 || len(got) != 2 {
		t.Fatalf("after metadata change: epoch %d assignment %v", r.MemberEpoch, got)
	}
	// Nothing changed: no new epoch.
	r = cghb(c, "g", hbOpts{member: "m", epoch: 2, keep: true})
	if r.MemberEpoch != 2 || r.Assignment != nil {
		t.Fatalf("steady heartbeat: epoch %d assignment %v", r.MemberEpoch, r.Assignment)
	}
	// t2 deleted: its partitions go away.
	h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 8})
	r = cghb(c, "g", hbOpts{member: "m", epoch: 2, owned: got, topics: nil, regex: &re})
	mustOK(t, "after delete", r)
	if got := respAssignment(r); len(got) != 1 || len(got[topicT]) != 8 {
		t.Fatalf("after topic deletion: %v", got)
	}
}

func TestConsumerGroupSessionAndRebalanceTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.Consumer.SessionTimeout = 10 * time.Second
		c := newTestCoordinator(t, cfg, newMemHost())
		a := &client{id: "a"}
		a.beat(t, c, "g")
		b := &client{id: "b"}
		b.beat(t, c, "g")
		// b keeps heartbeating; a goes silent: after its session timeout
		// it is removed and b gets everything.
		for i := 0; i < 4; i++ {
			time.Sleep(4 * time.Second)
			b.beat(t, c, "g")
		}
		synctest.Wait()
		if len(parts(b.owned, topicT)) != 6 {
			t.Fatalf("b owns %v after a's session expired", b.owned)
		}
		d := cgDescribe(t, c, "g")
		if len(d.Members) != 1 {
			t.Fatalf("%d members after expiry", len(d.Members))
		}
		// A member that never revokes is fenced after its rebalance timeout
		// (30 s in the requests here) even while heartbeating.
		cl := &client{id: "c"}
		cl.beat(t, c, "g")
		for i := 0; i < 10; i++ {
			time.Sleep(4 * time.Second)
			r := cghb(c, "g", hbOpts{member: "b", epoch: b.epoch, owned: assignment{topicT: {0, 1, 2, 3, 4, 5}}})
			if r.ErrorCode == kerr.UnknownMemberID.Code {
				return
			}
			mustOK(t, "b keeps owning", r)
			cl.beat(t, c, "g")
		}
		t.Fatal("a member that never revoked was not fenced after its rebalance timeout")
	})
}

func TestConsumerGroupPersistence(t *testing.T) {
	h := newMemHost()
	cfg := testConfig()
	c := newTestCoordinator(t, cfg, h)
	a, b := &client{id: "a"}, &client{id: "b"}
	a.beat(t, c, "g")
	b.beat(t, c, "g")
	a.beat(t, c, "g")
	a.beat(t, c, "g")
	b.beat(t, c, "g")
	commitReq := kmsg.NewPtrOffsetCommitRequest()
	commitReq.Version = 9
	commitReq.Group, commitReq.MemberID, commitReq.Generation = "g", "a", a.epoch
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "t"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = 0, 42
	ct.Partitions = append(ct.Partitions, cp)
	commitReq.Topics = append(commitReq.Topics, ct)
	if code := c.OffsetCommit(commitReq).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(code))
	}
	want := cgDescribe(t, c, "g")

	// Another coordinator replays the partition (a failover).
	c2 := newTestCoordinator(t, cfg, h)
	got := cgDescribe(t, c2, "g")
	if got.Epoch != want.Epoch || got.AssignmentEpoch != want.AssignmentEpoch || got.State != want.State || len(got.Members) != 2 {
		t.Fatalf("after failover: %+v, want %+v", got, want)
	}
	for i := range got.Members {
		gm, wm := got.Members[i], want.Members[i]
		if gm.MemberID != wm.MemberID || gm.MemberEpoch != wm.MemberEpoch ||
			fmt.Sprint(gm.Assignment) != fmt.Sprint(wm.Assignment) || fmt.Sprint(gm.TargetAssignment) != fmt.Sprint(wm.TargetAssignment) {
			t.Fatalf("member after failover: %+v, want %+v", gm, wm)
		}
	}
	// Members carry on at their epochs with the new coordinator.
	a.beat(t, c2, "g")
	b.beat(t, c2, "g")
	noDoubleOwnership(t, a, b)
	fr := kmsg.NewPtrOffsetFetchRequest()
	fr.Version = 9
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group, rg.MemberID, rg.MemberEpoch = "g", kmsg.StringPtr("a"), a.epoch
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}
	fr.Groups = append(fr.Groups, rg)
	resp := c2.OffsetFetch(fr)
	if resp.Groups[0].ErrorCode != 0 || resp.Groups[0].Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("offset after failover: %+v", resp.Groups[0])
	}
	// Stale epoch and unknown member, as Kafka.
	fr.Groups[0].MemberEpoch = a.epoch + 5
	if code := c2.OffsetFetch(fr).Groups[0].ErrorCode; code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch with a wrong epoch: %v", kerr.ErrorForCode(code))
	}
	fr.Groups[0].MemberID = kmsg.StringPtr("zz")
	if code := c2.OffsetFetch(fr).Groups[0].ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("fetch by an unknown member: %v", kerr.ErrorForCode(code))
	}
	commitReq.Generation = a.epoch + 1
	if code := c2.OffsetCommit(commitReq).Topics[0].Partitions[0].ErrorCode; code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit with a wrong epoch: %v", kerr.ErrorForCode(code))
	}
	commitReq.Version, commitReq.Generation = 8, a.epoch
	if code := c2.OffsetCommit(commitReq).Topics[0].Partitions[0].ErrorCode; code != kerr.UnsupportedVersion.Code {
		t.Fatalf("commit v8 by a consumer-protocol member: %v", kerr.ErrorForCode(code))
	}
}

func TestClassicAndConsumerGroupsCoexist(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	// A classic group with a member.
	_, j := joinNew(t, c, "classic", joinOpts{})
	await(t, "join classic", j)
	mustOK(t, "consumer", cghb(c, "new", hbOpts{member: "m"}))

	r := cghb(c, "classic", hbOpts{member: "m"})
	if r.ErrorCode != kerr.GroupIDNotFound.Code || r.ErrorMessage == nil || *r.ErrorMessage != "Group classic is not a consumer group." {
		t.Fatalf("consumer join to a classic group: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	jr := await(t, "classic join to consumer group", join(c, "new", joinOpts{protos: []string{"range"}, version: 9}))
	if jr.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("classic join to a consumer group: %v", kerr.ErrorForCode(jr.ErrorCode))
	}
	// A join of another protocol type is refused.
	other := joinReq("new", joinOpts{})
	other.ProtocolType = "connect"
	och := make(chan *kmsg.JoinGroupResponse, 1)
	c.JoinGroup(other, "client", "/127.0.0.1", func(r *kmsg.JoinGroupResponse) { och <- r })
	if r := await(t, "connect join", och); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("connect join to a consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 5
	all := c.ListGroups(lreq)
	types := map[string]string{}
	for _, g := range all.Groups {
		types[g.Group] = g.GroupType + "/" + g.ProtocolType + "/" + g.GroupState
	}
	if types["classic"] != "classic/consumer/CompletingRebalance" && types["classic"] != "classic/consumer/Stable" {
		t.Fatalf("classic group listed as %q", types["classic"])
	}
	if types["new"] != "consumer/consumer/Stable" {
		t.Fatalf("consumer group listed as %q", types["new"])
	}
	lreq.TypesFilter = []string{"Consumer"}
	if got := c.ListGroups(lreq).Groups; len(got) != 1 || got[0].Group != "new" {
		t.Fatalf("types filter consumer: %+v", got)
	}
	lreq.TypesFilter, lreq.StatesFilter = nil, []string{"stable"}
	if got := c.ListGroups(lreq).Groups; len(got) < 1 || got[len(got)-1].Group != "new" {
		t.Fatalf("states filter: %+v", got)
	}

	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 6
	dreq.Groups = []string{"new", "absent"}
	dg := c.DescribeGroups(dreq).Groups
	if dg[0].ErrorCode != kerr.GroupIDNotFound.Code || *dg[0].ErrorMessage != "Group new is not a classic group." || dg[0].State != "Dead" {
		t.Fatalf("DescribeGroups v6 of a consumer group: %+v", dg[0])
	}
	if dg[1].ErrorCode != kerr.GroupIDNotFound.Code || *dg[1].ErrorMessage != "Group absent not found." {
		t.Fatalf("DescribeGroups v6 of an unknown group: %+v", dg[1])
	}
	dreq.Version = 5
	dg = c.DescribeGroups(dreq).Groups
	if dg[0].ErrorCode != 0 || dg[0].State != "Dead" {
		t.Fatalf("DescribeGroups v5 of a consumer group: %+v", dg[0])
	}

	creq := kmsg.NewPtrConsumerGroupDescribeRequest()
	creq.Groups = []string{"classic", "absent"}
	cg := c.ConsumerGroupDescribe(creq).Groups
	if cg[0].ErrorCode != kerr.GroupIDNotFound.Code || *cg[0].ErrorMessage != "Group classic is not a consumer group." {
		t.Fatalf("ConsumerGroupDescribe of a classic group: %+v", cg[0])
	}
	if cg[1].ErrorCode != kerr.GroupIDNotFound.Code || *cg[1].ErrorMessage != "Group absent not found." {
		t.Fatalf("ConsumerGroupDescribe of an unknown group: %+v", cg[1])
	}

	// A consumer group with members is not deleted; once empty it is, and
	// an empty consumer group becomes classic on a classic join.
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"new"}
	if code := c.DeleteGroups(del).Groups[0].ErrorCode; code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete of a consumer group with members: %v", kerr.ErrorForCode(code))
	}
	mustOK(t, "leave", cghb(c, "new", hbOpts{member: "m", epoch: -1, keep: true}))
	if d := cgDescribe(t, c, "new"); d.State != "Empty" {
		t.Fatalf("state after the last member left: %s", d.State)
	}
	_, j = joinNew(t, c, "new", joinOpts{})
	if r := await(t, "classic join to empty consumer group", j); r.ErrorCode != 0 {
		t.Fatalf("classic join to an empty consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestConsumerGroupDeleteAndReplay(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	mustOK(t, "join", cghb(c, "g", hbOpts{member: "m"}))
	mustOK(t, "leave", cghb(c, "g", hbOpts{member: "m", epoch: -1, keep: true}))
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	if code := c.DeleteGroups(del).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(code))
	}
	c2 := newTestCoordinator(t, testConfig(), h)
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"g"}
	if code := c2.ConsumerGroupDescribe(req).Groups[0].ErrorCode; code != kerr.GroupIDNotFound.Code {
		t.Fatalf("deleted group after replay: %v", kerr.ErrorForCode(code))
	}
}

// TestConsumerGroupChurn runs random joins, leaves and heartbeats of
// simulated clients and checks at every step that no partition has two
// owners and that a settled group owns every partition.
func TestConsumerGroupChurn(t *testing.T) {
	for _, assignor := range []string{"uniform", "range"} {
		t.Run(assignor, func(t *testing.T) {
			cfg := testConfig()
			cfg.Consumer.Assignors = []string{assignor}
			h := newMemHost()
			h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 12})
			c := newTestCoordinator(t, cfg, h)
			var cls []*client
			next := 0
			settle := func() {
				for range 20 {
					for _, cl := range cls {
						cl.beat(t, c, "g")
						noDoubleOwnership(t, cls...)
					}
				}
				total := 0
				for _, cl := range cls {
					total += len(cl.owned[topicT])
				}
				if len(cls) > 0 && total != 12 {
					t.Fatalf("%d members own %d of 12 partitions after settling", len(cls), total)
				}
				if len(cls) > 0 {
					if d := cgDescribe(t, c, "g"); d.State != "Stable" {
						t.Fatalf("group %s after settling", d.State)
					}
				}
			}
			for step := range 12 {
				if step%3 == 2 && len(cls) > 1 {
					gone := cls[0]
					cls = cls[1:]
					mustOK(t, "leave", cghb(c, "g", hbOpts{member: gone.id, epoch: -1, keep: true}))
				} else {
					cls = append(cls, &client{id: fmt.Sprintf("m%02d", next)})
					next++
				}
				// Interleave: the others heartbeat a few times, then settle.
				for _, cl := range cls {
					cl.beat(t, c, "g")
					noDoubleOwnership(t, cls...)
				}
				settle()
			}
		})
	}
}

// TestConsumerGroupCommitWithOlderEpoch: KIP-1251 (Kafka 4.3) accepts a
// commit with an older member epoch for partitions the member already had
// at that epoch, and refuses it for partitions it got later.
func TestConsumerGroupCommitWithOlderEpoch(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	a := &client{id: "a"}
	a.beat(t, c, "g") // epoch 1: all 6 partitions
	b := &client{id: "b"}
	b.beat(t, c, "g")
	a.beat(t, c, "g") // revoke 3
	a.beat(t, c, "g") // epoch 2, keeps 3 it had since epoch 1
	b.beat(t, c, "g") // b gets 3 at epoch 2
	if a.epoch != 2 || b.epoch != 2 {
		t.Fatalf("epochs %d, %d", a.epoch, b.epoch)
	}
	commit := func(member string, epoch int32, p int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = 9
		req.Group, req.MemberID, req.Generation = "g", member, epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return c.OffsetCommit(req).Topics[0].Partitions[0].ErrorCode
	}
	aOwns, bOwns := a.owned[topicT][0], b.owned[topicT][0]
	if code := commit("a", 1, aOwns); code != 0 {
		t.Fatalf("a commits a partition held since epoch 1 with epoch 1: %v", kerr.ErrorForCode(code))
	}
	if code := commit("b", 1, bOwns); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("b commits with an epoch before it had the partition: %v", kerr.ErrorForCode(code))
	}
	if code := commit("b", 2, bOwns); code != 0 {
		t.Fatalf("b commits with its epoch: %v", kerr.ErrorForCode(code))
	}
	if code := commit("b", 3, bOwns); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("b commits with an epoch ahead of its own: %v", kerr.ErrorForCode(code))
	}
}

func TestConsumerGroupV0GeneratesMemberID(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 0
	req.Group, req.RebalanceTimeoutMillis = "g", 30000
	req.SubscribedTopicNames = []string{"t"}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	r := c.ConsumerGroupHeartbeat(req, "client", "/127.0.0.1")
	mustOK(t, "v0 join", r)
	if r.MemberID == nil || len(*r.MemberID) != 22 || r.MemberEpoch != 1 {
		t.Fatalf("v0 join: member %v epoch %d", r.MemberID, r.MemberEpoch)
	}
}

func TestConsumerGroupStaticMemberBackUnderSameID(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	inst := "i1"
	r := cghb(c, "g", hbOpts{member: "m1", instance: &inst})
	mustOK(t, "join", r)
	mustOK(t, "static leave", cghb(c, "g", hbOpts{member: "m1", epoch: -2, instance: &inst, keep: true}))
	r = cghb(c, "g", hbOpts{member: "m1", instance: &inst})
	mustOK(t, "rejoin", r)
	if r.MemberEpoch != 1 || len(respAssignment(r)[topicT]) != 6 {
		t.Fatalf("static member back under its id: epoch %d assignment %v", r.MemberEpoch, respAssignment(r))
	}
}

// classicMember is a simulated classic-protocol consumer (eager: it owns
// nothing when it rejoins).
type classicClient struct {
	id         string
	generation int32
	owned      map[string][]int32
}

func (cl *classicClient) rejoin(t *testing.T, c *Coordinator, group string) {
	t.Helper()
	r := await(t, "rejoin "+cl.id, join(c, group, joinOpts{memberID: cl.id}))
	if r.ErrorCode != 0 {
		t.Fatalf("rejoin of %s: %v", cl.id, kerr.ErrorForCode(r.ErrorCode))
	}
	cl.generation = r.Generation
	s := await(t, "sync "+cl.id, sync_(c, group, cl.id, cl.generation, nil))
	if s.ErrorCode != 0 {
		t.Fatalf("sync of %s: %v", cl.id, kerr.ErrorForCode(s.ErrorCode))
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(s.MemberAssignment); err != nil {
		t.Fatalf("assignment of %s: %v", cl.id, err)
	}
	cl.owned = map[string][]int32{}
	for _, tp := range a.Topics {
		cl.owned[tp.Topic] = tp.Partitions
	}
}

func (cl *classicClient) heartbeat(c *Coordinator, group string) int16 {
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, cl.id, cl.generation
	return c.Heartbeat(hb).ErrorCode
}

// TestConsumerGroupOnlineMigration: a consumer-protocol member upgrades a
// Stable classic group; the classic members are told to rejoin and get
// their share through SyncGroup; when the consumer-protocol member
// leaves, the group is classic again.
func TestConsumerGroupOnlineMigration(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	id1, j1 := joinNew(t, c, "mg", joinOpts{})
	r1 := await(t, "join 1", j1)
	id2, j2 := joinNew(t, c, "mg", joinOpts{})
	if r1.Generation == 1 {
		j1 = join(c, "mg", joinOpts{memberID: id1})
	}
	r1, r2 := await(t, "rejoin 1", j1), await(t, "join 2", j2)
	leader := r1.LeaderID
	asg := func(ps ...int32) []byte {
		var a kmsg.ConsumerMemberAssignment
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: ps}}
		return a.AppendTo(nil)
	}
	other := id1
	if leader == id1 {
		other = id2
	}
	s2 := sync_(c, "mg", other, r2.Generation, nil)
	if s := await(t, "leader sync", sync_(c, "mg", leader, r1.Generation, map[string][]byte{leader: asg(0, 1, 2), other: asg(3, 4, 5)})); s.ErrorCode != 0 {
		t.Fatalf("leader sync: %v", kerr.ErrorForCode(s.ErrorCode))
	}
	await(t, "follower sync", s2)
	gen := r1.Generation

	// The upgrade.
	r := cghb(c, "mg", hbOpts{member: "new"})
	mustOK(t, "consumer join to a classic group", r)
	if r.MemberEpoch != gen+1 || len(respAssignment(r)[topicT]) != 0 {
		t.Fatalf("after upgrade: epoch %d assignment %v, want epoch %d and nothing yet", r.MemberEpoch, respAssignment(r), gen+1)
	}
	d := cgDescribe(t, c, "mg")
	types := map[int8]int{}
	for _, m := range d.Members {
		types[m.MemberType]++
	}
	if len(d.Members) != 3 || types[0] != 2 || types[1] != 1 {
		t.Fatalf("upgraded group members: %+v", d.Members)
	}
	// The classic members must rejoin; they get 2 partitions each.
	cls := []*classicClient{{id: id1, generation: gen}, {id: id2, generation: gen}}
	for _, cl := range cls {
		if code := cl.heartbeat(c, "mg"); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("classic heartbeat after upgrade: %v, want REBALANCE_IN_PROGRESS", kerr.ErrorForCode(code))
		}
		cl.rejoin(t, c, "mg")
	}
	nc := &client{id: "new", epoch: r.MemberEpoch, owned: assignment{}}
	for range 5 {
		r = cghb(c, "mg", hbOpts{member: "new", epoch: nc.epoch, owned: nc.owned})
		mustOK(t, "new member heartbeat", r)
		nc.epoch = r.MemberEpoch
		if a := respAssignment(r); a != nil {
			nc.owned = a
		}
		for _, cl := range cls {
			if cl.heartbeat(c, "mg") == kerr.RebalanceInProgress.Code {
				cl.rejoin(t, c, "mg")
			}
		}
	}
	total := len(nc.owned[topicT])
	seen := map[int32]bool{}
	for _, p := range nc.owned[topicT] {
		seen[p] = true
	}
	for _, cl := range cls {
		total += len(cl.owned["t"])
		for _, p := range cl.owned["t"] {
			if seen[p] {
				t.Fatalf("partition %d owned twice", p)
			}
			seen[p] = true
		}
		if len(cl.owned["t"]) != 2 {
			t.Fatalf("classic member %s owns %v, want 2 partitions", cl.id, cl.owned)
		}
	}
	if total != 6 {
		t.Fatalf("%d partitions owned after the upgrade, want 6", total)
	}
	// A failover keeps the classic members as classic members.
	d = cgDescribe(t, c, "mg")
	d2 := cgDescribe(t, newTestCoordinator(t, testConfig(), h), "mg")
	if fmt.Sprint(d2.Members) != fmt.Sprint(d.Members) || d2.Epoch != d.Epoch {
		t.Fatalf("after failover: %+v\nwant %+v", d2, d)
	}

	// The downgrade: the consumer-protocol member leaves.
	mustOK(t, "leave", cghb(c, "mg", hbOpts{member: "new", epoch: -1, keep: true}))
	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 6
	dreq.Groups = []string{"mg"}
	dg := c.DescribeGroups(dreq).Groups[0]
	if dg.ErrorCode != 0 || dg.State != "PreparingRebalance" || len(dg.Members) != 2 {
		t.Fatalf("after downgrade: %v %s %d members", kerr.ErrorForCode(dg.ErrorCode), dg.State, len(dg.Members))
	}
	if code := cls[0].heartbeat(c, "mg"); code != kerr.RebalanceInProgress.Code && code != kerr.IllegalGeneration.Code {
		t.Fatalf("classic heartbeat after downgrade: %v", kerr.ErrorForCode(code))
	}
}

func TestConsumerGroupMigrationDisabled(t *testing.T) {
	cfg := testConfig()
	cfg.Consumer.MigrationPolicy = "disabled"
	c := newTestCoordinator(t, cfg, newMemHost())
	_, j := joinNew(t, c, "cg", joinOpts{})
	r := await(t, "join", j)
	await(t, "sync", sync_(c, "cg", r.MemberID, r.Generation, nil))
	h := cghb(c, "cg", hbOpts{member: "new"})
	if h.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer join to a classic group with migration disabled: %v", kerr.ErrorForCode(h.ErrorCode))
	}
}

// TestConsumerGroupRegexMatchesInternalTopics: a regex subscription is
// resolved against every topic name, __consumer_offsets included, as
// Kafka's coordinator resolves it (franz-go's Test848RegexBrokerResolves).
func TestConsumerGroupRegexMatchesInternalTopics(t *testing.T) {
	h := newMemHost()
	offsets := [16]byte{0x77}
	h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 6}, &TopicMeta{Name: "__consumer_offsets", ID: offsets, Partitions: 3})
	c := newTestCoordinator(t, testConfig(), h)
	re := ".*(?:__consumer_offsets).*"
	r := cghb(c, "g", hbOpts{member: "m", regex: &re})
	mustOK(t, "join", r)
	if got := respAssignment(r); len(got) != 1 || len(got[offsets]) != 3 {
		t.Fatalf("regex %q got %v, want the 3 partitions of __consumer_offsets", re, got)
	}
}

// TestConsumerGroupNamesAndRegexTogether: as Kafka's GroupMetadataManager,
// a member may send topic names and a regex together and subscribes to
// their union; an empty regex is none. librdkafka 2.11 joins with its
// names and an empty regex, which Silkworm used to refuse with
// INVALID_REQUEST (confluent-kafka-go's suite with the consumer protocol).
func TestConsumerGroupNamesAndRegexTogether(t *testing.T) {
	h := newMemHost()
	h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 6}, &TopicMeta{Name: "u", ID: [16]byte{0x75}, Partitions: 2})
	c := newTestCoordinator(t, testConfig(), h)
	str := func(s string) *string { return &s }
	r := cghb(c, "g", hbOpts{member: "m", topics: []string{"t"}, regex: str("")})
	mustOK(t, "join with names and an empty regex", r)
	a := respAssignment(r)
	if len(parts(a, topicT)) != 6 || len(parts(a, [16]byte{0x75})) != 0 {
		t.Fatalf("names [t], empty regex: assigned %v, want t's 6 partitions only", a)
	}
	r = cghb(c, "g", hbOpts{member: "m", epoch: r.MemberEpoch, topics: []string{"t"}, regex: str("^u$"), owned: a})
	mustOK(t, "add a regex", r)
	if a = respAssignment(r); len(parts(a, topicT)) != 6 || len(parts(a, [16]byte{0x75})) != 2 {
		t.Fatalf("names [t], regex ^u$: assigned %v, want both topics", a)
	}
	r = cghb(c, "g", hbOpts{member: "m", epoch: r.MemberEpoch, topics: []string{}, regex: str("^u$"), owned: a})
	mustOK(t, "drop the names", r)
	if a := respAssignment(r); len(parts(a, topicT)) != 0 || len(parts(a, [16]byte{0x75})) != 2 {
		t.Fatalf("no names, regex ^u$: assigned %v, want u only", a)
	}
}
