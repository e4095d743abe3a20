package broker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// TestFidelityProduceRecordErrorsNameEachKeylessRecord: Kafka's Produce v8+
// answers a batch with keyless records to a compacted topic with
// INVALID_RECORD, one record error per keyless record (its batch index
// and LogValidator.validateKey's message) and processRecordErrors' summary
// as the partition's error message (KIP-467). Nothing is appended.
func TestFidelityProduceRecordErrorsNameEachKeylessRecord(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "compacted", 1, map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")})

	// Records 0, 2, 3 and 5 have no key.
	var recs []record.Record
	for i, key := range []string{"", "k1", "", "", "k4", ""} {
		r := record.Record{Value: []byte(fmt.Sprint("v", i))}
		if key != "" {
			r.Key = []byte(key)
		}
		recs = append(recs, r)
	}
	for _, c := range []record.Compression{record.CompressionNone, record.CompressionZstd} {
		batch := record.BuildBatch(record.BuildOptions{Compression: c, FirstTimestamp: time.Now().UnixMilli()}, recs)
		sp := produceRaw(t, tb, 9, "compacted", batch)
		if sp.ErrorCode != kerr.InvalidRecord.Code || sp.BaseOffset != -1 {
			t.Fatalf("%s: code %d, base offset %d; want INVALID_RECORD, -1", c, sp.ErrorCode, sp.BaseOffset)
		}
		msg := "Compacted topic cannot accept message without key in topic partition compacted-0."
		var got []string
		for _, re := range sp.ErrorRecords {
			if re.ErrorMessage == nil || *re.ErrorMessage != msg {
				t.Errorf("%s: record %d: message %v, want %q", c, re.RelativeOffset, re.ErrorMessage, msg)
			}
			got = append(got, fmt.Sprint(re.RelativeOffset))
		}
		if strings.Join(got, ",") != "0,2,3,5" {
			t.Errorf("%s: record errors at batch indexes %v, want 0,2,3,5", c, got)
		}
		var shown []string
		for _, i := range []int{0, 2, 3} {
			shown = append(shown, fmt.Sprintf("RecordError(batchIndex=%d, message='%s')", i, msg))
		}
		wantSummary := "One or more records have been rejected due to 4 record errors in total, and only showing the first three errors at most: [" +
			strings.Join(shown, ", ") + "]"
		if sp.ErrorMessage == nil || *sp.ErrorMessage != wantSummary {
			t.Errorf("%s: error message %v,\nwant %q", c, sp.ErrorMessage, wantSummary)
		}
	}

	// The whole batch was refused: a keyed batch lands at offset 0.
	ok := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()},
		[]record.Record{{Key: []byte("k"), Value: []byte("v")}})
	if sp := produceRaw(t, tb, 9, "compacted", ok); sp.ErrorCode != 0 || sp.BaseOffset != 0 || len(sp.ErrorRecords) != 0 {
		t.Fatalf("keyed batch: code %d, base offset %d, %d record errors; want success at 0", sp.ErrorCode, sp.BaseOffset, len(sp.ErrorRecords))
	}
}

// produceRaw sends one batch to partition 0 of topic with acks=1 at the
// given Produce version and returns the partition's answer.
func produceRaw(t *testing.T, tb *testBroker, version int16, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce response: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}
