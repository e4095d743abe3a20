package group

// Transactional offset commits (KIP-98): TxnOffsetCommit writes a group's
// offsets to __consumer_offsets in a transactional batch of the producer;
// they stay pending, invisible to OffsetFetch, until the transaction
// coordinator's marker reaches that partition: COMMIT makes them the
// group's committed offsets, ABORT drops them (CompleteTxn). Replay does
// the same with the markers it finds in the log.

import (
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// TxnOffsetCommit handles TxnOffsetCommit v0-3. A v3 request naming a
// generation (>= 0) is checked like OffsetCommit (member, generation);
// otherwise, as in Kafka, anyone may commit for the group.
func (c *Coordinator) TxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	setAll := func(code int16) *kmsg.TxnOffsetCommitResponse {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].ErrorCode == 0 {
					resp.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
		return resp
	}
	generation := int32(-1)
	if req.Version >= 3 {
		generation = req.Generation
	}
	g, code := c.group(req.Group, true)
	if code != 0 {
		return setAll(code)
	}
	g.mu.Lock()
	defer g.unlock()
	if generation >= 0 || g.state == Dead {
		if code := g.commitCheckLocked(req.MemberID, req.InstanceID, generation); code != 0 {
			return setAll(code)
		}
	}
	now := c.clock()
	type pending struct {
		key offsetKey
		o   committed
	}
	var writes []pending
	var recs []record.Record
	for i, rt := range req.Topics {
		for j, rp := range rt.Partitions {
			sp := &resp.Topics[i].Partitions[j]
			if !c.host.PartitionExists(rt.Topic, rp.Partition) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			meta := ""
			if rp.Metadata != nil {
				meta = *rp.Metadata
			}
			if len(meta) > c.cfg.OffsetMetadataMaxBytes {
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			epoch := int32(-1)
			if req.Version >= 2 {
				epoch = rp.LeaderEpoch
			}
			key := offsetKey{rt.Topic, rp.Partition}
			o := committed{offset: rp.Offset, leaderEpoch: epoch, metadata: meta, commitTime: now}
			writes = append(writes, pending{key, o})
			recs = append(recs, record.Record{Key: offsetRecordKey(g.id, key), Value: offsetRecordValue(o)})
		}
	}
	if len(recs) == 0 {
		return resp
	}
	batch := record.BuildBatch(record.BuildOptions{
		FirstTimestamp: now.UnixMilli(), Transactional: true,
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, BaseSequence: -1,
	}, recs)
	code = 0
	if len(batch) > c.cfg.MaxBatchBytes {
		code = kerr.InvalidCommitOffsetSize.Code
	} else if err := g.log.Append(batch); err != nil {
		code = kerr.CoordinatorNotAvailable.Code
		if errors.Is(err, storage.ErrInvalidProducerEpoch) {
			code = kerr.InvalidProducerEpoch.Code
			if req.Version >= 3 {
				code = kerr.ProducerFenced.Code
			}
		} else {
			c.logger.Error("transactional offset commit", "group", g.id, "err", err)
		}
	}
	if code != 0 {
		return setAll(code)
	}
	for _, w := range writes {
		g.addTxnOffsetLocked(req.ProducerID, w.key, w.o)
	}
	return resp
}

func (g *group) addTxnOffsetLocked(producerID int64, key offsetKey, o committed) {
	if g.txnOffsets == nil {
		g.txnOffsets = map[int64]map[offsetKey]committed{}
	}
	m := g.txnOffsets[producerID]
	if m == nil {
		m = map[offsetKey]committed{}
		g.txnOffsets[producerID] = m
	}
	m[key] = o
}

// completeTxnLocked applies (commit) or drops a producer's pending
// offsets.
func (g *group) completeTxnLocked(producerID int64, commit bool) {
	pending, ok := g.txnOffsets[producerID]
	if !ok {
		return
	}
	delete(g.txnOffsets, producerID)
	if commit {
		for k, o := range pending {
			g.offsets[k] = o
		}
	}
}

// CompleteTxn applies a transaction marker just written to partition p of
// __consumer_offsets: the producer's pending offsets of every group in p
// become committed (commit) or are dropped. The broker calls it after the
// marker's append.
func (c *Coordinator) CompleteTxn(p int32, producerID int64, commit bool) {
	c.mu.Lock()
	var groups []*group
	for id, g := range c.groups {
		if c.PartitionFor(id) == p {
			groups = append(groups, g)
		}
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		g.completeTxnLocked(producerID, commit)
		g.unlock()
	}
}

// txnReplay collects transactional offset records during a replay until
// their marker.
type txnReplay struct {
	pending map[int64][]record.Record // producer id -> offset records
}

// batch handles a transactional batch of the replay; it reports whether
// the batch was consumed (data stashed, or a marker applied).
func (tr *txnReplay) batch(c *Coordinator, get func(string) *group, hasMeta map[string]bool, h *record.Header, batch []byte) (bool, error) {
	if !h.IsTransactional() || h.ProducerID < 0 {
		return false, nil
	}
	if h.IsControl() {
		marker, err := storage.MarkerType(batch)
		if err != nil {
			return true, nil // not a marker we can read; Kafka would fail
		}
		recs := tr.pending[h.ProducerID]
		delete(tr.pending, h.ProducerID)
		if marker == storage.MarkerCommit {
			for i := range recs {
				if err := applyRecord(c, get, hasMeta, &recs[i]); err != nil {
					return true, err
				}
			}
		}
		return true, nil
	}
	recs, err := record.Records(batch, maxReplayUncompessed)
	if err != nil {
		return true, err
	}
	if tr.pending == nil {
		tr.pending = map[int64][]record.Record{}
	}
	tr.pending[h.ProducerID] = append(tr.pending[h.ProducerID], recs...)
	return true, nil
}

// finish makes the offsets of transactions still open at the log end
// pending in their groups.
func (tr *txnReplay) finish(get func(string) *group) {
	for pid, recs := range tr.pending {
		for _, r := range recs {
			if len(r.Key) < 2 || binary.BigEndian.Uint16(r.Key) > 1 || r.Value == nil {
				continue
			}
			var k kmsg.OffsetCommitKey
			var v kmsg.OffsetCommitValue
			if k.ReadFrom(r.Key) != nil || v.ReadFrom(r.Value) != nil {
				continue
			}
			get(k.Group).addTxnOffsetLocked(pid, offsetKey{k.Topic, k.Partition}, committedFromValue(&v))
		}
	}
}
