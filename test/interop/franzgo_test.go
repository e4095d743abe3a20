package interop

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// franzGo is franz-go's kgo in this process: an idempotent producer
// (kgo's default) with one batch compression codec.
type franzGo struct {
	codecName string
	codec     kgo.CompressionCodec
}

func (c franzGo) name() string { return "franz-go-" + c.codecName }

func (c franzGo) headers(seq int) []header { return perRecordHeaders(c.name())(seq) }

func (c franzGo) produce(ctx context.Context, _ *testing.T, addr, topic string, recs []outRecord) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(c.codec),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		hs := make([]kgo.RecordHeader, len(r.Headers))
		for j, h := range r.Headers {
			hs[j] = kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)}
		}
		rs[i] = &kgo.Record{Key: []byte(r.Key), Value: []byte(r.Value), Headers: hs}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

func (c franzGo) consume(ctx context.Context, _ *testing.T, addr, topic string) ([]record, error) {
	return kgoRead(ctx, addr, topic, kgo.FetchMaxBytes(1<<20))
}

// TestFranzGo runs the scenario with franz-go producing uncompressed and
// with each codec, all idempotent, on one broker.
func TestFranzGo(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	runScenario(t, b,
		franzGo{"none", kgo.NoCompression()},
		franzGo{"gzip", kgo.GzipCompression()},
		franzGo{"snappy", kgo.SnappyCompression()},
		franzGo{"lz4", kgo.Lz4Compression()},
		franzGo{"zstd", kgo.ZstdCompression()},
	)
}
