package share

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type fakeHost struct{ topics map[string]TopicMeta }

func (h fakeHost) Topic(name string) (TopicMeta, bool) { t, ok := h.topics[name]; return t, ok }
func (h fakeHost) Config(string) GroupConfig {
	return GroupConfig{SessionTimeout: time.Minute, HeartbeatInterval: time.Second, MaxSize: 3}
}

func hb(c *Coordinator, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = "g", member, epoch, topics
	return c.Heartbeat(req, "client", "/host")
}

func TestCoordinatorSimpleAssignorAndEpochs(t *testing.T) {
	host := fakeHost{topics: map[string]TopicMeta{"a": {ID: [16]byte{1}, Partitions: 2}}}
	c := NewCoordinator(host)
	defer c.Close()
	if r := hb(c, "m1", 3); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("heartbeat to an unknown group: %d", r.ErrorCode)
	}
	r1 := hb(c, "m1", 0, "a")
	r2 := hb(c, "m2", 0, "a")
	r3 := hb(c, "m3", 0, "a")
	if r3.MemberEpoch != 3 {
		t.Fatalf("third join epoch %d, want 3", r3.MemberEpoch)
	}
	// Three members, two partitions: each member gets one, partition 0
	// is shared.
	counts := map[int32]int{}
	for _, r := range []*kmsg.ShareGroupHeartbeatResponse{hb(c, "m1", r1.MemberEpoch), hb(c, "m2", r2.MemberEpoch), r3} {
		if r.Assignment == nil || len(r.Assignment.TopicPartitions) != 1 || len(r.Assignment.TopicPartitions[0].Partitions) != 1 {
			t.Fatalf("assignment %+v, want one partition", r.Assignment)
		}
		counts[r.Assignment.TopicPartitions[0].Partitions[0]]++
	}
	if counts[0] == 0 || counts[1] == 0 {
		t.Fatalf("partition members %v, want every partition assigned", counts)
	}
	if r := hb(c, "m4", 0, "a"); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("fourth member of a group of at most 3: %d", r.ErrorCode)
	}
	// New partitions bump the group epoch at the next heartbeat.
	host.topics["a"] = TopicMeta{ID: [16]byte{1}, Partitions: 3}
	if r := hb(c, "m3", 3); r.MemberEpoch != 4 || r.Assignment == nil {
		t.Fatalf("after partitions were added: epoch %d assignment %v", r.MemberEpoch, r.Assignment)
	}
	// A topic deleted and recreated under the same name with as many
	// partitions between two heartbeats (a producer auto-creating it
	// again, librdkafka's 0184) is a new assignment: it names topic ids.
	host.topics["a"] = TopicMeta{ID: [16]byte{2}, Partitions: 3}
	r := hb(c, "m3", 4)
	if r.MemberEpoch != 5 || r.Assignment == nil || len(r.Assignment.TopicPartitions) != 1 ||
		r.Assignment.TopicPartitions[0].TopicID != [16]byte{2} {
		t.Fatalf("after the topic was recreated: epoch %d assignment %+v, want epoch 5 naming the new id", r.MemberEpoch, r.Assignment)
	}
	if len(c.ListGroups()) != 1 || c.Describe("g").GroupEpoch != 5 {
		t.Fatalf("list %v describe %+v", c.ListGroups(), c.Describe("g"))
	}
	if code := c.Delete("g"); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete non-empty: %d", code)
	}
	for _, m := range []string{"m1", "m2", "m3"} {
		hb(c, m, -1)
	}
	if c.ListGroups()[0].State != StateEmpty || c.Delete("g") != 0 || c.HasGroup("g") {
		t.Fatalf("empty group not deleted")
	}
}
