package embed

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Start-up: NewCluster until every broker answers (no seed topics); Close
// is not timed.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(itoa(n)+"brokers", func(b *testing.B) {
			for range b.N {
				c, err := NewCluster(Brokers(n), Dir(b.TempDir()))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}

// A franz-go round trip: one record produced with acks=all and fetched
// back by a consumer already waiting on the partition.
func BenchmarkRoundTrip(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(itoa(n)+"brokers", func(b *testing.B) {
			c, err := NewCluster(Brokers(n), Dir(b.TempDir()), SeedTopics(1, "rt"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("rt"),
				kgo.RequiredAcks(kgo.AllISRAcks()))
			if err != nil {
				b.Fatal(err)
			}
			defer prod.Close()
			cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("rt"))
			if err != nil {
				b.Fatal(err)
			}
			defer cons.Close()
			b.ResetTimer()
			for range b.N {
				if err := prod.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
					b.Fatal(err)
				}
				for got := 0; got == 0; {
					fs := cons.PollFetches(ctx)
					if ctx.Err() != nil {
						b.Fatal(ctx.Err())
					}
					got = fs.NumRecords()
				}
			}
		})
	}
}
