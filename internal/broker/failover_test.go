package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// crash stops node id (1-based) the way SIGKILL does: no controlled
// shutdown, Raft stops at once, connections drop.
func (tc *testCluster) crash(id int32) {
	b := tc.brokers[id-1]
	tc.brokers[id-1] = nil
	if b.cluster != nil {
		b.cluster.Close()
	}
	if b.srv != nil {
		b.srv.close()
	}
	if b.isr != nil {
		b.isr.close()
	}
	if b.rebalance != nil {
		b.rebalance.close()
	}
	if b.repl != nil {
		b.repl.Close()
	}
	b.stopTxns()
	b.stopGroups()
	b.logs.Close()
}

// controllerID is the active controller as a live broker sees it.
func (tc *testCluster) controllerID() int32 {
	for _, b := range tc.brokers {
		if b == nil {
			continue
		}
		if id, ok := b.controller(); ok {
			return id
		}
	}
	return -1
}

// fullISR reports whether every live broker's image shows every
// partition of topic with a leader and all n replicas in the ISR.
func (tc *testCluster) fullISR(topic string, n int) bool {
	for _, b := range tc.brokers {
		if b == nil {
			return false
		}
		t := b.meta.Image().Topics[topic]
		if t == nil {
			return false
		}
		for _, pa := range t.Partitions {
			if pa.Leader < 0 || len(pa.ISR) != n {
				return false
			}
		}
	}
	return true
}

// TestClusterCrashControllerAfterCreateTopic creates a topic on the
// active controller, kills that controller (no controlled shutdown) as
// soon as the creation is acknowledged, and produces to every partition
// from a fresh acks=1 client seeded with every broker. The topic exists,
// so the live brokers must not answer UNKNOWN_TOPIC_OR_PARTITION while a
// new controller is elected (franz-go gives up after a few of those): the
// creation is acknowledged only once every live node applied it.
func TestClusterCrashControllerAfterCreateTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-broker failover")
	}
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for round := range 2 {
		topic := fmt.Sprintf("crash%d", round)
		var ctrl int32 = -1
		waitFor(t, "an active controller", func() bool {
			ctrl = tc.controllerID()
			return ctrl > 0 && tc.brokers[ctrl-1] != nil
		})
		if _, err := tc.brokers[ctrl-1].createTopic(topic, 3, 3, nil); err != nil {
			t.Fatalf("round %d: create topic: %v", round, err)
		}
		seeds := tc.seeds()
		tc.crash(ctrl)
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()),
			kgo.DisableIdempotentWrite(), kgo.MetadataMinAge(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
		for p := range int32(3) {
			_, err = cl.ProduceSync(pctx, &kgo.Record{Partition: p, Value: []byte("v")}).First()
			if err != nil {
				what := "error"
				if errors.Is(err, kerr.UnknownTopicOrPartition) {
					what = "UNKNOWN_TOPIC_OR_PARTITION"
				}
				t.Errorf("round %d: produce to %s-%d after killing controller %d: %s: %v", round, topic, p, ctrl, what, err)
			}
		}
		pcancel()
		cl.Close()
		if t.Failed() {
			return
		}
		tc.restart(ctrl)
		waitFor(t, "every replica in sync", func() bool { return tc.fullISR(topic, 3) })
	}
}
