package txn

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// maxReplayUncompressed caps a replayed batch's decompressed size.
const maxReplayUncompressed = 64 << 20

// encodeBatch is the __transaction_state batch recording m for id.
func encodeBatch(id string, m meta, now time.Time) []byte {
	key := kmsg.TxnMetadataKey{Version: 0, TransactionalID: id}
	v := kmsg.NewTxnMetadataValue()
	v.Version = 0
	if m.bumped {
		// Kafka's value v1 (flexible): transaction version 2 and the
		// producer id before the last bump, so that a retried EndTxn v5
		// is recognised after a reload.
		v.Version = 1
		v.ClientTransactionVersion = 2
		v.PreviousProducerID = m.prevProducerID
	}
	v.ProducerID = m.producerID
	v.ProducerEpoch = m.epoch
	v.TimeoutMillis = int32(m.timeout / time.Millisecond)
	v.State = kmsg.TransactionState(m.state)
	parts := m.markerPartitions()
	for _, topic := range slices.Sorted(maps.Keys(parts)) {
		vt := kmsg.NewTxnMetadataValueTopic()
		vt.Topic = topic
		vt.Partitions = parts[topic]
		v.Topics = append(v.Topics, vt)
	}
	v.LastUpdateTimestamp = now.UnixMilli()
	v.StartTimestamp = -1
	if !m.start.IsZero() {
		v.StartTimestamp = m.start.UnixMilli()
	}
	return record.BuildBatch(record.BuildOptions{FirstTimestamp: now.UnixMilli()},
		[]record.Record{{Key: key.AppendTo(nil), Value: v.AppendTo(nil)}})
}

// replay rebuilds the transactional ids of one partition: the last
// record of each id wins, a tombstone removes it.
func replay(log Log) (map[string]meta, error) {
	out := map[string]meta{}
	err := log.Replay(func(batch []byte) error {
		h, err := record.ParseHeader(batch)
		if err != nil {
			return err
		}
		if h.IsControl() {
			return nil
		}
		recs, err := record.Records(batch, maxReplayUncompressed)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		for _, r := range recs {
			if len(r.Key) < 2 {
				return fmt.Errorf("record at offset %d: key of %d bytes", h.BaseOffset+int64(r.OffsetDelta), len(r.Key))
			}
			if version := int16(binary.BigEndian.Uint16(r.Key)); version != 0 {
				continue // not a transaction metadata record we know
			}
			var k kmsg.TxnMetadataKey
			if err := k.ReadFrom(r.Key); err != nil {
				return fmt.Errorf("record at offset %d: transaction key: %w", h.BaseOffset+int64(r.OffsetDelta), err)
			}
			if r.Value == nil {
				delete(out, k.TransactionalID)
				continue
			}
			var v kmsg.TxnMetadataValue
			if err := v.ReadFrom(r.Value); err != nil {
				return fmt.Errorf("record at offset %d: transaction value: %w", h.BaseOffset+int64(r.OffsetDelta), err)
			}
			m := meta{
				producerID: v.ProducerID, epoch: v.ProducerEpoch,
				timeout: time.Duration(v.TimeoutMillis) * time.Millisecond,
				state:   State(v.State), partitions: map[string]map[int32]struct{}{},
				updated: time.UnixMilli(v.LastUpdateTimestamp),
			}
			if v.StartTimestamp >= 0 {
				m.start = time.UnixMilli(v.StartTimestamp)
			}
			if v.Version >= 1 && v.ClientTransactionVersion >= 2 {
				m.bumped, m.prevProducerID = true, v.PreviousProducerID
			}
			for _, t := range v.Topics {
				ps := map[int32]struct{}{}
				for _, p := range t.Partitions {
					ps[p] = struct{}{}
				}
				m.partitions[t.Topic] = ps
			}
			out[k.TransactionalID] = m
		}
		return nil
	})
	return out, err
}
