package group

import "sort"

// Stats is one group as the broker's metrics see it: its protocol, state,
// generation and committed offsets. It is a copy; the group moves on.
type Stats struct {
	ID string
	// Type is "classic" or "consumer" (KIP-848), as ListGroups names it.
	Type string
	// State is Kafka's state name (Stable, PreparingRebalance, ... for a
	// classic group; Empty, Assigning, Reconciling, Stable for a
	// consumer group).
	State string
	// Generation is a classic group's generation id, or a consumer
	// group's group epoch: each completed rebalance raises it.
	Generation int32
	// Offsets are the committed offsets (transactional ones only once
	// committed), sorted by topic and partition.
	Offsets []CommittedOffset
}

// CommittedOffset is a group's committed offset for one partition.
type CommittedOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Stats lists the groups this coordinator serves (Dead ones left out), in
// no particular order. The metrics collector calls it at scrape time; it
// takes each group's lock briefly and is safe for concurrent use.
func (c *Coordinator) Stats() []Stats {
	groups := c.snapshot()
	out := make([]Stats, 0, len(groups))
	for _, g := range groups {
		g.mu.Lock()
		if g.state == Dead {
			g.unlock()
			continue
		}
		s := Stats{ID: g.id, Type: "classic", State: g.state.String(), Generation: g.generation}
		if g.cg != nil {
			s.Type, s.State, s.Generation = "consumer", g.cg.stateString(), g.cg.epoch
		}
		s.Offsets = make([]CommittedOffset, 0, len(g.offsets))
		for k, o := range g.offsets {
			s.Offsets = append(s.Offsets, CommittedOffset{Topic: k.topic, Partition: k.partition, Offset: o.offset})
		}
		g.unlock()
		sort.Slice(s.Offsets, func(i, j int) bool {
			a, b := s.Offsets[i], s.Offsets[j]
			if a.Topic != b.Topic {
				return a.Topic < b.Topic
			}
			return a.Partition < b.Partition
		})
		out = append(out, s)
	}
	return out
}
