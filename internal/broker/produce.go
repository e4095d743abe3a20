package broker

// Produce: v3-11
//
// Each partition must carry exactly one v2 record batch (Kafka's rule for
// v3+). The batch is validated (structure, CRC-32C, codec, record framing;
// compressed batches are decompressed under a size cap to check their
// records) and stored as sent: only base offset and partition leader epoch
// are patched, and for LogAppendTime topics the timestamp type and max
// timestamp (the CRC is then recomputed). acks=0 gets no response; a failed
// acks=0 produce closes the connection, as Kafka does. acks=-1 on a single
// node is satisfied by the local append (the ISR is the leader alone).
//
// Deviation: compression.type other than "producer" is not applied yet;
// batches are kept in the producer's codec. Transactions are not supported:
// transactional batches get INVALID_TXN_STATE.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

func init() { register(kmsg.Produce, 3, 11, handleProduce) }

func handleProduce(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	failed := false
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		ts := b.topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := b.producePartition(ts, req, rt.Topic, &rp)
			if sp.ErrorCode != 0 {
				failed = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		if failed {
			r.closeConn()
			return
		}
		r.respondNone()
		return
	}
	r.respond(resp)
}

func (b *Broker) producePartition(ts *topicState, req *kmsg.ProduceRequest, topic string, rp *kmsg.ProduceRequestTopicPartition) kmsg.ProduceResponseTopicPartition {
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition = rp.Partition
	fail := func(code int16, msg string) kmsg.ProduceResponseTopicPartition {
		sp.ErrorCode = code
		if msg != "" {
			sp.ErrorMessage = &msg
		}
		return sp
	}
	if req.Acks != 0 && req.Acks != 1 && req.Acks != -1 {
		return fail(kerr.InvalidRequiredAcks.Code, "")
	}
	if ts == nil || rp.Partition < 0 || int(rp.Partition) >= len(ts.partitions) {
		return fail(kerr.UnknownTopicOrPartition.Code, "")
	}
	p := ts.partitions[rp.Partition]
	batch := rp.Records
	if len(batch) == 0 {
		return fail(kerr.InvalidRecord.Code, "produce request must carry one record batch per partition")
	}
	if len(batch) >= record.LogOverhead {
		h, err := record.ParseHeader(batch)
		if err == nil && h.Size() < int64(len(batch)) {
			return fail(kerr.InvalidRecord.Code, "produce requests with version 3+ may carry only one record batch per partition")
		}
	}
	cfg := ts.cfg
	if int64(len(batch)) > int64(cfg.MaxMessageBytes) {
		return fail(kerr.MessageTooLarge.Code, "")
	}
	info, err := record.Validate(batch, record.ValidateOptions{
		RequireKeys:          cfg.Compacted(),
		MaxUncompressedBytes: maxUncompressed(int32(cfg.MaxMessageBytes)),
	})
	if err != nil {
		msg := err.Error()
		return fail(errorCode(err), msg)
	}
	if info.Transactional || req.TransactionID != nil {
		return fail(kerr.InvalidTxnState.Code, "transactions are not supported")
	}
	appendTime := int64(-1)
	if cfg.MessageTimestampType == "LogAppendTime" {
		appendTime = time.Now().UnixMilli()
		record.SetLogAppendTime(batch, appendTime)
	}
	res, err := p.AppendAsLeader(batch)
	if err != nil {
		if !errors.Is(err, record.ErrCorruptMessage) {
			b.log.Debug("produce failed", "partition", p.String(), "err", err)
		}
		return fail(errorCode(err), err.Error())
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = appendTime
	sp.LogStartOffset = p.Log.LogStartOffset()
	return sp
}

// maxUncompressed is the cap on a compressed batch's decompressed size: a
// bound on memory per request that is far above real compression ratios.
func maxUncompressed(maxMessageBytes int32) int {
	return max(64<<20, 16*int(maxMessageBytes))
}
