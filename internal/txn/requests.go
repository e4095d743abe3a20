package txn

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID handles an InitProducerId request that names a
// transactional id (v0-4). A transaction still Ongoing is aborted first
// with a bumped epoch (fencing its producer); the caller then gets the
// next epoch, or a new producer id when the epoch would overflow. A v3+
// request naming its current producer id and epoch must match the
// coordinator's (INVALID_PRODUCER_ID_MAPPING, or PRODUCER_FENCED from v4,
// INVALID_PRODUCER_EPOCH before).
func (c *Coordinator) InitProducerID(req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	fail := func(code int16) *kmsg.InitProducerIDResponse { resp.ErrorCode = code; return resp }
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	if timeout <= 0 || timeout > c.cfg.MaxTimeout {
		return fail(kerr.InvalidTransactionTimeout.Code)
	}
	t, code := c.get(*req.TransactionalID, true)
	if code != 0 {
		return fail(code)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if code := c.settleLocked(t); code != 0 {
		return fail(code)
	}
	if req.ProducerID >= 0 && t.meta.producerID >= 0 {
		if code := checkProducerLocked(t, req.ProducerID, req.ProducerEpoch, req.Version, 4); code != 0 {
			return fail(code)
		}
	}
	if t.meta.state == Ongoing {
		if code := c.abortLocked(t); code != 0 {
			return fail(code)
		}
	}
	m := t.meta.clone()
	if m.producerID < 0 || m.epoch >= math.MaxInt16-1 {
		id, err := c.host.NextProducerID()
		if err != nil {
			c.logger.Error("allocate producer id", "err", err)
			return fail(kerr.CoordinatorNotAvailable.Code)
		}
		m.producerID, m.epoch = id, 0
	} else {
		m.epoch++
	}
	m.timeout = timeout
	m.state = Empty
	m.partitions = nil
	m.start = time.Time{}
	if err := c.writeLocked(t, m); err != nil {
		c.logger.Warn("init producer id", "transactional.id", t.id, "err", err)
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	resp.ProducerID, resp.ProducerEpoch = m.producerID, m.epoch
	return resp
}

// addLocked adds partitions to t's transaction, starting one if none is
// Ongoing, and persists the change when there is one.
func (c *Coordinator) addLocked(t *txn, add map[string][]int32) int16 {
	m := t.meta.clone()
	changed := m.state != Ongoing
	if m.state != Ongoing {
		m.partitions = map[string]map[int32]struct{}{}
		m.start = c.clock()
		m.state = Ongoing
	}
	for topic, ps := range add {
		set := m.partitions[topic]
		if set == nil {
			set = map[int32]struct{}{}
			m.partitions[topic] = set
		}
		for _, p := range ps {
			if _, ok := set[p]; !ok {
				set[p] = struct{}{}
				changed = true
			}
		}
	}
	if !changed {
		return 0
	}
	if err := c.writeLocked(t, m); err != nil {
		c.logger.Warn("add partitions to transaction", "transactional.id", t.id, "err", err)
		return kerr.CoordinatorNotAvailable.Code
	}
	return 0
}

// beginLocked runs the checks common to AddPartitionsToTxn,
// AddOffsetsToTxn and EndTxn once t's mu is held.
func (c *Coordinator) beginLocked(t *txn, producerID int64, epoch int16, version, fencedSince int16) int16 {
	if code := checkProducerLocked(t, producerID, epoch, version, fencedSince); code != 0 {
		return code
	}
	return c.settleLocked(t)
}

// lookup is get for requests that need an existing transactional id.
func (c *Coordinator) lookup(id string) (*txn, int16) {
	t, code := c.get(id, false)
	if code == 0 && t == nil {
		code = kerr.InvalidProducerIDMapping.Code
	}
	return t, code
}

// AddPartitionsToTxn handles AddPartitionsToTxn v0-3. Unknown partitions
// get UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED.
func (c *Coordinator) AddPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	codes := map[string]map[int32]int16{}
	add := map[string][]int32{}
	unknown := false
	for _, rt := range req.Topics {
		codes[rt.Topic] = map[int32]int16{}
		for _, p := range rt.Partitions {
			if !c.host.PartitionExists(rt.Topic, p) {
				codes[rt.Topic][p] = kerr.UnknownTopicOrPartition.Code
				unknown = true
				continue
			}
			add[rt.Topic] = append(add[rt.Topic], p)
		}
	}
	all := int16(0)
	if unknown {
		all = kerr.OperationNotAttempted.Code
	} else {
		t, code := c.lookup(req.TransactionalID)
		if code == 0 {
			t.mu.Lock()
			code = c.beginLocked(t, req.ProducerID, req.ProducerEpoch, req.Version, 2)
			if code == 0 {
				code = c.addLocked(t, add)
			}
			t.mu.Unlock()
		}
		all = code
	}
	for _, rt := range req.Topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		for _, p := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition = p
			sp.ErrorCode = all
			if code, ok := codes[rt.Topic][p]; ok {
				sp.ErrorCode = code
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// AddOffsetsToTxn handles AddOffsetsToTxn v0-3: the group's
// __consumer_offsets partition joins the transaction, so that the
// producer's TxnOffsetCommit becomes visible with the commit marker.
func (c *Coordinator) AddOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	t, code := c.lookup(req.TransactionalID)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if code := c.beginLocked(t, req.ProducerID, req.ProducerEpoch, req.Version, 2); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	topic, p := c.host.GroupPartition(req.Group)
	resp.ErrorCode = c.addLocked(t, map[string][]int32{topic: {p}})
	return resp
}

// EndTxn handles EndTxn v0-3. It answers once the markers are written
// and the transaction is complete; when markers cannot be written yet it
// answers success after PrepareCommit/PrepareAbort is durable, as Kafka
// does, and keeps retrying them.
func (c *Coordinator) EndTxn(req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	t, code := c.lookup(req.TransactionalID)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if code := c.beginLocked(t, req.ProducerID, req.ProducerEpoch, req.Version, 2); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = t.meta.producerID, t.meta.epoch
	switch t.meta.state {
	case Ongoing:
		m := t.meta.clone()
		m.state = PrepareAbort
		if req.Commit {
			m.state = PrepareCommit
		}
		if err := c.writeLocked(t, m); err != nil {
			c.logger.Warn("end transaction", "transactional.id", t.id, "err", err)
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return resp
		}
		c.finishLocked(t)
	case CompleteCommit:
		if !req.Commit {
			resp.ErrorCode = kerr.InvalidTxnState.Code
		}
	case CompleteAbort:
		if req.Commit {
			resp.ErrorCode = kerr.InvalidTxnState.Code
		}
	default:
		resp.ErrorCode = kerr.InvalidTxnState.Code
	}
	return resp
}
