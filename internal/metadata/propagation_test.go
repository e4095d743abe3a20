package metadata

import (
	"fmt"
	"testing"
)

// TestCreateTopicKnownToEveryNodeWhenAcknowledged: a created topic (or
// partition) is in the image of every running node by the time the
// creation returns, not only in the controller's. Otherwise a controller
// that dies right after acknowledging leaves the topic unknown to the
// other brokers until a new controller is elected (they would answer
// UNKNOWN_TOPIC_OR_PARTITION for a topic that exists).
func TestCreateTopicKnownToEveryNodeWhenAcknowledged(t *testing.T) {
	c := newTestCluster(t, 3, 1, nil)
	for id := int32(1); id <= 4; id++ { // node 4 joins as a Raft non-voter
		if err := c.node(id).SetSelf(Broker{NodeID: id, Host: "127.0.0.1", Port: 9000 + id}); err != nil {
			t.Fatalf("register %d: %v", id, err)
		}
	}
	leader := c.leader()
	for i := range 10 {
		name := fmt.Sprintf("t%d", i)
		if _, err := leader.CreateTopic(name, 1, 3, nil); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		for _, q := range c.running() {
			if q.Image().Topics[name] == nil {
				t.Fatalf("create %s acknowledged, but node %d does not know the topic", name, q.NodeID())
			}
		}
		if err := leader.CreatePartitions(name, 2); err != nil {
			t.Fatalf("create partitions of %s: %v", name, err)
		}
		for _, q := range c.running() {
			if tp := q.Image().Topics[name]; len(tp.Partitions) != 2 {
				t.Fatalf("partition %s-1 acknowledged, but node %d has %d partitions", name, q.NodeID(), len(tp.Partitions))
			}
		}
	}
}
