package txn

import (
	"maps"
	"math"
	"slices"
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
	m.bumped = false
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

// AddPartitionsToTxn handles AddPartitionsToTxn: v0-3 from producers
// (one transaction), v4+ from brokers (a batch of transactions, each
// either added or, with VerifyOnly, checked: KIP-890). Unknown partitions
// get UNKNOWN_TOPIC_OR_PARTITION and the transaction's other partitions
// OPERATION_NOT_ATTEMPTED. The caller has authorized the request.
func (c *Coordinator) AddPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version < 4 {
		parts := map[string][]int32{}
		for _, rt := range req.Topics {
			parts[rt.Topic] = append(parts[rt.Topic], rt.Partitions...)
		}
		codes := c.addOrVerify(req.TransactionalID, req.ProducerID, req.ProducerEpoch, parts, false, req.Version)
		for _, rt := range req.Topics {
			st := kmsg.NewAddPartitionsToTxnResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[rt.Topic][p]
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	}
	for _, rtx := range req.Transactions {
		parts := map[string][]int32{}
		for _, rt := range rtx.Topics {
			parts[rt.Topic] = append(parts[rt.Topic], rt.Partitions...)
		}
		codes := c.addOrVerify(rtx.TransactionalID, rtx.ProducerID, rtx.ProducerEpoch, parts, rtx.VerifyOnly, req.Version)
		resp.Transactions = append(resp.Transactions, transactionResult(rtx.TransactionalID, parts, codes))
	}
	return resp
}

// transactionResult builds one transaction's part of an AddPartitionsToTxn
// v4+ response from per-partition codes.
func transactionResult(id string, parts map[string][]int32, codes map[string]map[int32]int16) kmsg.AddPartitionsToTxnResponseTransaction {
	rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
	rt.TransactionalID = id
	for _, topic := range slices.Sorted(maps.Keys(parts)) {
		st := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		st.Topic = topic
		for _, p := range parts[topic] {
			sp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			sp.Partition, sp.ErrorCode = p, codes[topic][p]
			st.Partitions = append(st.Partitions, sp)
		}
		rt.Topics = append(rt.Topics, st)
	}
	return rt
}

// addOrVerify adds parts to id's transaction, or only checks that they
// are in it (verify), and returns a code per partition.
func (c *Coordinator) addOrVerify(id string, producerID int64, epoch int16, parts map[string][]int32, verify bool, version int16) map[string]map[int32]int16 {
	codes := map[string]map[int32]int16{}
	all := func(code int16) map[string]map[int32]int16 {
		for topic, ps := range parts {
			if codes[topic] == nil {
				codes[topic] = map[int32]int16{}
			}
			for _, p := range ps {
				if _, set := codes[topic][p]; !set {
					codes[topic][p] = code
				}
			}
		}
		return codes
	}
	if id == "" {
		return all(kerr.InvalidRequest.Code)
	}
	if verify {
		t, code := c.lookup(id)
		if code != 0 {
			return all(code)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		switch {
		case t.meta.producerID != producerID:
			return all(kerr.InvalidProducerIDMapping.Code)
		case t.meta.epoch != epoch:
			return all(kerr.ProducerFenced.Code)
		case t.meta.state.preparing():
			return all(kerr.ConcurrentTransactions.Code)
		}
		for topic, ps := range parts {
			codes[topic] = map[int32]int16{}
			for _, p := range ps {
				_, in := t.meta.partitions[topic][p]
				if t.meta.state != Ongoing || !in {
					codes[topic][p] = kerr.TransactionAbortable.Code
				} else {
					codes[topic][p] = 0
				}
			}
		}
		return codes
	}
	unknown := false
	add := map[string][]int32{}
	for topic, ps := range parts {
		for _, p := range ps {
			if !c.host.PartitionExists(topic, p) {
				if codes[topic] == nil {
					codes[topic] = map[int32]int16{}
				}
				codes[topic][p] = kerr.UnknownTopicOrPartition.Code
				unknown = true
				continue
			}
			add[topic] = append(add[topic], p)
		}
	}
	if unknown {
		return all(kerr.OperationNotAttempted.Code)
	}
	t, code := c.lookup(id)
	if code == 0 {
		t.mu.Lock()
		code = c.beginLocked(t, producerID, epoch, version, 2)
		if code == 0 {
			code = c.addLocked(t, add)
		}
		t.mu.Unlock()
	}
	return all(code)
}

// VerifyPartition reports whether topic-partition p is part of id's
// ongoing transaction at producerID and epoch, for a partition leader on
// this node about to append the producer's first transactional batch
// there (KIP-890 part 1). With add set (Produce v12+, KIP-890 part 2) the
// partition is added instead. It returns a Kafka error code as
// AddPartitionsToTxn v4+ would.
func (c *Coordinator) VerifyPartition(id string, producerID int64, epoch int16, topic string, p int32, add bool) int16 {
	version := int16(4)
	if add {
		version = 5
	}
	return c.addOrVerify(id, producerID, epoch, map[string][]int32{topic: {p}}, !add, version)[topic][p]
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

// EndTxn handles EndTxn v0-5. It answers once the markers are written
// and the transaction is complete; when markers cannot be written yet it
// answers success after PrepareCommit/PrepareAbort is durable, as Kafka
// does, and keeps retrying them.
//
// From v5 (KIP-890 part 2, transaction version 2) every EndTxn bumps the
// producer epoch (a new producer id when the epoch is exhausted): the
// markers carry the bumped epoch, so a late write of the ended
// transaction is fenced, and the response names the new id and epoch.
// A retry comes with the epoch before the bump and is answered with the
// current one; an abort with no transaction ongoing is accepted and
// bumps the epoch.
func (c *Coordinator) EndTxn(req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID == "" {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	t, code := c.lookup(req.TransactionalID)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if req.Version >= 5 {
		return c.endTxnV2Locked(t, req, resp)
	}
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
		m.bumped = false
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

// endTxnV2Locked is EndTxn v5+ (transaction version 2).
func (c *Coordinator) endTxnV2Locked(t *txn, req *kmsg.EndTxnRequest, resp *kmsg.EndTxnResponse) *kmsg.EndTxnResponse {
	fail := func(code int16) *kmsg.EndTxnResponse {
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		resp.ErrorCode = code
		return resp
	}
	m := t.meta
	retry := m.bumped && req.ProducerEpoch == m.epoch-1 && req.ProducerID == m.producerID
	if m.producerID != req.ProducerID && !(m.bumped && req.ProducerID == m.prevProducerID) {
		return fail(kerr.InvalidProducerIDMapping.Code)
	}
	if m.bumped && req.ProducerID == m.prevProducerID && m.prevProducerID != m.producerID {
		retry = true // the bump moved to a new producer id
	}
	switch m.state {
	case PrepareCommit, PrepareAbort:
		if !retry {
			return fail(kerr.ProducerFenced.Code)
		}
		if (m.state == PrepareCommit) != req.Commit {
			return fail(kerr.InvalidTxnState.Code)
		}
		return fail(kerr.ConcurrentTransactions.Code)
	case CompleteCommit, CompleteAbort:
		if retry {
			if (m.state == CompleteCommit) != req.Commit {
				return fail(kerr.InvalidTxnState.Code)
			}
			resp.ProducerID, resp.ProducerEpoch = m.producerID, m.epoch
			return resp
		}
	}
	if req.ProducerEpoch != m.epoch || req.ProducerID != m.producerID {
		return fail(kerr.ProducerFenced.Code)
	}
	if m.state != Ongoing && req.Commit {
		return fail(kerr.InvalidTxnState.Code)
	}
	// Ongoing, or an abort of an empty transaction: bump and end.
	next := m.clone()
	next.state = PrepareAbort
	if req.Commit {
		next.state = PrepareCommit
	}
	if m.state != Ongoing {
		next.partitions = nil
	}
	next.prevProducerID = m.producerID
	next.bumped = true
	next.epoch = m.epoch + 1
	if err := c.writeLocked(t, next); err != nil {
		c.logger.Warn("end transaction", "transactional.id", t.id, "err", err)
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	c.finishLocked(t)
	if t.meta.epoch >= math.MaxInt16-1 && !t.meta.state.preparing() {
		// The epoch is exhausted: the producer continues with a new id.
		id, err := c.host.NextProducerID()
		if err == nil {
			n := t.meta.clone()
			n.producerID, n.epoch = id, 0
			if err = c.writeLocked(t, n); err == nil {
				t.meta.bumped, t.meta.prevProducerID = true, m.producerID
			}
		}
		if err != nil {
			c.logger.Warn("new producer id after epoch exhaustion", "transactional.id", t.id, "err", err)
		}
	}
	resp.ProducerID, resp.ProducerEpoch = t.meta.producerID, t.meta.epoch
	return resp
}
