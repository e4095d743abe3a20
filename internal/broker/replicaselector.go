package broker

// Fetch from the closest replica (KIP-392). With
// replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector,
// a leader that gets a consumer's fetch (v11+) naming a rack it is not in
// answers, for each partition that an in-sync follower in that rack holds
// at the fetch offset, that follower as the preferred read replica and no
// records. The client then fetches from the follower (readsFollowers), as
// from Kafka, whose ReplicaManager asks the selector the same way.

import (
	"time"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/partition"
)

// preferredReadReplica is the replica a consumer's fetch of p at offset
// should go to instead of this leader, or -1 to read here: Kafka's
// findPreferredReadReplica with its RackAwareReplicaSelector. Among the
// in-sync followers that hold offset, registered, unfenced and reachable
// on the client's listener, those in the client's rack are candidates;
// the leader wins when it is in that rack itself, else the candidate with
// the largest log end, then the one caught up most recently.
func (b *Broker) preferredReadReplica(r *request, rack string, p *partition.Partition, offset int64) int32 {
	if b.cfg.ReplicaSelectorClass != config.RackAwareReplicaSelector || rack == "" || rack == b.cfg.BrokerRack {
		return -1
	}
	followers := p.InSyncFollowersHolding(offset, time.Now())
	if len(followers) == 0 {
		return -1
	}
	im := b.meta.Image()
	best := -1
	for i, f := range followers {
		br := onListener(im.BrokerByID(f.ID), r.c.ls.name)
		if br == nil || br.Fenced || br.Rack == nil || *br.Rack != rack {
			continue
		}
		if best < 0 || f.LogEnd > followers[best].LogEnd ||
			f.LogEnd == followers[best].LogEnd && f.SinceCaughtUp < followers[best].SinceCaughtUp {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	return followers[best].ID
}

// setPreferredReadReplica records in fp the replica a consumer's fetch
// should go to, if another than this leader, and reports whether it did.
func (b *Broker) setPreferredReadReplica(r *request, rack string, p *partition.Partition, offset int64, fp *fetchPart) bool {
	fp.preferredReplica = b.preferredReadReplica(r, rack, p, offset)
	return fp.preferredReplica >= 0
}
