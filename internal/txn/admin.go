package txn

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ParseState is the state named name (Kafka's TransactionState.fromName),
// and false for a name Kafka does not know.
func ParseState(name string) (State, bool) {
	for s := Empty; s <= Dead; s++ {
		if s.String() == name {
			return s, true
		}
	}
	if name == "PrepareEpochFence" {
		return prepareEpochFence, true
	}
	return 0, false
}

// prepareEpochFence is Kafka's PrepareEpochFence state: never entered
// here (fencing aborts in one step), but a valid ListTransactions filter.
const prepareEpochFence State = 7

// Description is a transactional id as DescribeTransactions reports it.
type Description struct {
	State         State
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMillis int32
	// StartMillis is when the current (or last) transaction began, -1
	// when the id never started one.
	StartMillis int64
	// Partitions are the partitions of the ongoing transaction, and those
	// still waiting for their marker while it is preparing.
	Partitions map[string][]int32
}

// DescribeTransaction describes a transactional id this node
// coordinates. It returns a Kafka error code: COORDINATOR_NOT_AVAILABLE
// (closed or failed to load), NOT_COORDINATOR, TRANSACTIONAL_ID_NOT_FOUND.
func (c *Coordinator) DescribeTransaction(id string) (Description, int16) {
	if id == "" {
		return Description{}, kerr.InvalidRequest.Code
	}
	t, code := c.get(id, false)
	if code != 0 {
		return Description{}, code
	}
	if t == nil {
		return Description{}, kerr.TransactionalIDNotFound.Code
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.meta
	if m.state == Dead {
		return Description{}, kerr.TransactionalIDNotFound.Code
	}
	return Description{State: m.state, ProducerID: m.producerID, ProducerEpoch: m.epoch,
		TimeoutMillis: int32(m.timeout / time.Millisecond), StartMillis: startMillis(m),
		Partitions: m.markerPartitions()}, 0
}

func startMillis(m meta) int64 {
	if m.start.IsZero() {
		return -1
	}
	return m.start.UnixMilli()
}

// Listing is one transactional id as ListTransactions reports it.
type Listing struct {
	TransactionalID string
	ProducerID      int64
	State           State
}

// ListFilter selects transactions for ListTransactions; empty sets and a
// negative MinDurationMillis select everything.
type ListFilter struct {
	States      []State
	ProducerIDs []int64
	// MinDurationMillis keeps only transactions that began more than
	// this many milliseconds ago (ListTransactions v1); -1 keeps all.
	MinDurationMillis int64
	// Match, when set, keeps only the ids it accepts (v2's pattern).
	Match func(transactionalID string) bool
}

// List lists the transactional ids of every __transaction_state
// partition this node leads, loading those not loaded yet, sorted by id.
// Dead ids are left out, as Kafka does.
func (c *Coordinator) List(f ListFilter) []Listing {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	led := c.host.StateLogs()
	for p, log := range led {
		if lp, ok := c.loaded[p]; !ok || !lp.current(log) {
			if err := c.loadLocked(p, log); err != nil {
				c.logger.Error("load transaction state partition", "partition", p, "err", err)
			}
		}
	}
	var txns []*txn
	for id, t := range c.txns {
		if _, ok := led[c.PartitionFor(id)]; ok {
			txns = append(txns, t)
		}
	}
	c.mu.Unlock()
	now := c.clock().UnixMilli()
	var out []Listing
	for _, t := range txns {
		t.mu.Lock()
		m := t.meta
		t.mu.Unlock()
		switch {
		case m.state == Dead:
		case len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, m.producerID):
		case len(f.States) > 0 && !slices.Contains(f.States, m.state):
		case f.MinDurationMillis >= 0 && now-startMillis(m) <= f.MinDurationMillis:
		case f.Match != nil && !f.Match(t.id):
		default:
			out = append(out, Listing{TransactionalID: t.id, ProducerID: m.producerID, State: m.state})
		}
	}
	slices.SortFunc(out, func(a, b Listing) int {
		switch {
		case a.TransactionalID < b.TransactionalID:
			return -1
		case a.TransactionalID > b.TransactionalID:
			return 1
		}
		return 0
	})
	return out
}

// loadLed loads every __transaction_state partition this node leads and
// has not loaded at its current leader epoch, so that transactions left
// by a failed coordinator are completed (Prepare*) or timed out
// (Ongoing) without waiting for their producer.
func (c *Coordinator) loadLed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	for p, log := range c.host.StateLogs() {
		if lp, ok := c.loaded[p]; !ok || !lp.current(log) {
			if err := c.loadLocked(p, log); err != nil {
				c.logger.Error("load transaction state partition", "partition", p, "err", err)
			}
		}
	}
}
