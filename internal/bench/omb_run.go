package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// OMBResult is OMB's TestResult: what `bin/benchmark` writes as JSON and
// `bin/create_charts.py` reads. The lists hold one value per reporting
// interval (OMB's is 10 s); latencies are in milliseconds except the
// publish delay (how late a send was against the rate's schedule), in
// microseconds as OMB has it. Quantile maps are keyed by percentile.
type OMBResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg      []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct    []float64 `json:"publishLatency50pct"`
	PublishLatency75pct    []float64 `json:"publishLatency75pct"`
	PublishLatency95pct    []float64 `json:"publishLatency95pct"`
	PublishLatency99pct    []float64 `json:"publishLatency99pct"`
	PublishLatency999pct   []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct  []float64 `json:"publishLatency9999pct"`
	PublishLatency99999pct []float64 `json:"publishLatency99999pct"`
	PublishLatencyMax      []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg      []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct    []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct    []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct    []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct    []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct   []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct  []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatency99999pct []int64   `json:"publishDelayLatency99999pct"`
	PublishDelayLatencyMax      []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg      float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct    float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct    float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct    float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct    float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct   float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct  float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatency99999pct float64 `json:"aggregatedPublishLatency99999pct"`
	AggregatedPublishLatencyMax      float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg      float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct    int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct    int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct    int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct    int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct   int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct  int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatency99999pct int64   `json:"aggregatedPublishDelayLatency99999pct"`
	AggregatedPublishDelayLatencyMax      int64   `json:"aggregatedPublishDelayLatencyMax"`

	AggregatedPublishLatencyQuantiles      map[string]float64 `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles map[string]int64   `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg      []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct    []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct    []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct    []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct    []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct   []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct  []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatency99999pct []float64 `json:"endToEndLatency99999pct"`
	EndToEndLatencyMax      []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles map[string]float64 `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg      float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct    float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct    float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct    float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct    float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct   float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct  float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatency99999pct float64 `json:"aggregatedEndToEndLatency99999pct"`
	AggregatedEndToEndLatencyMax      float64 `json:"aggregatedEndToEndLatencyMax"`

	// Run is what this run did beyond OMB's fields; not in the JSON.
	Run OMBRunInfo `json:"-"`
}

// OMBRunInfo describes a finished OMB run: counts over the measured phase
// (warm-up excluded), where it ran, and what was not applied.
type OMBRunInfo struct {
	Cluster         string
	Sent            int64 // messages acknowledged in the measured phase
	Received        int64 // messages consumed in the measured phase
	MeasuredSeconds float64
	TargetRate      float64 // producerRate (0: searched)
	FinalRate       float64 // the rate in force at the end
	PeakBacklog     int64
	Notes           []string
}

// OMBOptions configures RunOMB. Duration, Warmup and Interval override
// the workload's (for short runs); zero keeps them.
type OMBOptions struct {
	Workload  *OMBWorkload
	Driver    *OMBDriver // nil: DefaultOMBDriver
	Bootstrap string     // "" starts an embedded cluster
	Embedded  EmbeddedConfig
	Duration  time.Duration
	Warmup    time.Duration
	// Interval is the reporting period: one value per list entry
	// (default 10 s, OMB's).
	Interval time.Duration
	// Log gets OMB's per-interval line; nil is silent.
	Log io.Writer
}

// ombStats are the counters and histograms producers and consumers
// update; safe for concurrent use.
type ombStats struct {
	mu                                    sync.Mutex
	sent, sentBytes, errs, recv, recvByte int64
	pub, delay, e2e                       *hdrhistogram.Histogram // this period
	cumPub, cumDelay, cumE2E              *hdrhistogram.Histogram // since the last reset
	totalSent, totalRecv                  atomic.Int64            // whole run, for the backlog
	measuredSent, measuredRecv            int64
}

func newOMBStats() *ombStats {
	return &ombStats{pub: newHistogram(), delay: newHistogram(), e2e: newHistogram(),
		cumPub: newHistogram(), cumDelay: newHistogram(), cumE2E: newHistogram()}
}

func (s *ombStats) published(n int, lat, delay time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		return
	}
	s.sent++
	s.measuredSent++
	s.sentBytes += int64(n)
	s.totalSent.Add(1)
	recordLatency(s.pub, lat)
	recordLatency(s.cumPub, lat)
	recordLatency(s.delay, delay)
	recordLatency(s.cumDelay, delay)
}

func (s *ombStats) received(n int, e2e time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recv++
	s.measuredRecv++
	s.recvByte += int64(n)
	s.totalRecv.Add(1)
	if ok {
		recordLatency(s.e2e, e2e)
		recordLatency(s.cumE2E, e2e)
	}
}

// period takes the counters and histograms of the period and starts the
// next.
type ombPeriod struct {
	sent, errs, recv int64
	pub, delay, e2e  *hdrhistogram.Histogram
}

func (s *ombStats) period() ombPeriod {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := ombPeriod{sent: s.sent, errs: s.errs, recv: s.recv, pub: s.pub, delay: s.delay, e2e: s.e2e}
	s.sent, s.errs, s.recv, s.sentBytes, s.recvByte = 0, 0, 0, 0, 0
	s.pub, s.delay, s.e2e = newHistogram(), newHistogram(), newHistogram()
	return p
}

// reset starts the measured phase: cumulative histograms and measured
// counts start over (the backlog totals do not).
func (s *ombStats) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cumPub, s.cumDelay, s.cumE2E = newHistogram(), newHistogram(), newHistogram()
	s.measuredSent, s.measuredRecv = 0, 0
}

// ombRun is one RunOMB in progress.
type ombRun struct {
	opts     OMBOptions
	w        *OMBWorkload
	d        *OMBDriver
	stats    *ombStats
	rate     atomic.Uint64 // float64 bits: messages/s over all producers; 0 unlimited
	payloads [][]byte
	consumer []*kgo.Client
	subs     int // subscriptions per topic
}

func (r *ombRun) setRate(v float64) { r.rate.Store(math.Float64bits(v)) }
func (r *ombRun) getRate() float64  { return math.Float64frombits(r.rate.Load()) }

// backlog is what the subscriptions have yet to read: every subscription
// reads every message.
func (r *ombRun) backlog() int64 {
	return max(0, int64(r.subs)*r.stats.totalSent.Load()-r.stats.totalRecv.Load())
}

// RunOMB runs an OMB workload: it creates the topics, starts the
// consumers (one group per subscription) and producers, publishes at
// producerRate (or searches for the sustainable rate when it is 0), runs
// the warm-up and then the test, building and draining the backlog first
// in backlog mode, and returns OMB's result. Topics are deleted after.
func RunOMB(ctx context.Context, opts OMBOptions) (*OMBResult, error) {
	w := opts.Workload
	if w == nil {
		return nil, errors.New("omb: no workload")
	}
	d := opts.Driver
	if d == nil {
		d = DefaultOMBDriver()
	}
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Second
	}
	duration, warmup := w.TestDuration(), w.WarmupDuration()
	if opts.Duration > 0 {
		duration = opts.Duration
	}
	if opts.Warmup > 0 {
		warmup = opts.Warmup
	}
	r := &ombRun{opts: opts, w: w, d: d, stats: newOMBStats(), subs: w.SubscriptionsPerTopic}
	res := newOMBResult(w, d)
	info := &res.Run
	info.TargetRate = w.ProducerRate
	if len(w.Unknown) > 0 {
		info.Notes = append(info.Notes, "workload fields not applied: "+strings.Join(w.Unknown, ", "))
	}
	var err error
	r.payloads, err = ombPayloads(w)
	if err != nil {
		return nil, err
	}
	if w.PayloadFile != "" && !w.UseRandomizedPayloads {
		if _, serr := os.Stat(resolvePayload(w)); serr != nil {
			info.Notes = append(info.Notes, fmt.Sprintf("payloadFile %s not found: text payloads of %d bytes generated", w.PayloadFile, w.MessageSize))
		}
	}

	var c Cluster
	if opts.Bootstrap != "" {
		rc, err := ConnectRemote(ctx, opts.Bootstrap)
		if err != nil {
			return nil, err
		}
		c = rc
		info.Cluster = fmt.Sprintf("remote %s (%d brokers)", opts.Bootstrap, rc.Brokers())
	} else {
		cfg := opts.Embedded
		if cfg.StartTimeout == 0 {
			cfg.StartTimeout = DefaultEmbeddedConfig().StartTimeout
		}
		cfg.Brokers = max(1, d.ReplicationFactor)
		if cfg.Brokers > MaxEmbeddedBrokers {
			return nil, fmt.Errorf("omb: replicationFactor %d needs more brokers than the embedded cluster runs (%d); use --bootstrap-server", d.ReplicationFactor, MaxEmbeddedBrokers)
		}
		ec, err := StartEmbedded(ctx, cfg)
		if err != nil {
			return nil, err
		}
		c = ec
		info.Cluster = fmt.Sprintf("embedded silkworm (%d brokers)", cfg.Brokers)
	}
	defer c.Close()

	admCl, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": c.Bootstrap()})
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(admCl)
	defer adm.Close()
	topics := make([]string, w.Topics)
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, w.Name)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	for i := range topics {
		topics[i] = fmt.Sprintf("omb-%s-%04d-%06x", clean, i, rand.Uint32()&0xffffff)
		spec := TopicSpec{Partitions: w.PartitionsPerTopic, ReplicationFactor: d.ReplicationFactor, Configs: d.topicConfigs()}
		if err := createTopic(ctx, admCl, topics[i], spec); err != nil {
			return nil, fmt.Errorf("omb: %w", err)
		}
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(dctx, topics...)
	}()

	prodProps, ign := d.clientProps(cli.Producer)
	consProps, ign2 := d.clientProps(cli.Consumer)
	if ign = append(ign, ign2...); len(ign) > 0 {
		info.Notes = append(info.Notes, "driver settings the Go client has no equivalent for, not applied: "+strings.Join(ign, ", "))
	}
	if _, ok := consProps["auto.offset.reset"]; !ok {
		consProps["auto.offset.reset"] = "earliest"
	}

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	fail := func(err error) {
		select {
		case errc <- err:
		default:
		}
		stopRun()
	}
	defer func() {
		stopRun()
		wg.Wait()
		for _, cl := range r.consumer {
			cl.Close()
		}
	}()

	// Consumers first, one group per subscription, settled before any
	// message is sent.
	if err := r.startConsumers(runCtx, c.Bootstrap(), consProps, topics, adm, &wg, fail); err != nil {
		return nil, err
	}
	if w.ProducerRate > 0 {
		r.setRate(w.ProducerRate)
	} else {
		r.setRate(10000)
		wg.Add(1)
		go func() { defer wg.Done(); r.controlRate(runCtx, min(3*time.Second, opts.Interval)) }()
	}
	nProd := w.Topics * w.ProducersPerTopic
	for ti, t := range topics {
		for p := range w.ProducersPerTopic {
			props := prodProps.Clone()
			props["bootstrap.servers"] = c.Bootstrap()
			props["client.id"] = fmt.Sprintf("omb-producer-%d-%d", ti, p)
			cl, err := cli.NewClient(runCtx, cli.Producer, props, kgo.DefaultProduceTopic(t))
			if err != nil {
				return nil, fmt.Errorf("omb producer: %w", err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer cl.Close()
				if err := r.produce(runCtx, cl, nProd, ti*w.ProducersPerTopic+p); err != nil {
					fail(err)
				}
			}()
		}
	}

	// Warm-up: reported, then thrown away, as OMB does.
	if warmup > 0 {
		r.logf("warm-up %v", warmup)
		if err := r.collect(runCtx, warmup, nil, nil); err != nil {
			return nil, r.firstErr(errc, err)
		}
	}
	var draining atomic.Bool
	if w.ConsumerBacklogSizeGB > 0 {
		draining.Store(true)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.buildAndDrain(runCtx, duration); err != nil {
				fail(err)
				return
			}
			draining.Store(false)
		}()
	}
	r.stats.reset()
	start := time.Now()
	r.logf("test %v", duration)
	err = r.collect(runCtx, duration, res, &draining)
	info.MeasuredSeconds = time.Since(start).Seconds()
	if err != nil {
		return nil, r.firstErr(errc, err)
	}
	r.stats.mu.Lock()
	info.Sent, info.Received = r.stats.measuredSent, r.stats.measuredRecv
	// Copies: producers and consumers still record until the run stops.
	cumPub, cumDelay, cumE2E := r.stats.cumPub.Clone(), r.stats.cumDelay.Clone(), r.stats.cumE2E.Clone()
	r.stats.mu.Unlock()
	info.FinalRate = r.getRate()
	for _, b := range res.Backlog {
		info.PeakBacklog = max(info.PeakBacklog, b)
	}
	res.aggregate(cumPub, cumDelay, cumE2E)
	select {
	case err := <-errc:
		return res, err
	default:
	}
	return res, nil
}

func (r *ombRun) firstErr(errc chan error, err error) error {
	select {
	case e := <-errc:
		return e
	default:
		return err
	}
}

func (r *ombRun) logf(format string, args ...any) {
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, "omb: "+format+"\n", args...)
	}
}

func resolvePayload(w *OMBWorkload) string {
	if filepath.IsAbs(w.PayloadFile) || w.Dir == "" {
		return w.PayloadFile
	}
	if _, err := os.Stat(w.PayloadFile); err == nil {
		return w.PayloadFile
	}
	return filepath.Join(w.Dir, w.PayloadFile)
}

// ombPayloads are the message values: OMB's randomized pool (random bytes
// then zeros), the payload file, or this package's text payloads when the
// file is not there.
func ombPayloads(w *OMBWorkload) ([][]byte, error) {
	if w.UseRandomizedPayloads {
		n := max(w.RandomizedPayloadPoolSize, 1)
		rng := rand.New(rand.NewPCG(uint64(n), 11))
		out := make([][]byte, n)
		random := int(float64(w.MessageSize) * w.RandomBytesRatio)
		for i := range out {
			b := make([]byte, w.MessageSize)
			for j := range random {
				b[j] = byte(rng.Uint32())
			}
			out[i] = b
		}
		return out, nil
	}
	if w.PayloadFile != "" {
		if data, err := os.ReadFile(resolvePayload(w)); err == nil {
			if len(data) != w.MessageSize {
				return nil, fmt.Errorf("omb: payload file %s has %d bytes, messageSize is %d", w.PayloadFile, len(data), w.MessageSize)
			}
			return [][]byte{data}, nil
		}
	}
	return newPayloads(w.MessageSize, 3).values, nil
}

// startConsumers creates consumerPerSubscription group members per
// subscription and topic and waits until every group is Stable with all
// its members.
func (r *ombRun) startConsumers(ctx context.Context, bootstrap string, props cli.Props, topics []string, adm *kadm.Client, wg *sync.WaitGroup, fail func(error)) error {
	w := r.w
	want := map[string]int{}
	for ti, t := range topics {
		for s := range w.SubscriptionsPerTopic {
			group := fmt.Sprintf("sub-%03d-%s", s, t)
			want[group] = w.ConsumerPerSubscription
			for ci := range w.ConsumerPerSubscription {
				p := props.Clone()
				p["bootstrap.servers"] = bootstrap
				p["group.id"] = group
				p["client.id"] = fmt.Sprintf("omb-consumer-%d-%d-%d", ti, s, ci)
				cl, err := cli.NewClient(ctx, cli.Consumer, p, kgo.ConsumeTopics(t))
				if err != nil {
					return fmt.Errorf("omb consumer: %w", err)
				}
				r.consumer = append(r.consumer, cl)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := r.consume(ctx, cl); err != nil {
						fail(err)
					}
				}()
			}
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(want) > 0 {
		var groups []string
		for g := range want {
			groups = append(groups, g)
		}
		dg, err := adm.DescribeGroups(ctx, groups...)
		if err == nil {
			for g, n := range want {
				if d, ok := dg[g]; ok && d.State == "Stable" && len(d.Members) == n {
					delete(want, g)
				}
			}
		}
		if len(want) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("omb: %d consumer groups did not settle within 60s", len(want))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func (r *ombRun) consume(ctx context.Context, cl *kgo.Client) error {
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return fmt.Errorf("omb consumer: %w", ferr)
		}
		now := time.Now()
		fs.EachRecord(func(rec *kgo.Record) {
			sent, ok := time.Time{}, false
			if len(rec.Value) >= 8 {
				sent, ok = time.Unix(0, int64(binary.BigEndian.Uint64(rec.Value))), true
			} else if !rec.Timestamp.IsZero() {
				sent, ok = rec.Timestamp, true
			}
			r.stats.received(len(rec.Value), now.Sub(sent), ok)
		})
	}
	return nil
}

// produce publishes on the producer's share of the rate, paced against a
// schedule that does not reset (a stall makes every later send late,
// which the publish delay shows), until ctx ends.
func (r *ombRun) produce(ctx context.Context, cl *kgo.Client, nProd, idx int) error {
	w := r.w
	rng := rand.New(rand.NewPCG(uint64(idx), uint64(time.Now().UnixNano())))
	next := time.Now()
	var seq int64
	for ctx.Err() == nil {
		if rate := r.getRate(); rate > 0 {
			next = next.Add(time.Duration(float64(time.Second) * float64(nProd) / rate))
			if wait := time.Until(next); wait > time.Millisecond {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
			}
		} else {
			next = time.Now()
		}
		intended := next
		seq++
		src := r.payloads[int(seq)%len(r.payloads)]
		v := make([]byte, len(src))
		copy(v, src)
		rec := &kgo.Record{Value: v}
		switch w.KeyDistributor {
		case OMBKeyRoundRobin:
			rec.Key = []byte(strconv.FormatInt(seq%10000, 10))
		case OMBRandomNano:
			rec.Key = []byte(strconv.FormatInt(rng.Int64(), 10))
		}
		sendAt := time.Now()
		if len(v) >= 8 {
			binary.BigEndian.PutUint64(v, uint64(sendAt.UnixNano()))
		}
		delay := max(sendAt.Sub(intended), 0)
		n := len(v)
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil) {
				return
			}
			r.stats.published(n, time.Since(sendAt), delay, err)
		})
	}
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cl.Flush(fctx)
	return nil
}

// controlRate searches the sustainable rate when producerRate is 0: each
// period it lowers the rate to what was received (or published) when the
// consumers (or producers) fell behind by more than 1000 messages, and
// otherwise raises it by a ramping factor that doubles after each rise
// (up to 1) and halves after each cut (down to 0.01).
func (r *ombRun) controlRate(ctx context.Context, period time.Duration) {
	const backlogLimit = 1000
	ramp := 1.0
	lastSent, lastRecv := r.stats.totalSent.Load(), r.stats.totalRecv.Load()
	last := time.Now()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		secs := now.Sub(last).Seconds()
		sent, recv := r.stats.totalSent.Load(), r.stats.totalRecv.Load()
		rate := r.getRate()
		expected := rate * secs
		published, received := float64(sent-lastSent), float64(recv-lastRecv)
		lastSent, lastRecv, last = sent, recv, now
		switch {
		case r.subs > 0 && r.backlog() > backlogLimit:
			ramp = max(0.01, ramp/2)
			rate = max(1, min(received/secs, (expected-float64(r.backlog()))/secs))
		case expected-published > backlogLimit:
			ramp = max(0.01, ramp/2)
			rate = max(1, min(published/secs, (2*published-expected)/secs))
		default:
			ramp = min(1, ramp*2)
			rate += rate * ramp
		}
		r.setRate(rate)
	}
}

// buildAndDrain is OMB's backlog mode: consumers pause until
// consumerBacklogSizeGB is waiting, resume, and once the backlog is down
// to what backlogDrainRatio leaves (at least 1000 messages) the test runs
// for its duration more.
func (r *ombRun) buildAndDrain(ctx context.Context, duration time.Duration) error {
	w := r.w
	for _, cl := range r.consumer {
		cl.PauseFetchTopics(cl.GetConsumeTopics()...)
	}
	want := int64(w.ConsumerBacklogSizeGB * (1 << 30))
	r.logf("building a backlog of %d bytes", want)
	if err := r.pollUntil(ctx, time.Second/10, func() bool { return r.backlog()*int64(w.MessageSize) >= want }); err != nil {
		return err
	}
	for _, cl := range r.consumer {
		cl.ResumeFetchTopics(cl.GetConsumeTopics()...)
	}
	capacity := want / int64(w.MessageSize)
	empty := max(1000, int64((1-w.BacklogDrainRatio)*float64(capacity)))
	r.logf("draining the backlog")
	if err := r.pollUntil(ctx, time.Second/10, func() bool { return r.backlog() <= empty }); err != nil {
		return err
	}
	r.logf("backlog drained; %v more", duration)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(duration):
	}
	return nil
}

func (r *ombRun) pollUntil(ctx context.Context, every time.Duration, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
	return nil
}

// collect reports every interval until duration has passed and, in
// backlog mode, the backlog has drained; res (nil in the warm-up) gets one
// entry per interval.
func (r *ombRun) collect(ctx context.Context, duration time.Duration, res *OMBResult, draining *atomic.Bool) error {
	start := time.Now()
	end := start.Add(duration)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	last := start
	for {
		wait := t.C
		var final <-chan time.Time
		if d := time.Until(end); d < r.opts.Interval && (draining == nil || !draining.Load()) {
			final = time.After(max(d, 0))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait:
		case <-final:
		}
		now := time.Now()
		p := r.stats.period()
		secs := now.Sub(last).Seconds()
		last = now
		backlog := r.backlog()
		r.logf("pub rate %.1f msg/s | pub err %.1f/s | cons rate %.1f msg/s | backlog %.1f K | pub latency (ms) avg %.2f p50 %.2f p99 %.2f p99.9 %.2f max %.2f",
			float64(p.sent)/secs, float64(p.errs)/secs, float64(p.recv)/secs, float64(backlog)/1000,
			p.pub.Mean()/1000, ms(p.pub.ValueAtPercentile(50)), ms(p.pub.ValueAtPercentile(99)), ms(p.pub.ValueAtPercentile(99.9)), ms(p.pub.Max()))
		if res != nil {
			res.addPeriod(p, secs, backlog)
		}
		if !now.Before(end) && (draining == nil || !draining.Load()) {
			return nil
		}
	}
}

func ms(us int64) float64 { return float64(us) / 1000 }

func newOMBResult(w *OMBWorkload, d *OMBDriver) *OMBResult {
	return &OMBResult{
		Workload: w.Name, Driver: d.Name, MessageSize: int64(w.MessageSize), Topics: w.Topics,
		Partitions: w.PartitionsPerTopic, ProducersPerTopic: w.ProducersPerTopic, ConsumersPerTopic: w.ConsumerPerSubscription,
		PublishRate: []float64{}, PublishErrorRate: []float64{}, ConsumeRate: []float64{}, Backlog: []int64{},
		PublishLatencyAvg: []float64{}, PublishLatency50pct: []float64{}, PublishLatency75pct: []float64{},
		PublishLatency95pct: []float64{}, PublishLatency99pct: []float64{}, PublishLatency999pct: []float64{},
		PublishLatency9999pct: []float64{}, PublishLatency99999pct: []float64{}, PublishLatencyMax: []float64{},
		PublishDelayLatencyAvg: []float64{}, PublishDelayLatency50pct: []int64{}, PublishDelayLatency75pct: []int64{},
		PublishDelayLatency95pct: []int64{}, PublishDelayLatency99pct: []int64{}, PublishDelayLatency999pct: []int64{},
		PublishDelayLatency9999pct: []int64{}, PublishDelayLatency99999pct: []int64{}, PublishDelayLatencyMax: []int64{},
		EndToEndLatencyAvg: []float64{}, EndToEndLatency50pct: []float64{}, EndToEndLatency75pct: []float64{},
		EndToEndLatency95pct: []float64{}, EndToEndLatency99pct: []float64{}, EndToEndLatency999pct: []float64{},
		EndToEndLatency9999pct: []float64{}, EndToEndLatency99999pct: []float64{}, EndToEndLatencyMax: []float64{},
		AggregatedPublishLatencyQuantiles:      map[string]float64{},
		AggregatedPublishDelayLatencyQuantiles: map[string]int64{},
		AggregatedEndToEndLatencyQuantiles:     map[string]float64{},
	}
}

func (res *OMBResult) addPeriod(p ombPeriod, secs float64, backlog int64) {
	res.PublishRate = append(res.PublishRate, float64(p.sent)/secs)
	res.PublishErrorRate = append(res.PublishErrorRate, float64(p.errs)/secs)
	res.ConsumeRate = append(res.ConsumeRate, float64(p.recv)/secs)
	res.Backlog = append(res.Backlog, backlog)
	pct := func(h *hdrhistogram.Histogram, q float64) float64 { return ms(h.ValueAtPercentile(q)) }
	res.PublishLatencyAvg = append(res.PublishLatencyAvg, p.pub.Mean()/1000)
	res.PublishLatency50pct = append(res.PublishLatency50pct, pct(p.pub, 50))
	res.PublishLatency75pct = append(res.PublishLatency75pct, pct(p.pub, 75))
	res.PublishLatency95pct = append(res.PublishLatency95pct, pct(p.pub, 95))
	res.PublishLatency99pct = append(res.PublishLatency99pct, pct(p.pub, 99))
	res.PublishLatency999pct = append(res.PublishLatency999pct, pct(p.pub, 99.9))
	res.PublishLatency9999pct = append(res.PublishLatency9999pct, pct(p.pub, 99.99))
	res.PublishLatency99999pct = append(res.PublishLatency99999pct, pct(p.pub, 99.999))
	res.PublishLatencyMax = append(res.PublishLatencyMax, ms(p.pub.Max()))
	res.PublishDelayLatencyAvg = append(res.PublishDelayLatencyAvg, p.delay.Mean())
	res.PublishDelayLatency50pct = append(res.PublishDelayLatency50pct, p.delay.ValueAtPercentile(50))
	res.PublishDelayLatency75pct = append(res.PublishDelayLatency75pct, p.delay.ValueAtPercentile(75))
	res.PublishDelayLatency95pct = append(res.PublishDelayLatency95pct, p.delay.ValueAtPercentile(95))
	res.PublishDelayLatency99pct = append(res.PublishDelayLatency99pct, p.delay.ValueAtPercentile(99))
	res.PublishDelayLatency999pct = append(res.PublishDelayLatency999pct, p.delay.ValueAtPercentile(99.9))
	res.PublishDelayLatency9999pct = append(res.PublishDelayLatency9999pct, p.delay.ValueAtPercentile(99.99))
	res.PublishDelayLatency99999pct = append(res.PublishDelayLatency99999pct, p.delay.ValueAtPercentile(99.999))
	res.PublishDelayLatencyMax = append(res.PublishDelayLatencyMax, p.delay.Max())
	res.EndToEndLatencyAvg = append(res.EndToEndLatencyAvg, p.e2e.Mean()/1000)
	res.EndToEndLatency50pct = append(res.EndToEndLatency50pct, pct(p.e2e, 50))
	res.EndToEndLatency75pct = append(res.EndToEndLatency75pct, pct(p.e2e, 75))
	res.EndToEndLatency95pct = append(res.EndToEndLatency95pct, pct(p.e2e, 95))
	res.EndToEndLatency99pct = append(res.EndToEndLatency99pct, pct(p.e2e, 99))
	res.EndToEndLatency999pct = append(res.EndToEndLatency999pct, pct(p.e2e, 99.9))
	res.EndToEndLatency9999pct = append(res.EndToEndLatency9999pct, pct(p.e2e, 99.99))
	res.EndToEndLatency99999pct = append(res.EndToEndLatency99999pct, pct(p.e2e, 99.999))
	res.EndToEndLatencyMax = append(res.EndToEndLatencyMax, ms(p.e2e.Max()))
}

// quantilePoints are the percentiles of the aggregated quantile maps:
// every percent, then finer towards the tail.
func quantilePoints() []float64 {
	var out []float64
	for p := 1.0; p < 99; p++ {
		out = append(out, p)
	}
	for _, step := range []float64{0.1, 0.01, 0.001} {
		for p := 100 - 10*step; p < 100-step/2; p += step {
			out = append(out, math.Round(p*1e4)/1e4)
		}
	}
	return append(out, 100)
}

func pctKey(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func (res *OMBResult) aggregate(pub, delay, e2e *hdrhistogram.Histogram) {
	a := func(h *hdrhistogram.Histogram, q float64) float64 { return ms(h.ValueAtPercentile(q)) }
	res.AggregatedPublishLatencyAvg = pub.Mean() / 1000
	res.AggregatedPublishLatency50pct, res.AggregatedPublishLatency75pct = a(pub, 50), a(pub, 75)
	res.AggregatedPublishLatency95pct, res.AggregatedPublishLatency99pct = a(pub, 95), a(pub, 99)
	res.AggregatedPublishLatency999pct, res.AggregatedPublishLatency9999pct = a(pub, 99.9), a(pub, 99.99)
	res.AggregatedPublishLatency99999pct, res.AggregatedPublishLatencyMax = a(pub, 99.999), ms(pub.Max())
	res.AggregatedPublishDelayLatencyAvg = delay.Mean()
	res.AggregatedPublishDelayLatency50pct = delay.ValueAtPercentile(50)
	res.AggregatedPublishDelayLatency75pct = delay.ValueAtPercentile(75)
	res.AggregatedPublishDelayLatency95pct = delay.ValueAtPercentile(95)
	res.AggregatedPublishDelayLatency99pct = delay.ValueAtPercentile(99)
	res.AggregatedPublishDelayLatency999pct = delay.ValueAtPercentile(99.9)
	res.AggregatedPublishDelayLatency9999pct = delay.ValueAtPercentile(99.99)
	res.AggregatedPublishDelayLatency99999pct = delay.ValueAtPercentile(99.999)
	res.AggregatedPublishDelayLatencyMax = delay.Max()
	res.AggregatedEndToEndLatencyAvg = e2e.Mean() / 1000
	res.AggregatedEndToEndLatency50pct, res.AggregatedEndToEndLatency75pct = a(e2e, 50), a(e2e, 75)
	res.AggregatedEndToEndLatency95pct, res.AggregatedEndToEndLatency99pct = a(e2e, 95), a(e2e, 99)
	res.AggregatedEndToEndLatency999pct, res.AggregatedEndToEndLatency9999pct = a(e2e, 99.9), a(e2e, 99.99)
	res.AggregatedEndToEndLatency99999pct, res.AggregatedEndToEndLatencyMax = a(e2e, 99.999), ms(e2e.Max())
	for _, q := range quantilePoints() {
		if pub.TotalCount() > 0 {
			res.AggregatedPublishLatencyQuantiles[pctKey(q)] = a(pub, q)
			res.AggregatedPublishDelayLatencyQuantiles[pctKey(q)] = delay.ValueAtPercentile(q)
		}
		if e2e.TotalCount() > 0 {
			res.AggregatedEndToEndLatencyQuantiles[pctKey(q)] = a(e2e, q)
		}
	}
}

// FileName is OMB's result file name: workload-driver-date.json.
func (res *OMBResult) FileName(at time.Time) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == ' ' || r == ':' {
				return '-'
			}
			return r
		}, s)
	}
	return fmt.Sprintf("%s-%s-%s.json", clean(res.Workload), clean(res.Driver), at.Format("2006-01-02-15-04-05"))
}

// WriteJSON writes the result as OMB does (indented).
func (res *OMBResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteSummary writes a few lines a person reads: rates, backlog,
// aggregated latencies, and the run's notes.
func (res *OMBResult) WriteSummary(w io.Writer) error {
	avg := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	info := res.Run
	fmt.Fprintf(w, "OMB workload %q on %s (driver %s)\n", res.Workload, info.Cluster, res.Driver)
	target := "max (rate search)"
	if info.TargetRate > 0 {
		target = fmt.Sprintf("%.0f msg/s", info.TargetRate)
	}
	fmt.Fprintf(w, "  target rate %s; measured %.1f s: %d sent (%.1f msg/s), %d received (%.1f msg/s), peak backlog %d\n",
		target, info.MeasuredSeconds, info.Sent, float64(info.Sent)/max(info.MeasuredSeconds, 1e-9), info.Received,
		float64(info.Received)/max(info.MeasuredSeconds, 1e-9), info.PeakBacklog)
	fmt.Fprintf(w, "  publishRate avg %.1f msg/s, consumeRate avg %.1f msg/s over %d intervals\n", avg(res.PublishRate), avg(res.ConsumeRate), len(res.PublishRate))
	fmt.Fprintf(w, "  publish latency (ms): avg %.2f p50 %.2f p99 %.2f p99.9 %.2f max %.2f\n", res.AggregatedPublishLatencyAvg,
		res.AggregatedPublishLatency50pct, res.AggregatedPublishLatency99pct, res.AggregatedPublishLatency999pct, res.AggregatedPublishLatencyMax)
	fmt.Fprintf(w, "  end-to-end latency (ms): avg %.2f p50 %.2f p99 %.2f p99.9 %.2f max %.2f\n", res.AggregatedEndToEndLatencyAvg,
		res.AggregatedEndToEndLatency50pct, res.AggregatedEndToEndLatency99pct, res.AggregatedEndToEndLatency999pct, res.AggregatedEndToEndLatencyMax)
	for _, n := range info.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	return nil
}
