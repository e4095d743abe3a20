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

// TestConfigChangesKnownToEveryNodeWhenAcknowledged: a group, topic or
// broker config change and a topic deletion, made through a node that is
// not the controller, are in every running node's image when the call
// returns. A librdkafka share consumer sets share.auto.offset.reset and
// subscribes at once; the share-partition's leader, another broker, reads
// the setting at the first ShareFetch and must not see the old value.
func TestConfigChangesKnownToEveryNodeWhenAcknowledged(t *testing.T) {
	c := newTestCluster(t, 3, 1, nil)
	for id := int32(1); id <= 4; id++ {
		if err := c.node(id).SetSelf(Broker{NodeID: id, Host: "127.0.0.1", Port: 9000 + id}); err != nil {
			t.Fatalf("register %d: %v", id, err)
		}
	}
	via := c.follower()
	for i := range 10 {
		name := fmt.Sprintf("t%d", i)
		if _, err := via.CreateTopic(name, 1, 3, nil); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		value := fmt.Sprint(i)
		if err := via.SetGroupConfigs("g", map[string]string{"share.auto.offset.reset": value}); err != nil {
			t.Fatalf("set group configs: %v", err)
		}
		if err := via.SetTopicConfigs(name, map[string]string{"retention.ms": value}); err != nil {
			t.Fatalf("set topic configs: %v", err)
		}
		if err := via.SetBrokerConfigs(map[string]string{"log.retention.ms": value}); err != nil {
			t.Fatalf("set broker configs: %v", err)
		}
		for _, q := range c.running() {
			im := q.Image()
			if got := im.GroupConfigs["g"]["share.auto.offset.reset"]; got != value {
				t.Fatalf("group config %s acknowledged, node %d has %q", value, q.NodeID(), got)
			}
			if got := im.Topics[name].Configs["retention.ms"]; got != value {
				t.Fatalf("topic config %s acknowledged, node %d has %q", value, q.NodeID(), got)
			}
			if got := im.BrokerConfigs["log.retention.ms"]; got != value {
				t.Fatalf("broker config %s acknowledged, node %d has %q", value, q.NodeID(), got)
			}
		}
		if err := via.DeleteTopic(name); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
		for _, q := range c.running() {
			if q.Image().Topics[name] != nil {
				t.Fatalf("delete %s acknowledged, node %d still has it", name, q.NodeID())
			}
		}
	}
}
