package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// maxLatencyMicros bounds the latency histograms (1 hour); longer values
// are recorded as this.
const maxLatencyMicros = int64(time.Hour / time.Microsecond)

// stallTimeout ends a consumer that has received nothing for this long
// although records it expects are missing.
const stallTimeout = 30 * time.Second

func newHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, maxLatencyMicros, 3) }

func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	us := min(max(d.Microseconds(), 1), maxLatencyMicros)
	_ = h.RecordValue(us) // within range by construction
}

// Percentiles of a latency histogram, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

func percentiles(h *hdrhistogram.Histogram) *Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return &Percentiles{
		Count: h.TotalCount(),
		Mean:  h.Mean() / 1000,
		P50:   ms(h.ValueAtQuantile(50)),
		P95:   ms(h.ValueAtQuantile(95)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

// ClientResult is what one producer or consumer did in one run.
type ClientResult struct {
	ID            string       `json:"id"`
	Records       int64        `json:"records"`
	Bytes         int64        `json:"bytes"`
	Seconds       float64      `json:"seconds"`
	RecordsPerSec float64      `json:"records_per_sec"`
	MBPerSec      float64      `json:"mb_per_sec"`
	Latency       *Percentiles `json:"latency,omitempty"`

	// Consumers only (consumer-perf-test's columns).
	Partitions         int     `json:"partitions,omitempty"`
	Idle               bool    `json:"idle,omitempty"`
	RebalanceMs        float64 `json:"rebalance_ms,omitempty"`
	FetchMs            float64 `json:"fetch_ms,omitempty"`
	FetchMBPerSec      float64 `json:"fetch_mb_per_sec,omitempty"`
	FetchRecordsPerSec float64 `json:"fetch_records_per_sec,omitempty"`
}

const mb = 1024 * 1024

func (r *ClientResult) finish(elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.RecordsPerSec = float64(r.Records) / r.Seconds
		r.MBPerSec = float64(r.Bytes) / mb / r.Seconds
	}
	fetch := elapsed.Seconds() - r.RebalanceMs/1000
	if r.FetchMs == 0 && fetch > 0 && r.Partitions > 0 {
		r.FetchMs = fetch * 1000
	}
	if r.FetchMs > 0 {
		r.FetchMBPerSec = float64(r.Bytes) / mb / (r.FetchMs / 1000)
		r.FetchRecordsPerSec = float64(r.Records) / (r.FetchMs / 1000)
	}
}

// payloads are the record values, drawn from a few words so compression
// has something to find, like text or JSON events do (random bytes would
// not compress at all, a constant would compress absurdly well).
type payloads struct{ values [][]byte }

var words = strings.Fields(`kafka broker topic partition replica leader follower offset segment index
consumer producer group commit fetch produce record batch header timestamp key value event order
payment user session click view cart checkout shipment invoice account status pending complete`)

func newPayloads(size int, seed uint64) *payloads {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := &payloads{}
	for range 64 {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "%d ", rng.IntN(100000))
			}
		}
		p.values = append(p.values, []byte(b.String()[:size]))
	}
	return p
}

func (p *payloads) value(i int64, stamp bool) []byte {
	v := p.values[i%int64(len(p.values))]
	if !stamp {
		return v
	}
	c := make([]byte, len(v))
	copy(c, v)
	binary.BigEndian.PutUint64(c, uint64(time.Now().UnixNano()))
	return c
}

// producerJob is one producer of a run.
type producerJob struct {
	id        string
	bootstrap string
	topic     string
	spec      *Scenario
	records   int64
	rate      float64 // records/s for this producer; 0 unlimited
	duration  time.Duration
	payloads  *payloads
	stamp     bool // first 8 bytes of each value are the send time (e2e)
	// onAck is called for each acknowledged record (progress, samples);
	// from kgo's goroutines.
	onAck func(bytes int)
}

func producerProps(bootstrap string, spec *Scenario, id string) cli.Props {
	p := cli.Props{
		"bootstrap.servers": bootstrap,
		"acks":              spec.Acks,
		"compression.type":  spec.Compression,
		"client.id":         id,
	}
	maps.Copy(p, spec.ProducerProps)
	return p
}

// produce sends job.records records (or until job.duration passes when it
// is set) and waits for every acknowledgement.
func produce(ctx context.Context, job producerJob) (ClientResult, *hdrhistogram.Histogram, error) {
	res := ClientResult{ID: job.id}
	cl, err := cli.NewClient(ctx, cli.Producer, producerProps(job.bootstrap, job.spec, job.id),
		kgo.DefaultProduceTopic(job.topic))
	if err != nil {
		return res, nil, fmt.Errorf("producer %s: %w", job.id, err)
	}
	defer cl.Close()

	var (
		mu        sync.Mutex // guards hist, acked, ackBytes, firstErr
		hist      = newHistogram()
		acked     int64
		ackBytes  int64
		firstErr  error
		sendCtx   context.Context
		stopSends context.CancelFunc
	)
	sendCtx, stopSends = context.WithCancel(ctx)
	defer stopSends()
	var interval time.Duration
	if job.rate > 0 {
		interval = time.Duration(float64(time.Second) / job.rate)
	}
	start := time.Now()
	for i := int64(0); job.duration > 0 || i < job.records; i++ {
		if sendCtx.Err() != nil {
			break
		}
		sendAt := time.Now()
		if interval > 0 {
			// Paced: latency counts from the intended send time, so a
			// stall is charged to every record it delays.
			due := start.Add(time.Duration(i) * interval)
			if wait := due.Sub(sendAt); wait > time.Millisecond {
				select {
				case <-time.After(wait):
				case <-sendCtx.Done():
				}
			}
			sendAt = due
		}
		if job.duration > 0 && time.Since(start) >= job.duration {
			break
		}
		v := job.payloads.value(i, job.stamp)
		n := len(v)
		cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			now := time.Now()
			mu.Lock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					stopSends()
				}
				mu.Unlock()
				return
			}
			acked++
			ackBytes += int64(n)
			recordLatency(hist, now.Sub(sendAt))
			mu.Unlock()
			if job.onAck != nil {
				job.onAck(n)
			}
		})
	}
	flushErr := cl.Flush(ctx)
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	res.Records, res.Bytes = acked, ackBytes
	res.Latency = percentiles(hist)
	res.finish(elapsed)
	if firstErr != nil {
		return res, hist, fmt.Errorf("producer %s: %w", job.id, firstErr)
	}
	if flushErr != nil {
		return res, hist, fmt.Errorf("producer %s: flush: %w", job.id, flushErr)
	}
	return res, hist, nil
}

// consumerSet is the consumers of one run. In a shared group they split
// the partitions and stop when the group together has read want records;
// separate consumers each read want records from all partitions.
type consumerSet struct {
	bootstrap string
	topic     string
	spec      *Scenario
	group     string // "" for separate consumers
	adm       *kadm.Client
	n         int
	want      int64 // per consumer (separate) or in total (shared)
	e2e       bool  // values carry their send time
	onRecords func(n int)

	total     atomic.Int64 // records read by a shared group
	begin     time.Time
	rebalance time.Duration
	states    []*consumerState
}

type consumerState struct {
	id         string
	cl         *kgo.Client
	mu         sync.Mutex // guards partitions
	partitions int
}

// start creates the consumers and, for a shared group, waits until the
// group has settled (every member joined, every partition assigned): that
// wait is the rebalance time. Call close when done.
func (cs *consumerSet) start(ctx context.Context) error {
	cs.begin = time.Now()
	cs.states = make([]*consumerState, 0, cs.n)
	for i := range cs.n {
		st := &consumerState{id: fmt.Sprintf("consumer-%d", i+1)}
		props := cli.Props{"bootstrap.servers": cs.bootstrap, "client.id": st.id}
		maps.Copy(props, cs.spec.ConsumerProps)
		opts := []kgo.Opt{
			kgo.ConsumeTopics(cs.topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		}
		if cs.group != "" {
			props["group.id"] = cs.group
			props["enable.auto.commit"] = "false"
			change := func(sign int) func(context.Context, *kgo.Client, map[string][]int32) {
				return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
					st.mu.Lock()
					st.partitions += sign * len(m[cs.topic])
					st.mu.Unlock()
				}
			}
			opts = append(opts, kgo.OnPartitionsAssigned(change(1)),
				kgo.OnPartitionsRevoked(change(-1)), kgo.OnPartitionsLost(change(-1)))
		} else {
			st.partitions = cs.spec.Topic.Partitions
		}
		cl, err := cli.NewClient(ctx, cli.Consumer, props, opts...)
		if err != nil {
			cs.close()
			return fmt.Errorf("consumer %s: %w", st.id, err)
		}
		st.cl = cl
		cs.states = append(cs.states, st)
	}
	if cs.group != "" {
		if err := cs.waitSettled(ctx, cs.states); err != nil {
			cs.close()
			return err
		}
		cs.rebalance = time.Since(cs.begin)
	}
	return nil
}

func (cs *consumerSet) close() {
	for _, st := range cs.states {
		st.cl.Close()
	}
	cs.states = nil
}

// consume reads until the records are in, one goroutine per consumer.
func (cs *consumerSet) consume(ctx context.Context) ([]ClientResult, *hdrhistogram.Histogram, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hist := newHistogram()
	var histMu sync.Mutex
	results := make([]ClientResult, len(cs.states))
	errs := make([]error, len(cs.states))
	var wg sync.WaitGroup
	for i, st := range cs.states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = cs.read(ctx, st, cs.begin, cs.rebalance, hist, &histMu, cancel)
		}()
	}
	wg.Wait()
	return results, hist, errors.Join(errs...)
}

// waitSettled polls until the group is Stable with every member in it and
// the members' assignments (seen through the kgo callbacks) cover every
// partition. kgo runs the group protocol in the background, without polls.
func (cs *consumerSet) waitSettled(ctx context.Context, states []*consumerState) error {
	deadline := time.Now().Add(stallTimeout)
	for {
		total := 0
		var mine []int
		for _, st := range states {
			st.mu.Lock()
			total += st.partitions
			mine = append(mine, st.partitions)
			st.mu.Unlock()
		}
		state, members := "", 0
		var theirs []int
		if total == cs.spec.Topic.Partitions {
			dg, err := cs.adm.DescribeGroups(ctx, cs.group)
			if err == nil {
				g := dg[cs.group]
				state, members = g.State, len(g.Members)
				for _, m := range g.Members {
					n := 0
					if a, ok := m.Assigned.AsConsumer(); ok {
						for _, t := range a.Topics {
							n += len(t.Partitions)
						}
					}
					theirs = append(theirs, n)
				}
			}
		}
		// Settled: the group is Stable with every member, and what the
		// members' callbacks saw matches the coordinator's assignment (a
		// member still revoking would otherwise count as idle).
		slices.Sort(mine)
		slices.Sort(theirs)
		if total == cs.spec.Topic.Partitions && state == "Stable" && members == cs.n && slices.Equal(mine, theirs) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer group %s did not settle within %v: %d of %d partitions assigned, %d of %d members, state %q",
				cs.group, stallTimeout, total, cs.spec.Topic.Partitions, members, cs.n, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (cs *consumerSet) read(ctx context.Context, st *consumerState, start time.Time, rebalance time.Duration,
	hist *hdrhistogram.Histogram, histMu *sync.Mutex, done context.CancelFunc) (ClientResult, error) {
	res := ClientResult{ID: st.id, RebalanceMs: float64(rebalance) / float64(time.Millisecond)}
	st.mu.Lock()
	res.Partitions = st.partitions
	st.mu.Unlock()
	lastProgress := time.Now()
	finished := func() bool {
		if cs.group != "" {
			return cs.total.Load() >= cs.want
		}
		return res.Records >= cs.want
	}
	for !finished() && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := st.cl.PollFetches(pctx)
		cancel()
		now := time.Now()
		var n, bytes int64
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return res, fmt.Errorf("%s: fetch: %w", st.id, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			bytes += int64(len(r.Key) + len(r.Value))
			if cs.e2e && len(r.Value) >= 8 {
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))
				histMu.Lock()
				recordLatency(hist, now.Sub(sent))
				histMu.Unlock()
			}
		})
		if n > 0 {
			lastProgress = now
			res.Records += n
			res.Bytes += bytes
			if cs.group != "" {
				cs.total.Add(n)
			}
			if cs.onRecords != nil {
				cs.onRecords(int(n))
			}
		} else if now.Sub(lastProgress) > stallTimeout && !finished() {
			return res, fmt.Errorf("%s: no records for %v with %d of %d read", st.id, stallTimeout, res.Records, cs.want)
		}
	}
	if cs.group != "" && finished() {
		done() // wake the other members of the group
	}
	if res.Partitions == 0 && res.Records == 0 {
		res.Idle = true
	}
	res.finish(time.Since(start))
	return res, nil
}
