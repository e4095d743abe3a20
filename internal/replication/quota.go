package replication

import (
	"slices"
	"sync/atomic"
)

// Quota is the follower side of Kafka's replication throttle
// (ReplicationQuotaManager for follower.replication.throttled.rate): the
// replicas it names as throttled stop fetching while the bytes fetched for
// them exceed the rate; other replicas are never held back. The broker
// implements it from its configs; fetchers call it from their goroutines,
// so implementations must be safe for concurrent use.
type Quota interface {
	// Throttled reports whether this broker's replica of the partition is
	// throttled (follower.replication.throttled.replicas).
	Throttled(topic string, partition int32) bool
	// Exceeded reports whether throttled replicas have fetched more than
	// the rate allows right now.
	Exceeded() bool
	// Record counts bytes fetched for throttled replicas.
	Record(bytes int64)
}

// quotaHolder lets the broker install a Quota after the Manager started.
type quotaHolder struct{ q atomic.Pointer[Quota] }

func (h *quotaHolder) get() Quota {
	if p := h.q.Load(); p != nil {
		return *p
	}
	return nil
}

// SetQuota installs the follower throttle; nil removes it. The broker calls
// it once its configs are known; it is safe to call at any time.
func (m *Manager) SetQuota(q Quota) {
	if q == nil {
		m.quota.q.Store(nil)
		return
	}
	m.quota.q.Store(&q)
}

// throttleFilter drops from parts the throttled replicas that are not in
// the ISR while the quota is exceeded (Kafka's shouldFollowerThrottle),
// and returns the kept ones and, for Record, which of them are throttled.
func (m *Manager) throttleFilter(parts []*fetchState) (kept []*fetchState, throttled map[*fetchState]bool) {
	q := m.quota.get()
	if q == nil {
		return parts, nil
	}
	exceeded := q.Exceeded()
	for _, st := range parts {
		if q.Throttled(st.p.Topic, st.p.Index) {
			if exceeded && !slices.Contains(st.p.ISR(), m.cfg.NodeID) {
				continue // an in-sync replica is never held back
			}
			if throttled == nil {
				throttled = map[*fetchState]bool{}
			}
			throttled[st] = true
		}
		kept = append(kept, st)
	}
	return kept, throttled
}
