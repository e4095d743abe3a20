package reassign

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/embed"
)

// TestMeasureThrottledMove reports (it asserts nothing about time) how long
// moving a ~100 MB partition onto a new broker takes with no throttle and
// with --throttle 10 MB/s. Run with SILKWORM_PERF=1, without -race.
func TestMeasureThrottledMove(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("set SILKWORM_PERF=1 to measure")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
		for range 1000 { // 100 MB
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
		t.Logf("%s: moved 100 MB to a new replica in %v", tc.topic, time.Since(start).Round(10*time.Millisecond))
	}
}
