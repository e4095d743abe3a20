package perf

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// quotaWindow is the interval the convergence run reports byte rates for.
const quotaWindow = 5 * time.Second

// quotaTopicConfigs bound the disk a full-speed producer fills: 128 MiB
// segments, the oldest deleted beyond 512 MiB and their files removed a
// second later (not Kafka's default minute).
var quotaTopicConfigs = map[string]*string{
	"segment.bytes":        kadm.StringPtr("134217728"),
	"retention.bytes":      kadm.StringPtr("536870912"),
	"file.delete.delay.ms": kadm.StringPtr("1000"),
}

// Client ids of the two producers of TestQuotaConvergence.
const (
	throttledClient = "perf-throttled"
	freeClient      = "perf-free"
)

// TestQuotaConvergence measures how a produce quota converges: one broker
// process, two franz-go producers with different client ids, each writing
// its own single-partition topic as fast as it can (1 KiB records, acks=1)
// for SILKWORM_PERF_QUOTA_SECONDS (default 30). It runs twice: first with no
// quota (the baseline), then with producer_byte_rate =
// SILKWORM_PERF_QUOTA_RATE bytes/s (default 2097152, 2 MiB/s) on the
// client id perf-throttled, set with AlterClientQuotas. For each run it
// prints each producer's acknowledged record bytes per 5 s window and
// overall, the throttle time the broker reported to it, and the broker's
// CPU time.
//
// A measurement, not a test: skipped unless SILKWORM_PERF=1; it asserts
// no rate and fails only if the harness breaks. It honours
// SILKWORM_PERF_SECURITY like TestDataPath.
func TestQuotaConvergence(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	seconds := envInt(t, "SILKWORM_PERF_QUOTA_SECONDS", 30)
	rate := envInt(t, "SILKWORM_PERF_QUOTA_RATE", 2<<20)
	protocol, err := parseSecurity(os.Getenv("SILKWORM_PERF_SECURITY"))
	if err != nil {
		t.Fatal(err)
	}
	// Producers at full speed write GBs a minute: retention checked every
	// second keeps the disk use of each topic near quotaTopicConfigs.
	b := startBroker(t, protocol, "log.retention.check.interval.ms=1000")
	adm, err := kgo.NewClient(kgo.SeedBrokers(b.adminAddr))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer adm.Close()
	ctx := context.Background()
	admin := kadm.NewClient(adm)

	duration := time.Duration(seconds) * time.Second
	var report strings.Builder
	fmt.Fprintf(&report, "Security: %s. Producers: 1 KiB records, acks=1, one single-partition topic each, %v per run. "+
		"Rates are acknowledged record-value bytes per second in MiB/s (2^20 B/s); quota = %d B/s (%.2f MiB/s).\n\n",
		protocol, duration, rate, float64(rate)/(1<<20))
	for _, run := range []struct {
		name  string
		quota bool
	}{{"baseline (no quota)", false}, {fmt.Sprintf("producer_byte_rate=%d on %s", rate, throttledClient), true}} {
		if run.quota {
			setProducerQuota(ctx, t, admin, throttledClient, float64(rate))
		}
		tag := "baseline"
		if run.quota {
			tag = "quota"
		}
		producers := []*rateProducer{
			newRateProducer(ctx, t, b, admin, throttledClient, "quota-"+tag+"-throttled"),
			newRateProducer(ctx, t, b, admin, freeClient, "quota-"+tag+"-free"),
		}
		cpu0 := b.cpu(t)
		start := time.Now()
		var wg sync.WaitGroup
		for _, p := range producers {
			wg.Go(func() { p.run(start, duration) })
		}
		wg.Wait()
		brokerCPU := b.cpu(t) - cpu0
		for _, p := range producers {
			p.close(t)
		}
		writeQuotaTable(&report, run.name, producers, duration, brokerCPU, rate, run.quota)
		for _, p := range producers {
			t.Logf("%s, %s: %.2f MiB/s overall, throttled %d times for %v",
				run.name, p.clientID, p.overall(duration), p.throttles.Load(), time.Duration(p.throttleNanos.Load()))
		}
	}
	// Printed rather than logged so the tables can be pasted as they are.
	fmt.Println(report.String())
}

// envInt is the positive integer in the environment variable key, or def.
func envInt(t *testing.T, key string, def int) int {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive integer", key, s)
	}
	return v
}

// setProducerQuota sets producer_byte_rate for a client id, as
// kafka-configs.sh --alter --add-config producer_byte_rate=... --entity-type
// clients --entity-name id does.
func setProducerQuota(ctx context.Context, t *testing.T, adm *kadm.Client, clientID string, rate float64) {
	t.Helper()
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: []kadm.ClientQuotaEntityComponent{{Type: "client-id", Name: &clientID}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: rate}},
	}})
	if err == nil {
		for _, r := range res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		t.Fatalf("alter client quotas of %s: %v", clientID, err)
	}
}

// rateProducer is one producer of the convergence run. Its counters are
// written by franz-go's callbacks and hooks and read by the test goroutine.
type rateProducer struct {
	clientID string
	cl       *kgo.Client
	value    []byte

	acked         atomic.Int64 // record-value bytes acknowledged
	failed        atomic.Int64 // records that failed (aborted ones at the end included)
	throttles     atomic.Int64 // responses carrying a throttle time
	throttleNanos atomic.Int64 // their throttle times summed
	windows       []int64      // acked bytes at the end of each window (test goroutine)
}

// OnBrokerThrottle counts the throttle times the broker reports
// (kgo.HookBrokerThrottle).
func (p *rateProducer) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	p.throttles.Add(1)
	p.throttleNanos.Add(int64(d))
}

// newRateProducer creates topic and a connected producer with clientID.
func newRateProducer(ctx context.Context, t *testing.T, b *processBroker, adm *kadm.Client, clientID, topic string) *rateProducer {
	t.Helper()
	resp, err := adm.CreateTopic(ctx, 1, 1, quotaTopicConfigs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	p := &rateProducer{clientID: clientID, value: make([]byte, 1024)}
	for i := range p.value {
		p.value[i] = byte('a' + i%26)
	}
	p.cl, err = kgo.NewClient(append(b.clientOpts(),
		kgo.ClientID(clientID),
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(),
		// A small buffer: what is still buffered when the run ends is
		// aborted, not drained at the quota's pace.
		kgo.MaxBufferedRecords(4096),
		kgo.WithHooks(p),
	)...)
	if err != nil {
		t.Fatalf("producer %s: %v", clientID, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.cl.Ping(pctx); err != nil {
		t.Fatalf("producer %s: ping: %v", clientID, err)
	}
	return p
}

// run produces as fast as the client lets it from start for d, recording
// the acknowledged bytes at the end of every quotaWindow.
func (p *rateProducer) run(start time.Time, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := func(r *kgo.Record, err error) {
		if err != nil {
			p.failed.Add(1)
			return
		}
		p.acked.Add(int64(len(r.Value)))
	}
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		// Canceling ends a Produce blocked on a full buffer and fails
		// what is still buffered: the run is over.
		defer cancel()
		for end := start.Add(quotaWindow); !end.After(start.Add(d)); end = end.Add(quotaWindow) {
			<-time.After(time.Until(end)) // the window's end, not a wait for a condition
			p.windows = append(p.windows, p.acked.Load())
		}
	}()
	for ctx.Err() == nil {
		// Produce blocks while the buffer is full, which paces this loop.
		p.cl.Produce(ctx, &kgo.Record{Value: p.value}, done)
	}
	<-sampled
}

// close drops what is still buffered and closes the client.
func (p *rateProducer) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		t.Logf("%s: abort buffered records: %v", p.clientID, err)
	}
	p.cl.Close()
}

// windowRate is the byte rate of window i in MiB/s.
func (p *rateProducer) windowRate(i int) float64 {
	prev := int64(0)
	if i > 0 {
		prev = p.windows[i-1]
	}
	return float64(p.windows[i]-prev) / (1 << 20) / quotaWindow.Seconds()
}

// overall is the byte rate over the whole run in MiB/s.
func (p *rateProducer) overall(d time.Duration) float64 {
	if len(p.windows) == 0 {
		return 0
	}
	return float64(p.windows[len(p.windows)-1]) / (1 << 20) / d.Seconds()
}

func writeQuotaTable(sb *strings.Builder, name string, ps []*rateProducer, d, brokerCPU time.Duration, rate int, quota bool) {
	fmt.Fprintf(sb, "Run: %s. Broker CPU: %.2f s (%.0f %% of one core).\n\n", name, brokerCPU.Seconds(), 100*brokerCPU.Seconds()/d.Seconds())
	sb.WriteString("| client id | quota |")
	n := len(ps[0].windows)
	for i := range n {
		fmt.Fprintf(sb, " %d-%d s |", i*int(quotaWindow.Seconds()), (i+1)*int(quotaWindow.Seconds()))
	}
	sb.WriteString(" overall | after the first window | throttled responses | throttle time |\n|---|---|")
	for range n + 4 {
		sb.WriteString("---:|")
	}
	sb.WriteString("\n")
	for _, p := range ps {
		q := "none"
		if quota && p.clientID == throttledClient {
			q = fmt.Sprintf("%.2f MiB/s", float64(rate)/(1<<20))
		}
		fmt.Fprintf(sb, "| %s | %s |", p.clientID, q)
		for i := range n {
			fmt.Fprintf(sb, " %.2f |", p.windowRate(i))
		}
		later := 0.0
		if n > 1 {
			later = float64(p.windows[n-1]-p.windows[0]) / (1 << 20) / (quotaWindow.Seconds() * float64(n-1))
		}
		fmt.Fprintf(sb, " %.2f | %.2f | %d | %v |\n", p.overall(d), later, p.throttles.Load(),
			time.Duration(p.throttleNanos.Load()).Round(time.Millisecond))
	}
	sb.WriteString("\n")
}
