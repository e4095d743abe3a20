package broker

// Produce: v0-13
//
// v0-v2 are the versions of clients before Kafka 0.11, which write
// message format v0 (Produce v0-v1) or v1 (v2). As Kafka 2.8/3.x with
// the v2 message format, the broker validates such a legacy message set
// and converts it to one v2 batch (record.UpConvert: CRC-32, magic, codecs
// incl. xerial snappy and the magic 0 lz4 header checksum, wrapper rules,
// the message.timestamp.* window for magic 1 CreateTime), compressed with
// the topic's compression.type or the producer's codec, which then takes
// the v2 path below. Kafka does not tie the magic to the version below v3,
// so v0-v2 may also carry one v2 batch; v0-v2 with no records append
// nothing and answer base offset -1 without error, as Kafka. No request
// needs ApiVersions before it. zstd in a legacy set is INVALID_RECORD
// (Kafka's legacy record iterator refuses it so).
//
// From v3 each partition must carry exactly one v2 record batch (Kafka's
// ProduceRequest.validateRecords, in 2.8/3.x too: a legacy message set in
// v3+ is INVALID_RECORD). The batch is validated (structure, CRC-32C,
// codec, record framing; compressed batches are decompressed under a size
// cap to check their records) and stored as sent: only base offset and
// partition leader epoch are patched, and for LogAppendTime topics the
// timestamp type and max timestamp (the CRC is then recomputed). acks=0 gets no response; a failed
// acks=0 produce closes the connection, as Kafka does. acks=-1 on a single
// node is satisfied by the local append (the ISR is the leader alone).
// Deviation (pipelining): an acks=-1 request whose records are appended
// and that waits only for the ISR lets its connection read and append the
// client's next request meanwhile (Kafka mutes the connection until the
// response is sent); responses still leave in request order.
//
// compression.type "producer" keeps the producer's codec (the fast path);
// any other codec makes the broker re-encode batches that differ, as Kafka
// does. Transactional batches are appended like idempotent ones (the log
// checks producer id and epoch, so a fenced producer gets
// INVALID_PRODUCER_EPOCH) and open a transaction in the partition, which
// holds the last stable offset back until its marker.
//
// Control batches from clients get INVALID_RECORD. Keyless records sent to
// a compacted topic get INVALID_RECORD naming each one in record_errors
// (v8+, KIP-467), with Kafka's LogValidator messages; the batch is refused
// whole.
//
// A failed partition answers base offset -1, as Kafka. From v10 (KIP-951)
// a NOT_LEADER_OR_FOLLOWER answer names the current leader and epoch, and
// the response lists that leader's endpoint, so clients can redirect
// without a metadata round trip.
//
// Transaction verification (KIP-890): before a producer's first
// transactional batch in a partition (no transaction of it open there),
// the leader asks the transaction coordinator whether the partition is in
// the producer's ongoing transaction (AddPartitionsToTxn v4 VerifyOnly,
// transaction.partition.verification.enable, default true); from v12,
// when the cluster's transaction.version is 2, it adds the partition
// instead (AddPartitionsToTxn v5: the client sends no
// AddPartitionsToTxn). Errors as Kafka's ReplicaManager: INVALID_TXN_STATE
// (TRANSACTION_ABORTABLE from v11), INVALID_PRODUCER_EPOCH when fenced,
// NOT_ENOUGH_REPLICAS while the coordinator cannot answer. Deviation: no
// verification guard is kept between the answer and the append (Kafka's
// VerificationGuard), so a marker written in between is not noticed; with
// EndTxn v5 the marker's bumped epoch fences such a write anyway.
// Requests with transactional batches run off the io goroutine.
//
// v13 names topics by id (KIP-516/KIP-1112): an unknown id is
// UNKNOWN_TOPIC_ID and the response names topics by id.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/record"
)

func init() { register(kmsg.Produce, 0, 13, handleProduce) }

func handleProduce(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ProduceRequest)
	if req.TransactionID != nil && hasTransactionalBatch(req) {
		// Verifying the transaction may ask a remote coordinator: off the
		// io goroutine (responses still leave in request order).
		go b.produce(r, req)
		return
	}
	b.produce(r, req)
}

func (b *Broker) produce(r *request, req *kmsg.ProduceRequest) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.ThrottleMillis = b.throttle(r, quota.ProduceBytes, float64(r.size))
	failed := false
	var waits []produceWait
	// v13 names topics by id (KIP-516): resolve them first.
	names := make([]string, len(req.Topics))
	for ti, rt := range req.Topics {
		names[ti] = rt.Topic
		if req.Version >= 13 {
			names[ti] = ""
			if mt := b.meta.Image().TopicByID(rt.TopicID); mt != nil && rt.TopicID != [16]byte{} {
				names[ti] = mt.Name
			}
		}
	}
	// Authorization: WRITE on the transactional id when the records are
	// transactional (Kafka's hasTransactionalRecords), WRITE on each topic.
	txnDenied := req.TransactionID != nil && b.authz.acl != nil && hasTransactionalBatch(req) &&
		!b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionID)
	denials := make([]int16, len(req.Topics))
	for ti := range req.Topics {
		switch {
		case names[ti] == "":
			denials[ti] = kerr.UnknownTopicID.Code
		case txnDenied:
			denials[ti] = kerr.TransactionalIDAuthorizationFailed.Code
		case !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, names[ti]):
			denials[ti] = kerr.TopicAuthorizationFailed.Code
		}
	}
	// Only authorized partitions are verified (or added to the
	// transaction).
	verified := b.verifyProduce(req, names, denials)
	for ti, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name := names[ti]
		ts := b.topic(name)
		denied := denials[ti]
		for pi, rp := range rt.Partitions {
			if denied != 0 {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.BaseOffset, sp.ErrorCode = rp.Partition, -1, denied
				st.Partitions = append(st.Partitions, sp)
				failed = true
				continue
			}
			sp, w := b.producePartition(ts, req, name, &rp, verified[name][rp.Partition], r.hdr.ClientID == adminClientID)
			b.metrics.produced(ts, rp.Records, sp.ErrorCode)
			if sp.ErrorCode != 0 {
				failed = true
			}
			if w.p != nil {
				w.topic, w.part = ti, pi
				waits = append(waits, w)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(waits) > 0 {
		// Every record is appended and nothing of the request is read
		// any more: the connection may read the client's next request
		// while this one waits for the ISR (its answer still leaves in
		// request order).
		r.release()
		go b.waitProduce(r, req, resp, waits)
		return
	}
	if req.Acks == 0 {
		if failed {
			r.closeConn()
			return
		}
		r.respondNone()
		return
	}
	b.respondProduce(r, resp)
}

// verification is the outcome of a transaction verification for one
// partition: a produce error code and its message.
type verification struct {
	code int16
	msg  string
}

// verifyProduce checks with the transaction coordinator that the
// partitions where a transactional producer has no transaction open yet
// belong to its ongoing transaction (KIP-890 part 1,
// transaction.partition.verification.enable), or adds them (Produce v12+,
// part 2). Partitions that need no check are absent from the result.
func (b *Broker) verifyProduce(req *kmsg.ProduceRequest, names []string, denials []int16) map[string]map[int32]verification {
	if req.TransactionID == nil || *req.TransactionID == "" || !hasTransactionalBatch(req) {
		return nil
	}
	add := req.Version >= 12 && b.txnVersion2()
	if !add && !b.txnVerificationEnabled() {
		return nil
	}
	parts := map[string][]int32{}
	producerID, epoch := int64(-1), int16(-1)
	for ti, rt := range req.Topics {
		if denials[ti] != 0 {
			continue
		}
		for _, rp := range rt.Partitions {
			h, err := record.ParseHeader(rp.Records)
			if err != nil || !h.IsTransactional() || h.ProducerID < 0 {
				continue
			}
			_, p := b.partition(names[ti], rp.Partition)
			if p == nil || !p.IsLeader() {
				continue
			}
			if _, open := p.Log.OngoingTxnStart(h.ProducerID); open {
				continue
			}
			producerID, epoch = h.ProducerID, h.ProducerEpoch
			parts[names[ti]] = append(parts[names[ti]], rp.Partition)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	codes := b.verifyTxn(*req.TransactionID, producerID, epoch, parts, add)
	out := map[string]map[int32]verification{}
	for topic, ps := range codes {
		out[topic] = map[int32]verification{}
		for p, code := range ps {
			c, msg := verificationError(code, req.Version > 10)
			out[topic][p] = verification{c, msg}
		}
	}
	return out
}

// respondProduce sends a produce response, naming current leaders from v10.
func (b *Broker) respondProduce(r *request, resp *kmsg.ProduceResponse) {
	if r.hdr.APIVersion >= 10 {
		b.produceCurrentLeaders(r, resp)
	}
	r.respond(resp)
}

// produceWait is an acks=all append whose records the ISR does not hold
// yet: the answer waits until the high watermark passes target.
type produceWait struct {
	p           *partition.Partition
	target      int64 // last offset + 1
	minISR      int
	topic, part int // indexes in the response
}

// adminClientID is the client id of Kafka's AdminUtils, the one client
// whose produce requests may append to internal topics.
const adminClientID = "__admin_client"

func (b *Broker) producePartition(ts *topicState, req *kmsg.ProduceRequest, topic string, rp *kmsg.ProduceRequestTopicPartition, v verification, internalAllowed bool) (kmsg.ProduceResponseTopicPartition, produceWait) {
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition = rp.Partition
	fail := func(code int16, msg string) (kmsg.ProduceResponseTopicPartition, produceWait) {
		sp.BaseOffset = -1
		sp.ErrorCode = code
		if msg != "" {
			sp.ErrorMessage = &msg
		}
		return sp, produceWait{}
	}
	if req.Acks != 0 && req.Acks != 1 && req.Acks != -1 {
		return fail(kerr.InvalidRequiredAcks.Code, "")
	}
	if ts == nil || rp.Partition < 0 || int(rp.Partition) >= len(ts.partitions) {
		return fail(kerr.UnknownTopicOrPartition.Code, "")
	}
	if isInternalTopic(topic) && !internalAllowed {
		// ReplicaManager.appendToLocalLog: the coordinators own these
		// logs; a client's records would corrupt their state. The
		// answer carries Kafka's code without its message.
		return fail(kerr.InvalidTopicException.Code, "")
	}
	p := ts.partitions[rp.Partition]
	if p == nil {
		return fail(kerr.NotLeaderForPartition.Code, "")
	}
	batch := rp.Records
	if req.Version < 3 {
		var code int16
		var msg string
		if batch, code, msg = upconvertProduce(&ts.cfg, batch); code != 0 {
			return fail(code, msg)
		}
		if batch == nil { // no records: nothing appended, as Kafka
			sp.BaseOffset, sp.LogStartOffset = -1, p.Log.LogStartOffset()
			return sp, produceWait{}
		}
		// The caller's metrics count the records of rp.Records: give
		// them the v2 batch (rp is the caller's copy, not the request's).
		rp.Records = batch
	}
	if code, msg := checkOneBatch(batch); code != 0 {
		return fail(code, msg)
	}
	cfg := ts.cfg
	if int64(len(batch)) > int64(cfg.MaxMessageBytes) {
		return fail(kerr.MessageTooLarge.Code, "")
	}
	info, err := record.Validate(batch, record.ValidateOptions{
		RequireKeys:          cfg.Compacted(),
		MaxUncompressedBytes: maxUncompressed(int32(cfg.MaxMessageBytes)),
	})
	if ire := (*record.InvalidRecordsError)(nil); errors.As(err, &ire) {
		sp.ErrorRecords, sp.ErrorMessage = recordErrors(topic, rp.Partition, ire)
		sp.BaseOffset, sp.ErrorCode = -1, kerr.InvalidRecord.Code
		sp.LogStartOffset = p.Log.LogStartOffset()
		return sp, produceWait{}
	}
	if err != nil {
		msg := err.Error()
		return fail(errorCode(err), msg)
	}
	if info.Control {
		return fail(kerr.InvalidRecord.Code, "clients may not send control batches")
	}
	if info.Transactional && (info.ProducerID < 0 || req.TransactionID == nil) {
		return fail(kerr.InvalidRecord.Code, "a transactional batch needs a producer id and a transactional id")
	}
	if v.code != 0 {
		return fail(v.code, v.msg)
	}
	if cfg.MessageTimestampType != "LogAppendTime" {
		if errs, msg := timestampErrors(batch, info, cfg); errs != nil {
			sp.ErrorRecords, sp.ErrorMessage = errs, msg
			sp.BaseOffset, sp.ErrorCode = -1, kerr.InvalidTimestamp.Code
			sp.LogStartOffset = p.Log.LogStartOffset()
			return sp, produceWait{}
		}
	}
	if c, ok := record.ParseCompression(cfg.CompressionType); ok && c != info.Compression {
		batch, err = record.Recompress(batch, c, maxUncompressed(int32(cfg.MaxMessageBytes)))
		if err != nil {
			return fail(errorCode(err), err.Error())
		}
	}
	appendTime := int64(-1)
	if cfg.MessageTimestampType == "LogAppendTime" {
		appendTime = time.Now().UnixMilli()
		record.SetLogAppendTime(batch, appendTime)
	}
	minISR := 0
	if req.Acks == -1 {
		minISR = cfg.MinInsyncReplicas
	}
	res, err := p.AppendAsLeader(batch, minISR)
	if err != nil {
		if !errors.Is(err, record.ErrCorruptMessage) {
			b.log.Debug("produce failed", "partition", p.String(), "err", err)
		}
		return fail(errorCode(err), err.Error())
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = appendTime
	sp.LogStartOffset = p.Log.LogStartOffset()
	if req.Acks == -1 && p.HighWatermark() <= res.LastOffset {
		return sp, produceWait{p: p, target: res.LastOffset + 1, minISR: minISR}
	}
	return sp, produceWait{}
}

// recordErrors builds the record_errors and error_message of a partition
// whose batch has records a rule refuses (KIP-467), with the texts of
// Kafka's LogValidator: validateKey's message per keyless record, and
// processRecordErrors' summary showing the first three.
func recordErrors(topic string, part int32, e *record.InvalidRecordsError) ([]kmsg.ProduceResponseTopicPartitionErrorRecord, *string) {
	msg := fmt.Sprintf("Compacted topic cannot accept message without key in topic partition %s-%d.", topic, part)
	out := make([]kmsg.ProduceResponseTopicPartitionErrorRecord, 0, len(e.NullKeys))
	var shown []string
	for _, idx := range e.NullKeys {
		re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		re.RelativeOffset, re.ErrorMessage = idx, kmsg.StringPtr(msg)
		out = append(out, re)
		if len(shown) < 3 {
			shown = append(shown, fmt.Sprintf("RecordError(batchIndex=%d, message='%s')", idx, msg))
		}
	}
	summary := fmt.Sprintf("One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [%s]",
		len(out), strings.Join(shown, ", "))
	return out, &summary
}

// produceCurrentLeaders fills, for every NOT_LEADER_OR_FOLLOWER partition,
// the leader and leader epoch that metadata knows, and adds the endpoints
// of those leaders to the response (Produce v10+, KIP-951).
func (b *Broker) produceCurrentLeaders(r *request, resp *kmsg.ProduceResponse) {
	var im *metadata.Image
	listed := map[int32]bool{}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		for pi := range rt.Partitions {
			sp := &rt.Partitions[pi]
			if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
				continue
			}
			if im == nil {
				im = b.meta.Image()
			}
			name := rt.Topic
			if r.hdr.APIVersion >= 13 {
				if mt := im.TopicByID(rt.TopicID); mt != nil {
					name = mt.Name
				}
			}
			leader, epoch, br := currentLeader(im, name, sp.Partition, r.c.ls.name)
			if br == nil {
				continue
			}
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = leader, epoch
			if !listed[leader] {
				listed[leader] = true
				pb := kmsg.NewProduceResponseBroker()
				pb.NodeID, pb.Host, pb.Port, pb.Rack = br.NodeID, br.Host, br.Port, br.Rack
				resp.Brokers = append(resp.Brokers, pb)
			}
		}
	}
}

// currentLeader returns the leader of a partition as metadata knows it,
// with its epoch and live broker, or a nil broker when it has none.
func currentLeader(im *metadata.Image, topic string, part int32, listener string) (int32, int32, *metadata.Broker) {
	t := im.Topics[topic]
	if t == nil || part < 0 || int(part) >= len(t.Partitions) {
		return -1, -1, nil
	}
	pa := t.Partitions[part]
	br := onListener(im.BrokerByID(pa.Leader), listener)
	if pa.Leader < 0 || br == nil || br.Fenced {
		return -1, -1, nil
	}
	return pa.Leader, pa.LeaderEpoch, br
}

// waitProduce answers an acks=all produce once the ISR holds every
// appended batch, or when the request's timeout passes (REQUEST_TIMED_OUT
// for the partitions still waiting). It runs on its own goroutine.
func (b *Broker) waitProduce(r *request, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse, waits []produceWait) {
	wake := make(chan struct{}, 1)
	for _, w := range waits {
		w.p.WatchHighWatermark(wake, w.target)
		defer w.p.Unwatch(wake)
	}
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	timer := time.NewTimer(max(timeout-time.Since(r.received), 0))
	defer timer.Stop()
	for {
		pending := waits[:0]
		for _, w := range waits {
			sp := &resp.Topics[w.topic].Partitions[w.part]
			switch {
			case !w.p.IsLeader():
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			case w.p.HighWatermark() >= w.target:
				if w.minISR > 0 && w.p.ISRSize() < w.minISR {
					sp.ErrorCode = kerr.NotEnoughReplicasAfterAppend.Code
				}
			default:
				pending = append(pending, w)
			}
		}
		waits = pending
		if len(waits) == 0 {
			b.respondProduce(r, resp)
			return
		}
		select {
		case <-wake:
		case <-timer.C:
			for _, w := range waits {
				resp.Topics[w.topic].Partitions[w.part].ErrorCode = kerr.RequestTimedOut.Code
			}
			b.respondProduce(r, resp)
			return
		case <-r.c.done:
			r.respondNone()
			return
		}
	}
}

// upconvertProduce prepares the records of a Produce v0-v2 partition for
// the v2 path: a legacy message set is validated and converted to one v2
// batch (record.UpConvert) with the topic's codec (the producer's for
// compression.type "producer", Kafka's targetCompression) and the topic's
// timestamp rules; a v2 batch is returned as it is; no records at all give
// nil. A refused set gives a Kafka error code and message.
func upconvertProduce(cfg *config.Topic, records []byte) ([]byte, int16, string) {
	if len(records) == 0 {
		return nil, 0, ""
	}
	if len(records) > record.OffsetMagic && records[record.OffsetMagic] == record.MagicV2 {
		return records, 0, ""
	}
	target, ok := record.ParseCompression(cfg.CompressionType)
	// Uncompressed v2 records are smaller than legacy messages: one
	// allocation holds the batch.
	dst := make([]byte, 0, record.HeaderSize+len(records))
	batch, _, err := record.UpConvert(dst, records, record.UpConvertOptions{
		KeepCompression:      !ok,
		Compression:          target,
		MaxMessageBytes:      cfg.MaxMessageBytes,
		MaxUncompressedBytes: maxUncompressed(int32(cfg.MaxMessageBytes)),
		LogAppendTime:        cfg.MessageTimestampType == "LogAppendTime",
		Now:                  time.Now().UnixMilli(),
		TimestampBeforeMaxMs: timestampWindow(cfg.MessageTimestampBeforeMaxMs, cfg.MessageTimestampDifferenceMaxMs),
		TimestampAfterMaxMs:  timestampWindow(cfg.MessageTimestampAfterMaxMs, cfg.MessageTimestampDifferenceMaxMs),
	})
	switch {
	case errors.Is(err, record.ErrInvalidTimestamp):
		return nil, kerr.InvalidTimestamp.Code, err.Error()
	case err != nil:
		return nil, errorCode(err), err.Error()
	}
	return batch, 0, ""
}

// timestampErrors checks a CreateTime topic's batch against
// message.timestamp.before.max.ms and after.max.ms as Kafka's LogValidator
// does, record by record (records without a timestamp pass). The batch's
// smallest and largest timestamps, which Validate found, settle the common
// case; only a batch outside the window is decoded to name each record
// out of range in record_errors, with Kafka's texts. nil: every record is
// within the window.
func timestampErrors(batch []byte, info record.Info, cfg config.Topic) ([]kmsg.ProduceResponseTopicPartitionErrorRecord, *string) {
	before := timestampWindow(cfg.MessageTimestampBeforeMaxMs, cfg.MessageTimestampDifferenceMaxMs)
	after := timestampWindow(cfg.MessageTimestampAfterMaxMs, cfg.MessageTimestampDifferenceMaxMs)
	if info.RecordCount == 0 || before == math.MaxInt64 && after == math.MaxInt64 {
		return nil, nil
	}
	now := time.Now().UnixMilli()
	lo, hi := now-before, int64(math.MaxInt64) // before >= 0 and now > 0: no overflow
	if after < math.MaxInt64-now {
		hi = now + after
	}
	if info.MinTimestamp >= lo && info.MaxTimestamp <= hi {
		return nil, nil
	}
	recs, err := record.Records(batch, maxUncompressed(int32(cfg.MaxMessageBytes)))
	if err != nil {
		return nil, nil // Validate accepted it; nothing more to say
	}
	base := int64(binary.BigEndian.Uint64(batch[record.OffsetBaseOffset:]))
	var out []kmsg.ProduceResponseTopicPartitionErrorRecord
	for i, r := range recs {
		ts := info.FirstTimestamp + r.TimestampDelta
		if ts == -1 || ts >= lo && ts <= hi {
			continue
		}
		re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		re.RelativeOffset = int32(i)
		re.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
			ts, base+int64(r.OffsetDelta), lo, hi))
		out = append(out, re)
	}
	if out == nil {
		return nil, nil
	}
	return out, kmsg.StringPtr("One or more records have been rejected due to invalid timestamp")
}

// timestampWindow is Kafka's effective message.timestamp.before.max.ms (or
// after.max.ms): the deprecated message.timestamp.difference.max.ms while
// the newer key keeps its default (LogConfig, Kafka 3.6+).
func timestampWindow(ms, differenceMs int64) int64 {
	if ms == math.MaxInt64 {
		return differenceMs
	}
	return ms
}

// legacyRecordOverheadV0 is the smallest size a batch (a v0 message) can
// announce; Kafka's log input stream rejects anything smaller as corrupt.
const legacyRecordOverheadV0 = 14

// checkOneBatch applies Kafka's rule for the records of a produce v3+
// partition (ProduceRequest.validateRecords): exactly one whole batch, of
// magic 2. Batches are delimited as Kafka's log input stream does, so the
// answers match Kafka's: a size below the minimum or a magic that never
// existed is CORRUPT_MESSAGE; no whole batch (null records, a batch length
// beyond the bytes sent), a legacy magic or a second whole batch is
// INVALID_RECORD. Bytes after the batch that do not form a second whole
// one are left for record.Validate, which answers CORRUPT_MESSAGE (Kafka
// finds the same batch failing its CRC).
func checkOneBatch(b []byte) (int16, string) {
	first, err := nextBatchSize(b)
	if err != "" {
		return kerr.CorruptMessage.Code, err
	}
	if first == 0 {
		return kerr.InvalidRecord.Code, "produce requests with version 3 and above must have at least one record batch per partition"
	}
	if magic := int8(b[record.OffsetMagic]); magic != record.MagicV2 {
		return kerr.InvalidRecord.Code, fmt.Sprintf("produce requests with version 3 and above may only carry record batches with magic 2, not %d", magic)
	}
	second, err := nextBatchSize(b[first:])
	if err != "" {
		return kerr.CorruptMessage.Code, err
	}
	if second > 0 {
		return kerr.InvalidRecord.Code, "produce requests with version 3 and above may carry only one record batch per partition"
	}
	return 0, ""
}

// nextBatchSize returns the size of the whole batch at the start of b, or
// 0 when b does not hold one, or a message when its header is corrupt.
func nextBatchSize(b []byte) (int, string) {
	if len(b) < record.LogOverhead {
		return 0, ""
	}
	size := int32(binary.BigEndian.Uint32(b[record.OffsetBatchLength:]))
	if size < legacyRecordOverheadV0 {
		return 0, fmt.Sprintf("record size %d is less than the minimum record overhead (%d)", size, legacyRecordOverheadV0)
	}
	if len(b) <= record.OffsetMagic {
		return 0, ""
	}
	if magic := int8(b[record.OffsetMagic]); magic < 0 || magic > record.MagicV2 {
		return 0, fmt.Sprintf("invalid magic found in record: %d", magic)
	}
	if int64(len(b)) < int64(size)+record.LogOverhead {
		return 0, ""
	}
	return int(size) + record.LogOverhead, ""
}

// maxUncompressed is the cap on a compressed batch's decompressed size: a
// bound on memory per request that is far above real compression ratios.
func maxUncompressed(maxMessageBytes int32) int {
	return max(64<<20, 16*int(maxMessageBytes))
}

// hasTransactionalBatch reports whether any partition of req carries a
// batch with the transactional attribute, read straight from the header.
func hasTransactionalBatch(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if len(p.Records) >= record.OffsetAttributes+2 &&
				binary.BigEndian.Uint16(p.Records[record.OffsetAttributes:])&record.AttrTransactional != 0 {
				return true
			}
		}
	}
	return false
}
