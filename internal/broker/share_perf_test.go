package broker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSharePerf measures share group consumption on one broker (run with
// SILKWORM_PERF=1; it asserts nothing about speed): records/s for 1, 4
// and 16 share consumers draining 4 partitions, and the p99 delivery
// latency (produce to poll) while a producer writes 2,000 records/s.
func TestSharePerf(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") == "" {
		t.Skip("set SILKWORM_PERF=1 to measure")
	}
	for _, consumers := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("consumers=%d", consumers), func(t *testing.T) {
			tb := newTestBroker(t, "offsets.topic.num.partitions=1", "share.coordinator.state.topic.num.partitions=1")
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			tb.createTopic(ctx, "q", 4, nil)
			const total = 40000
			var wg sync.WaitGroup
			for i := 0; i < total; i++ {
				wg.Add(1)
				tb.cl.Produce(ctx, &kgo.Record{Topic: "q", Partition: int32(i % 4), Value: make([]byte, 100)}, func(_ *kgo.Record, err error) {
					if err != nil {
						t.Errorf("produce: %v", err)
					}
					wg.Done()
				})
			}
			wg.Wait()
			setGroupConfig(t, ctx, tb.cl, "g", "share.auto.offset.reset", "earliest")
			var (
				got     atomic.Int64
				latMu   sync.Mutex
				lats    []time.Duration
				measure atomic.Bool
				stop    = make(chan struct{})
				cwg     sync.WaitGroup
			)
			start := time.Now()
			var drained time.Duration
			for i := 0; i < consumers; i++ {
				cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ShareGroup("g"), kgo.ConsumeTopics("q"), kgo.FetchMaxWait(100*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				cwg.Add(1)
				go func() {
					defer cwg.Done()
					defer cl.Close()
					for {
						select {
						case <-stop:
							return
						default:
						}
						pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
						fs := cl.PollFetches(pctx)
						pcancel()
						now := time.Now()
						fs.EachRecord(func(r *kgo.Record) {
							r.Ack(kgo.AckAccept)
							got.Add(1)
							if measure.Load() && r.Key != nil {
								latMu.Lock()
								lats = append(lats, now.Sub(r.Timestamp))
								latMu.Unlock()
							}
						})
					}
				}()
			}
			for got.Load() < total && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			drained = time.Since(start)
			// Latency: a steady producer, 2,000 records/s for 2 s.
			measure.Store(true)
			tick := time.NewTicker(time.Millisecond)
			for i := 0; i < 4000; i++ {
				<-tick.C
				if i%2 == 0 {
					tb.cl.Produce(ctx, &kgo.Record{Topic: "q", Partition: int32(i / 2 % 4), Key: []byte("k"), Value: make([]byte, 100)}, nil)
				}
			}
			tick.Stop()
			for got.Load() < total+2000 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			close(stop)
			cwg.Wait()
			slices.Sort(lats)
			p99 := time.Duration(0)
			if len(lats) > 0 {
				p99 = lats[len(lats)*99/100]
			}
			t.Logf("%d consumers, 4 partitions: %.0f records/s draining %d records; p99 delivery latency %v (p50 %v) at 2,000 records/s",
				consumers, float64(total)/drained.Seconds(), total, p99, lats[len(lats)/2])
		})
	}
}
