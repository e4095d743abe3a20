package reassign

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
)

// TestMeasureThrottledMove reports (it asserts nothing about time) how long
// moving a partition (100 MB, or SILKWORM_REASSIGN_MB) onto a new broker
// takes with no throttle and with --throttle 10 MB/s, and the latency of
// acks=all writes to that partition (1 KiB, 200 a second) while it moves.
// Run with SILKWORM_PERF=1, without -race.
func TestMeasureThrottledMove(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("set SILKWORM_PERF=1 to measure")
	}
	mb := 100
	if v, err := strconv.Atoi(os.Getenv("SILKWORM_REASSIGN_MB")); err == nil && v > 0 {
		mb = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(mb)*300*time.Millisecond)
	defer cancel()
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := strings.Join(c.Addrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	value := make([]byte, 100<<10)
	chacha := rand.NewChaCha8([32]byte{1})
	_, _ = chacha.Read(value)
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &out)
		return out.String(), err
	}
	for _, tc := range []struct {
		topic    string
		throttle []string
	}{{"unthrottled", nil}, {"throttled", []string{"--throttle", "10000000"}}} {
		createTopic(ctx, t, cl, tc.topic, []int32{1, 2})
		for range mb * 10 { // 100 KiB records
			cl.Produce(ctx, &kgo.Record{Topic: tc.topic, Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Error(err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		plan := filepath.Join(t.TempDir(), "plan.json")
		if err := os.WriteFile(plan, []byte(fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[1,3]}]}`, tc.topic)), 0o644); err != nil {
			t.Fatal(err)
		}
		// acks=all writes to the moving partition while it moves.
		stopWrites := make(chan struct{})
		var (
			latMu sync.Mutex
			lats  []time.Duration
		)
		writesDone := make(chan struct{})
		go func() {
			defer close(writesDone)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			small := make([]byte, 1024)
			for {
				select {
				case <-stopWrites:
					return
				case <-tick.C:
				}
				sent := time.Now()
				cl.Produce(ctx, &kgo.Record{Topic: tc.topic, Value: small}, func(_ *kgo.Record, err error) {
					if err == nil {
						latMu.Lock()
						lats = append(lats, time.Since(sent))
						latMu.Unlock()
					}
				})
			}
		}()
		start := time.Now()
		if out, err := run(append([]string{"--execute", "--reassignment-json-file", plan}, tc.throttle...)...); err != nil {
			t.Fatalf("execute: %v\n%s", err, out)
		}
		for {
			out, err := run("--verify", "--reassignment-json-file", plan)
			if err == nil && strings.Contains(out, "is completed.") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: not completed: %s", tc.topic, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(start)
		close(stopWrites)
		<-writesDone
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		latMu.Lock()
		slices.Sort(lats)
		pct := func(q float64) time.Duration {
			if len(lats) == 0 {
				return 0
			}
			return lats[min(len(lats)-1, int(q*float64(len(lats))))]
		}
		t.Logf("%s: moved %d MB to a new replica in %v; acks=all produce latency during the move: p50 %v, p99 %v, max %v (%d writes)",
			tc.topic, mb, took.Round(10*time.Millisecond), pct(0.5).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond),
			pct(1).Round(10*time.Microsecond), len(lats))
		latMu.Unlock()
	}
}
