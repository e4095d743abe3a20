package broker

// Automatic preferred leader election (auto.leader.rebalance.enable).
//
// Kafka's controller checks every leader.imbalance.check.interval.seconds
// how many of the partitions whose preferred replica (the first of the
// replica list) is broker B are led by another broker; when that share
// exceeds leader.imbalance.per.broker.percentage for some B, it runs a
// preferred leader election for those partitions whose preferred replica
// is live and in the ISR. Partitions being reassigned are left alone.
//
// Here every broker runs the loop, and it acts only while this node is the
// active controller (the Raft leader), so one election is asked per
// interval in the cluster. It does not run on a single node, where every
// partition is led by its preferred replica.

import (
	"slices"
	"time"

	"github.com/silkworm/silkworm/internal/metadata"
)

// rebalancer runs the periodic check. Started by startAutoRebalance,
// stopped by close; not otherwise used concurrently.
type rebalancer struct {
	b          *Broker
	ops        clusterOps
	interval   time.Duration
	percentage int64
	stop       chan struct{}
	done       chan struct{}
}

// startAutoRebalance starts the check loop when this broker is part of a
// cluster and auto.leader.rebalance.enable is set. Called once from New.
func (b *Broker) startAutoRebalance() {
	if b.cluster == nil || !b.cfg.AutoLeaderRebalanceEnable {
		return
	}
	ops, ok := b.cluster.(clusterOps)
	if !ok {
		return
	}
	secs := intConfig(b.cfg, "leader.imbalance.check.interval.seconds", 300)
	r := &rebalancer{
		b:          b,
		ops:        ops,
		interval:   time.Duration(max(secs, 1)) * time.Second,
		percentage: intConfig(b.cfg, "leader.imbalance.per.broker.percentage", 10),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	b.rebalance = r
	go r.loop()
}

// close stops the loop and waits for it.
func (r *rebalancer) close() {
	close(r.stop)
	<-r.done
}

func (r *rebalancer) loop() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		if !r.ops.IsActiveController() {
			continue
		}
		tps := imbalancedPartitions(r.b.meta.Image(), r.percentage)
		if len(tps) == 0 {
			continue
		}
		results, err := r.ops.ElectLeaders(true, tps)
		if err != nil {
			r.b.log.Warn("auto leader rebalance", "partitions", len(tps), "err", err)
			continue
		}
		moved := 0
		for _, res := range results {
			if res.Err == nil {
				moved++
			}
		}
		r.b.log.Info("auto leader rebalance", "candidates", len(tps), "elected", moved)
	}
}

// imbalancedPartitions returns the partitions a preferred leader election
// should move: for every broker whose share of partitions led by others,
// among those it is the preferred replica of, exceeds percentage, those of
// them it could lead now (it is live and in the ISR). Partitions
// being reassigned are not counted.
func imbalancedPartitions(im *metadata.Image, percentage int64) []metadata.TopicPartition {
	total := map[int32]int{}  // partitions whose preferred replica is the key
	notLed := map[int32]int{} // ... that another broker leads
	candidates := map[int32][]metadata.TopicPartition{}
	for _, name := range im.SortedTopics() {
		for _, p := range im.Topics[name].Partitions {
			if len(p.Replicas) == 0 || len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0 {
				continue
			}
			pref := p.Replicas[0]
			total[pref]++
			if p.Leader == pref {
				continue
			}
			notLed[pref]++
			if slices.Contains(p.ISR, pref) && brokerLive(im, pref) {
				candidates[pref] = append(candidates[pref], metadata.TopicPartition{Topic: name, Partition: p.Partition})
			}
		}
	}
	var out []metadata.TopicPartition
	for _, id := range sortedKeys(candidates) {
		if int64(notLed[id])*100 > percentage*int64(total[id]) {
			out = append(out, candidates[id]...)
		}
	}
	return out
}

// brokerLive reports whether broker id is registered, unfenced and not
// shutting down: able to lead.
func brokerLive(im *metadata.Image, id int32) bool {
	b := im.BrokerByID(id)
	return b != nil && !b.Fenced && !b.InControlledShutdown
}

func sortedKeys[V any](m map[int32]V) []int32 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
