package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/storage"
)

// A failed write takes the log dir offline: the produce gets
// KAFKA_STORAGE_ERROR, nothing is acknowledged for it, the records
// acknowledged before stay readable, and the broker reports that it must
// stop (all its log dirs are offline), as Kafka halts such a broker.
func TestDiskFailureStopsBroker(t *testing.T) {
	efs := storage.NewErrorFS(storage.OSFS)
	tb := newTestBrokerWith(t, []Option{WithStorageFS(efs)})
	ctx := testCtx(t)
	tb.createTopic(ctx, "disk", 1, nil)
	tb.produce(ctx, "disk", 0, 5)

	efs.FailWrite(".log", 0, 7) // the next segment write is torn, then fails
	prod, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	err = prod.ProduceSync(ctx, &kgo.Record{Topic: "disk", Partition: 0, Value: []byte("lost")}).FirstErr()
	if !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce after a failed write: %v, want KAFKA_STORAGE_ERROR", err)
	}
	select {
	case <-tb.b.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("broker did not report that every log dir is offline")
	}
	// Nothing acknowledged was lost: reopen on a healthy file system.
	tb.opts = nil
	tb.restart()
	cons, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"disk": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < 5 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 5 acknowledged records", len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for _, v := range got {
		if v == "lost" {
			t.Fatal("the record whose write failed became readable")
		}
	}
}
