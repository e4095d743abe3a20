package embed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// WaitISR waits until every partition of topics (every topic when none is
// named) is fully in sync: every running broker answers Metadata with the
// topic, each partition has a leader, the same leader and leader epoch on
// every broker, every replica running and every replica in the ISR. It
// polls; the error when ctx ends says what was still missing.
func (c *Cluster) WaitISR(ctx context.Context, topics ...string) error {
	clients := map[int32]*kgo.Client{}
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		err := c.inSync(ctx, clients, topics)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("embed: wait for ISR: %w; last: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// partitionView is what one broker says of a partition.
type partitionView struct {
	leader, epoch int32
}

// inSync checks once; clients holds a client per node across calls.
func (c *Cluster) inSync(ctx context.Context, clients map[int32]*kgo.Client, topics []string) error {
	var running []int32
	for _, n := range c.nodes {
		if c.Running(n.id) {
			running = append(running, n.id)
		}
	}
	if len(running) == 0 {
		return errors.New("no node is running")
	}
	views := map[string]map[int32]partitionView{} // topic → partition → view
	var names []string                            // topics of the first answer
	for i, id := range running {
		cl := clients[id]
		if cl == nil {
			var err error
			if cl, err = kgo.NewClient(append(slices.Clone(c.cfg.ClientOpts), kgo.SeedBrokers(c.Addr(id)))...); err != nil {
				return err
			}
			clients[id] = cl
		}
		req := kmsg.NewPtrMetadataRequest()
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := req.RequestWith(rctx, cl.SeedBrokers()[0])
		cancel()
		if err != nil {
			return fmt.Errorf("node %d: metadata: %w", id, err)
		}
		var seen []string
		for _, rt := range resp.Topics {
			var name string
			if rt.Topic != nil {
				name = *rt.Topic
			}
			if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
				return fmt.Errorf("node %d: topic %s: %w", id, name, err)
			}
			if len(rt.Partitions) == 0 {
				return fmt.Errorf("node %d: topic %s has no partitions yet", id, name)
			}
			seen = append(seen, name)
			if views[name] == nil {
				views[name] = map[int32]partitionView{}
			} else if len(views[name]) != len(rt.Partitions) {
				return fmt.Errorf("topic %s: node %d sees %d partitions, node %d %d",
					name, running[0], len(views[name]), id, len(rt.Partitions))
			}
			for _, p := range rt.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("node %d: %s-%d: %w", id, name, p.Partition, err)
				}
				if p.Leader < 0 {
					return fmt.Errorf("node %d: %s-%d has no leader", id, name, p.Partition)
				}
				for _, r := range p.Replicas {
					if !slices.Contains(running, r) {
						return fmt.Errorf("%s-%d: replica %d is not running", name, p.Partition, r)
					}
					if !slices.Contains(p.ISR, r) {
						return fmt.Errorf("node %d: %s-%d: replica %d is not in the ISR %v", id, name, p.Partition, r, p.ISR)
					}
				}
				v := partitionView{p.Leader, p.LeaderEpoch}
				if i == 0 {
					views[name][p.Partition] = v
				} else if w, ok := views[name][p.Partition]; !ok || w != v {
					return fmt.Errorf("%s-%d: node %d sees leader %d epoch %d, node %d leader %d epoch %d",
						name, p.Partition, running[0], w.leader, w.epoch, id, v.leader, v.epoch)
				}
			}
		}
		slices.Sort(seen)
		if i == 0 {
			names = seen
		} else if !slices.Equal(names, seen) {
			return fmt.Errorf("node %d knows topics %v, node %d %v", running[0], names, id, seen)
		}
	}
	return nil
}
