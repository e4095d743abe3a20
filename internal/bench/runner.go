package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Options configures a benchmark run.
type Options struct {
	Profile   Profile
	Scenarios []*Scenario
	// Only, when not empty, names the scenarios to run.
	Only []string
	// Bootstrap points at a running cluster; "" starts an embedded one.
	Bootstrap string
	// Embedded configures the embedded cluster (Brokers and Props are
	// set per point).
	Embedded EmbeddedConfig
	// Verify reads back every record of produce-only runs, so records
	// sent = stored = consumed is checked for every scenario.
	Verify bool
	// Progress gets a progress line with ETA when it is a terminal.
	Progress io.Writer
	// OnPoint is called with the results so far after each point (to
	// save them as the run goes; Ctrl-C keeps what finished).
	OnPoint func(*Results)
	// Seeds are the seed studies' figures the report shows beside this
	// run's (LoadSeeds of bench/seeds); nil leaves them out.
	Seeds []*SeedStudy
	// Limits are what the full profile is fitted to (see fitToHost).
	Limits HostLimits
}

// DefaultOptions runs the quick profile on an embedded cluster.
func DefaultOptions() Options {
	return Options{Profile: ProfileQuick, Embedded: DefaultEmbeddedConfig()}
}

// Validate checks the options.
func (o *Options) Validate() error {
	if len(o.Scenarios) == 0 {
		return errors.New("no scenarios")
	}
	for _, name := range o.Only {
		if !slices.ContainsFunc(o.Scenarios, func(s *Scenario) bool { return s.Name == name }) {
			var names []string
			for _, s := range o.Scenarios {
				names = append(names, s.Name)
			}
			return fmt.Errorf("unknown scenario %q (have: %s)", name, strings.Join(names, ", "))
		}
	}
	if o.Bootstrap == "" {
		cfg := o.Embedded
		cfg.Brokers = 1
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Runner runs scenarios. Not safe for concurrent use.
type Runner struct {
	opts     Options
	remote   *RemoteCluster
	embedded *EmbeddedCluster
	embKey   string
	prog     *progress
}

// Run runs the selected scenarios and returns their results. When ctx is
// cancelled it stops the run in progress, drops it, and returns the
// results of the points that finished (Interrupted set) with ctx's error.
func Run(ctx context.Context, opts Options) (*Results, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{opts: opts}
	defer r.closeClusters()
	res := &Results{
		Version: ResultsVersion,
		Started: time.Now(),
		Profile: opts.Profile.Name,
		Host:    fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
		Seeds:   opts.Seeds,
	}
	if h, err := os.Hostname(); err == nil {
		res.Host = h + ", " + res.Host
	}
	if opts.Bootstrap != "" {
		rc, err := ConnectRemote(ctx, opts.Bootstrap)
		if err != nil {
			return nil, err
		}
		r.remote = rc
		res.Cluster = fmt.Sprintf("remote %s (%d brokers)", opts.Bootstrap, rc.Brokers())
	} else {
		res.Cluster = fmt.Sprintf("embedded silkworm (1 to %d brokers, as each scenario asks)", MaxEmbeddedBrokers)
	}

	plan, err := planRun(opts)
	if err != nil {
		return nil, err
	}
	if opts.Profile.Name == ProfileFull.Name {
		res.Scaling = fitToHost(plan, opts.Limits)
	}
	total := 0
	for _, pl := range plan {
		res.Scenarios = append(res.Scenarios, pl.s)
		for _, p := range pl.points {
			total += p.Spec.Repetitions
		}
	}
	r.prog = newProgress(opts.Progress, total)
	defer r.prog.stop()

	for _, pl := range plan {
		for _, pt := range pl.points {
			pr := r.runPoint(ctx, pt)
			if ctx.Err() != nil {
				res.Interrupted = true
				if len(pr.Runs) > 0 {
					pr.Error = "interrupted; repetitions that finished are kept"
					pr.Summary = summarize(pr.Runs)
					res.Points = append(res.Points, pr)
				}
				res.Finished = time.Now()
				return res, ctx.Err()
			}
			res.Points = append(res.Points, pr)
			res.Finished = time.Now()
			if opts.OnPoint != nil {
				opts.OnPoint(res)
			}
		}
	}
	res.Finished = time.Now()
	return res, nil
}

func (r *Runner) closeClusters() {
	if r.remote != nil {
		r.remote.Close()
	}
	if r.embedded != nil {
		r.embedded.Close()
		r.embedded = nil
	}
}

// cluster returns the cluster for a point: the remote one, or an embedded
// one with the point's broker settings (restarted when they change). A
// non-empty skip says why the point cannot run here.
func (r *Runner) cluster(ctx context.Context, pt Point) (c Cluster, skip, note string, err error) {
	rf := pt.Spec.Topic.ReplicationFactor
	if r.remote != nil {
		if rf > r.remote.Brokers() {
			return nil, fmt.Sprintf("needs %d brokers, the cluster has %d", rf, r.remote.Brokers()), "", nil
		}
		if p := pt.Scenario.Sweep.Parameter; strings.HasPrefix(p, "broker.") {
			return nil, fmt.Sprintf("%s cannot be changed on a remote cluster; set it on the brokers and run --scenario %s again", strings.TrimPrefix(p, "broker."), pt.Scenario.Name), "", nil
		}
		if len(pt.Spec.Broker) > 0 {
			note = "broker settings not applied on a remote cluster: " + propsString(pt.Spec.Broker)
		}
		return r.remote, "", note, nil
	}
	want := max(pt.Spec.Brokers, rf)
	if rf > MaxEmbeddedBrokers {
		return nil, fmt.Sprintf("needs %d brokers (the embedded cluster runs at most %d; use --bootstrap-server)", rf, MaxEmbeddedBrokers), "", nil
	}
	if want > MaxEmbeddedBrokers {
		note = fmt.Sprintf("ran on %d brokers; the scenario asks for %d", MaxEmbeddedBrokers, want)
		want = MaxEmbeddedBrokers
	}
	if ign := IgnoredSettings(pt.Spec.Broker); len(ign) > 0 {
		note = join(note, "Silkworm accepts but does not apply "+strings.Join(ign, ", ")+", so this sweep cannot show an effect")
	}
	key := fmt.Sprintf("%d|%s", want, propsString(pt.Spec.Broker))
	if r.embedded != nil && r.embKey == key {
		return r.embedded, "", note, nil
	}
	if r.embedded != nil {
		r.embedded.Close()
		r.embedded = nil
	}
	cfg := r.opts.Embedded
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultEmbeddedConfig().StartTimeout
	}
	cfg.Brokers = want
	cfg.Props = maps.Clone(pt.Spec.Broker)
	ec, err := StartEmbedded(ctx, cfg)
	if err != nil {
		return nil, "", "", err
	}
	r.embedded, r.embKey = ec, key
	return ec, "", note, nil
}

// join joins two notes with "; ", either possibly empty.
func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

func propsString(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

func (r *Runner) runPoint(ctx context.Context, pt Point) PointResult {
	pr := PointResult{Scenario: pt.Scenario.Name, Label: pt.Label(), Series: pt.Series, Value: pt.Value, Spec: pt.Spec}
	pr.Spec.Quick = Sizes{}
	pr.Spec.Charts = nil
	c, skip, note, err := r.cluster(ctx, pt)
	pr.Note = note
	if err != nil {
		pr.Error = err.Error()
		r.prog.skip(pt.Spec.Repetitions)
		return pr
	}
	if skip != "" {
		pr.Skipped = skip
		r.prog.skip(pt.Spec.Repetitions)
		return pr
	}
	pr.Brokers = c.Brokers()
	for rep := range pt.Spec.Repetitions {
		r.prog.begin(fmt.Sprintf("%s %s rep %d/%d", pt.Scenario.Name, pr.Label, rep+1, pt.Spec.Repetitions))
		run, err := r.runOnce(ctx, c, pt, rep)
		r.prog.end()
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			pr.Error = fmt.Sprintf("rep %d: %v", rep+1, err)
			r.prog.skip(pt.Spec.Repetitions - rep - 1)
			break
		}
		pr.Runs = append(pr.Runs, run)
	}
	pr.Summary = summarize(pr.Runs)
	return pr
}

// runState is what one run collects while it goes.
type runState struct {
	spec    *Scenario
	topic   string
	cluster Cluster
	adm     *kadm.Client
	run     Repetition
	sent    int64
	bytes   int64 // value bytes acknowledged
}

func topicName(pt Point, rep int) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
				return r
			}
			return '_'
		}, s)
	}
	return fmt.Sprintf("bench-%s-%s%s-%d-%06x", clean(pt.Scenario.Name), clean(pt.Series), clean(pt.Value), rep, rand.Uint32()&0xffffff)
}

func (r *Runner) runOnce(ctx context.Context, c Cluster, pt Point, rep int) (Repetition, error) {
	spec := pt.Spec
	st := &runState{spec: &spec, topic: topicName(pt, rep), cluster: c, run: Repetition{Rep: rep + 1, Started: time.Now(), Metrics: map[string]float64{}}}
	admCl, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": c.Bootstrap()})
	if err != nil {
		return st.run, err
	}
	st.adm = kadm.NewClient(admCl)
	defer st.adm.Close()
	if err := createTopic(ctx, admCl, st.topic, spec.Topic); err != nil {
		return st.run, err
	}
	if spec.Topic.ReplicationFactor > 1 {
		if err := warmReplication(ctx, c.Bootstrap(), st.adm, st.topic, spec.Topic.Partitions); err != nil {
			return st.run, err
		}
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = st.adm.DeleteTopics(dctx, st.topic)
	}()

	usage0, usageOK := c.Usage()
	rss := newRSSSampler(c)
	start := time.Now()
	switch spec.Kind {
	case KindProduce:
		err = r.produceAll(ctx, st, false)
	case KindConsume:
		if err = r.fill(ctx, st); err == nil {
			// Consumers read up to the high watermark: with acks=1 and
			// followers let it catch up first, so only reading is timed.
			_, err = committedRecords(ctx, st.adm, st.topic, st.sent)
		}
		if err == nil {
			err = r.consumeAll(ctx, st, spec.Consumers, st.sent, false, nil)
		}
	case KindProduceThenConsume:
		if err = r.produceAll(ctx, st, true); err == nil {
			err = r.consumeAll(ctx, st, spec.Consumers, st.sent, false, nil)
		}
	case KindProduceConsume, KindEndToEnd:
		err = r.consumeAll(ctx, st, spec.Consumers, spec.Records, spec.Kind == KindEndToEnd, func() error {
			return r.produceAll(ctx, st, true)
		})
	case KindStoredData:
		err = r.storedData(ctx, st)
	case KindRetention:
		err = r.retention(ctx, st)
	}
	elapsed := time.Since(start)
	st.run.Seconds = elapsed.Seconds()
	peakRSS := rss.stop()
	if err != nil {
		return st.run, err
	}
	m := st.run.Metrics
	if usage1, ok := c.Usage(); ok && usageOK && elapsed > 0 {
		m[MBrokerCPU] = (usage1.CPU - usage0.CPU).Seconds() / elapsed.Seconds()
		m[MBrokerRSS] = float64(max(peakRSS, usage1.RSS)) / mb
	}
	m[MSent] = float64(st.sent)
	if spec.Kind != KindRetention {
		stored, err := committedRecords(ctx, st.adm, st.topic, st.sent)
		if err != nil {
			return st.run, err
		}
		m[MStored] = float64(stored)
		replicas, isr, err := replicaCounts(ctx, st.adm, st.topic)
		if err != nil {
			return st.run, err
		}
		m[MReplicas], m[MISRMin] = float64(replicas), float64(isr)
		lb, err := c.LogBytes(ctx, st.topic)
		if err != nil {
			return st.run, err
		}
		m[MLogBytes] = float64(lb)
		if st.bytes > 0 {
			m[MDiskRatio] = float64(lb) / float64(st.bytes)
		}
		if r.opts.Verify && len(st.run.Consumers) == 0 {
			n, err := verifyRead(ctx, c.Bootstrap(), st.topic, &spec, stored)
			if err != nil {
				return st.run, err
			}
			m[MConsumed] = float64(n)
		}
	}
	return st.run, nil
}

// createTopic creates the topic and waits until every broker's metadata
// shows a leader for each partition: a client that bootstraps from a broker
// still behind would otherwise see the topic missing and wait for its next
// metadata refresh (5 s in franz-go), which the run would count.
func createTopic(ctx context.Context, cl *kgo.Client, topic string, spec TopicSpec) error {
	adm := kadm.NewClient(cl)
	configs := map[string]*string{}
	for k, v := range spec.Configs {
		configs[k] = &v
	}
	resp, err := adm.CreateTopic(ctx, int32(spec.Partitions), int16(spec.ReplicationFactor), configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s (%d partitions, RF %d): %w", topic, spec.Partitions, spec.ReplicationFactor, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := topicReadyEverywhere(ctx, cl, topic, spec.Partitions)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s not ready after 30s: %w", topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// topicReadyEverywhere asks each broker of the cluster for the topic's
// metadata and reports the first that lacks a partition or its leader.
func topicReadyEverywhere(ctx context.Context, cl *kgo.Client, topic string, partitions int) error {
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	for _, bm := range md.Brokers {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(bm.NodeID)))
		if err != nil {
			return fmt.Errorf("metadata from broker %d: %w", bm.NodeID, err)
		}
		if len(resp.Topics) != 1 {
			return fmt.Errorf("broker %d returned %d topics", bm.NodeID, len(resp.Topics))
		}
		t := resp.Topics[0]
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("broker %d: %w", bm.NodeID, err)
		}
		if len(t.Partitions) != partitions {
			return fmt.Errorf("broker %d knows %d of %d partitions", bm.NodeID, len(t.Partitions), partitions)
		}
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil || p.Leader < 0 {
				return fmt.Errorf("broker %d: partition %d has no leader (%v)", bm.NodeID, p.Partition, err)
			}
		}
	}
	return nil
}

// warmReplication writes one record with acks=all to each partition of a
// new replicated topic and then deletes it (DeleteRecords moves the
// LogStartOffset past it, so records stored = LogEndOffset -
// LogStartOffset still counts only the run's records). A follower that
// asked for a partition before its leader knew it waits
// replica.fetch.backoff.ms (1 s by default) before asking again; in a short
// run that one-off wait would count as the cost of acks=all.
func warmReplication(ctx context.Context, bootstrap string, adm *kadm.Client, topic string, partitions int) error {
	cl, err := cli.NewClient(ctx, cli.Producer, cli.Props{"bootstrap.servers": bootstrap, "acks": "all"},
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return fmt.Errorf("warm replication of %s: %w", topic, err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, partitions)
	for p := range partitions {
		recs[p] = &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("warm-up")}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("warm replication of %s: %w", topic, err)
	}
	var to kadm.Offsets
	for _, r := range recs {
		to.Add(kadm.Offset{Topic: topic, Partition: r.Partition, At: r.Offset + 1})
	}
	resp, err := adm.DeleteRecords(ctx, to)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("warm replication of %s: delete the warm-up records: %w", topic, err)
	}
	return nil
}

// replicaCounts is the smallest replica set and the smallest ISR over the
// topic's partitions, as the cluster's metadata has them now: with acks=all
// an ISR below the replication factor means some writes waited for fewer
// replicas than the topic has.
func replicaCounts(ctx context.Context, adm *kadm.Client, topic string) (replicas, isr int, err error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	t, ok := md.Topics[topic]
	if !ok || t.Err != nil || len(t.Partitions) == 0 {
		return 0, 0, fmt.Errorf("metadata of %s: topic missing (%v)", topic, t.Err)
	}
	replicas, isr = math.MaxInt, math.MaxInt
	for _, p := range t.Partitions {
		replicas = min(replicas, len(p.Replicas))
		isr = min(isr, len(p.ISR))
	}
	return replicas, isr, nil
}

// committedRecords is storedRecords once it reaches sent or stops
// growing: with acks=1 and followers the producer is answered before the
// high watermark (the end offset ListOffsets reports) covers its records,
// so the count waits for replication to catch up. It gives up waiting
// after 30 s without progress and returns what is committed then.
func committedRecords(ctx context.Context, adm *kadm.Client, topic string, sent int64) (int64, error) {
	var last int64 = -1
	progress := time.Now()
	for {
		n, err := storedRecords(ctx, adm, topic)
		if err != nil || n >= sent {
			return n, err
		}
		if n != last {
			last, progress = n, time.Now()
		}
		if time.Since(progress) > 30*time.Second {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// storedRecords is the sum over partitions of LogEndOffset - LogStartOffset.
func storedRecords(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		n += o.Offset
	})
	starts.Each(func(o kadm.ListedOffset) {
		n -= o.Offset
	})
	return n, nil
}

func verifyRead(ctx context.Context, bootstrap, topic string, spec *Scenario, want int64) (int64, error) {
	cs := &consumerSet{bootstrap: bootstrap, topic: topic, spec: spec, n: 1, want: want}
	if err := cs.start(ctx); err != nil {
		return 0, fmt.Errorf("verify: %w", err)
	}
	defer cs.close()
	res, _, err := cs.consume(ctx)
	if err != nil {
		return 0, fmt.Errorf("verify: %w", err)
	}
	return res[0].Records, nil
}

// produceAll runs the scenario's producers concurrently, splitting the
// records and the rate between them. measured adds their results to the
// run (fill producers are not measured).
func (r *Runner) produceAll(ctx context.Context, st *runState, measured bool) error {
	spec := st.spec
	n := spec.Producers
	jobs := make([]producerJob, n)
	pl := newPayloads(spec.RecordSize, 1)
	for i := range n {
		recs := spec.Records / int64(n)
		if i == 0 {
			recs += spec.Records % int64(n)
		}
		jobs[i] = producerJob{
			id: fmt.Sprintf("producer-%d", i+1), bootstrap: st.cluster.Bootstrap(), topic: st.topic, spec: spec,
			records: recs, rate: spec.Rate / float64(n), payloads: pl, stamp: spec.Kind == KindEndToEnd,
			onAck: func(int) { r.prog.add(1, spec.Records*int64(max(1, consumersReading(spec)))) },
		}
		if spec.Kind == KindRetention {
			jobs[i].duration = time.Duration(spec.Duration)
		}
	}
	results, hist, err := runProducers(ctx, jobs)
	for _, res := range results {
		st.sent += res.Records
		st.bytes += res.Bytes
	}
	if measured || spec.Kind == KindProduce || spec.Kind == KindStoredData || spec.Kind == KindRetention {
		st.run.Producers = append(st.run.Producers, results...)
		addProducerMetrics(st.run.Metrics, results, hist)
	}
	return err
}

func consumersReading(spec *Scenario) int {
	switch spec.Kind {
	case KindProduce, KindStoredData, KindRetention:
		return 0
	}
	if spec.ConsumerGroup == GroupSeparate {
		return spec.Consumers
	}
	return 1
}

// fill writes the topic before a consume run (one unmeasured producer).
func (r *Runner) fill(ctx context.Context, st *runState) error {
	spec := *st.spec
	spec.Rate = 0
	saved := st.spec
	st.spec = &spec
	err := r.produceAll(ctx, st, false)
	st.spec = saved
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	return nil
}

func runProducers(ctx context.Context, jobs []producerJob) ([]ClientResult, *hdrhistogram.Histogram, error) {
	results := make([]ClientResult, len(jobs))
	hists := make([]*hdrhistogram.Histogram, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], hists[i], errs[i] = produce(ctx, j)
		}()
	}
	wg.Wait()
	merged := newHistogram()
	for _, h := range hists {
		if h != nil {
			merged.Merge(h)
		}
	}
	return results, merged, errors.Join(errs...)
}

func addProducerMetrics(m map[string]float64, results []ClientResult, hist *hdrhistogram.Histogram) {
	var recs, mbs float64
	for _, r := range results {
		recs += r.RecordsPerSec
		mbs += r.MBPerSec
	}
	m[MProduceRecs] = recs
	m[MProduceMB] = mbs
	if len(results) > 0 {
		m[MProducePerClient] = recs / float64(len(results))
	}
	if p := percentiles(hist); p != nil {
		m[MProduceLatMean], m[MProduceLatP50], m[MProduceLatP95] = p.Mean, p.P50, p.P95
		m[MProduceLatP99], m[MProduceLatP999], m[MProduceLatMax] = p.P99, p.P999, p.Max
	}
}

// consumeAll starts the consumers (a shared group settles first), runs
// during (the producers) if given, and reads want records: in total for a
// shared group, each for separate consumers.
func (r *Runner) consumeAll(ctx context.Context, st *runState, n int, want int64, e2e bool, during func() error) error {
	spec := st.spec
	cs := &consumerSet{
		bootstrap: st.cluster.Bootstrap(), topic: st.topic, spec: spec, adm: st.adm, n: n, want: want, e2e: e2e,
	}
	if spec.ConsumerGroup == GroupShared {
		cs.group = st.topic + "-group"
	}
	if during == nil {
		cs.onRecords = func(k int) { r.prog.add(int64(k), want*int64(max(1, consumersReading(spec)))) }
	}
	if err := cs.start(ctx); err != nil {
		return err
	}
	defer cs.close()
	var prodErr error
	var wg sync.WaitGroup
	if during != nil {
		wg.Add(1)
		go func() { defer wg.Done(); prodErr = during() }()
	}
	results, hist, err := cs.consume(ctx)
	wg.Wait()
	if err := errors.Join(prodErr, err); err != nil {
		return err
	}
	st.run.Consumers = results
	m := st.run.Metrics
	var recs, mbs, fmb, frecs, bytes, rebalance, fetchMs float64
	var consumed int64 = math.MaxInt64
	var idle, active int
	var total int64
	for _, c := range results {
		total += c.Records
		if c.Idle {
			idle++
			continue
		}
		active++
		consumed = min(consumed, c.Records)
		recs += c.RecordsPerSec
		mbs += c.MBPerSec
		fmb += c.FetchMBPerSec
		frecs += c.FetchRecordsPerSec
		bytes += float64(c.Bytes)
		rebalance = max(rebalance, c.RebalanceMs)
		fetchMs = max(fetchMs, c.FetchMs)
	}
	if cs.group != "" {
		// A shared group splits the records: its throughput is the
		// total over the time until the last member finished.
		consumed = total
		var secs float64
		for _, c := range results {
			secs = max(secs, c.Seconds)
		}
		recs, mbs, fmb, frecs = 0, 0, 0, 0
		if secs > 0 {
			recs, mbs = float64(total)/secs, bytes/mb/secs
		}
		if fetchMs > 0 {
			fmb, frecs = bytes/mb/(fetchMs/1000), float64(total)/(fetchMs/1000)
		}
	}
	if active == 0 {
		consumed = 0
	}
	m[MConsumed] = float64(consumed)
	m[MConsumeRecs], m[MConsumeMB] = recs, mbs
	m[MConsumeFetchMB], m[MConsumeFetchRecs] = fmb, frecs
	m[MConsumeDataMB] = bytes / mb
	m[MConsumeRebalance], m[MConsumeFetchMs] = rebalance, fetchMs
	m[MConsumeIdle] = float64(idle)
	if active > 0 {
		var sum float64
		for _, c := range results {
			if !c.Idle {
				sum += c.RecordsPerSec
			}
		}
		m[MConsumePerClient] = sum / float64(active)
	}
	if e2e {
		if p := percentiles(hist); p != nil {
			m[ME2EP50], m[ME2EP95], m[ME2EP99], m[ME2EP999], m[ME2EMax] = p.P50, p.P95, p.P99, p.P999, p.Max
		}
	}
	return nil
}

// storedData keeps one producer writing and samples its throughput every
// Records/Samples acknowledgements against the MB stored before.
func (r *Runner) storedData(ctx context.Context, st *runState) error {
	spec := st.spec
	every := max(spec.Records/int64(spec.Samples), 1)
	var (
		mu      sync.Mutex // guards the sampling state
		count   int64
		bytes   int64
		winFrom = time.Now()
		winMB   float64
	)
	pl := newPayloads(spec.RecordSize, 1)
	job := producerJob{
		id: "producer-1", bootstrap: st.cluster.Bootstrap(), topic: st.topic, spec: spec,
		records: spec.Records, payloads: pl,
		onAck: func(n int) {
			r.prog.add(1, spec.Records)
			mu.Lock()
			defer mu.Unlock()
			count++
			bytes += int64(n)
			if count%every == 0 {
				now := time.Now()
				if d := now.Sub(winFrom).Seconds(); d > 0 {
					st.run.Samples = append(st.run.Samples, Sample{X: winMB, Y: float64(every) / d})
				}
				winFrom, winMB = now, float64(bytes)/mb
			}
		},
	}
	res, hist, err := produce(ctx, job)
	st.sent, st.bytes = res.Records, res.Bytes
	st.run.Producers = []ClientResult{res}
	addProducerMetrics(st.run.Metrics, st.run.Producers, hist)
	mu.Lock()
	defer mu.Unlock()
	if q := len(st.run.Samples) / 4; q > 0 {
		first, last := 0.0, 0.0
		for _, s := range st.run.Samples[:q] {
			first += s.Y
		}
		for _, s := range st.run.Samples[len(st.run.Samples)-q:] {
			last += s.Y
		}
		if first > 0 {
			st.run.Metrics[MStoredFlat] = (last/first - 1) * 100
		}
	}
	return err
}

// retention writes at the scenario's rate for its duration while sampling
// the log bytes on disk, then keeps sampling for Observe (or until the log
// is below a tenth of its peak) while retention deletes segments.
func (r *Runner) retention(ctx context.Context, st *runState) error {
	spec := st.spec
	total := time.Duration(spec.Duration) + time.Duration(spec.Observe)
	interval := max(total/60, 50*time.Millisecond)
	start := time.Now()
	var (
		mu        sync.Mutex // guards samples, peak, writeEnd
		peak      float64
		writeEnd  time.Time
		deletedAt float64 = -1
	)
	sample := func() (float64, error) {
		lb, err := st.cluster.LogBytes(ctx, st.topic)
		if err != nil {
			return 0, err
		}
		v := float64(lb) / mb
		mu.Lock()
		defer mu.Unlock()
		st.run.Samples = append(st.run.Samples, Sample{X: time.Since(start).Seconds(), Y: v})
		peak = max(peak, v)
		if !writeEnd.IsZero() && deletedAt < 0 && peak > 0 && v <= peak/2 {
			deletedAt = time.Since(writeEnd).Seconds()
		}
		return v, nil
	}
	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var sampleErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				if _, err := sample(); err != nil {
					sampleErr = err
					return
				}
			}
		}
	}()
	err := r.produceAll(ctx, st, true)
	mu.Lock()
	writeEnd = time.Now()
	mu.Unlock()
	if err == nil {
		deadline := writeEnd.Add(time.Duration(spec.Observe))
		for time.Now().Before(deadline) && ctx.Err() == nil {
			mu.Lock()
			last, pk := 0.0, peak
			if n := len(st.run.Samples); n > 0 {
				last = st.run.Samples[n-1].Y
			}
			done := pk > 0 && last <= pk/10
			mu.Unlock()
			if done {
				break
			}
			r.prog.add(0, 0)
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}
	stopSampling()
	wg.Wait()
	final, serr := sample()
	if err := errors.Join(err, sampleErr, serr); err != nil {
		return err
	}
	m := st.run.Metrics
	m[MRetentionPeakMB] = peak
	m[MRetentionFinalMB] = final
	if deletedAt >= 0 {
		m[MRetentionDeleted] = deletedAt
	}
	return nil
}

// rssSampler keeps the largest broker RSS seen during a run.
type rssSampler struct {
	stopc chan struct{}
	done  chan struct{}
	peak  int64
}

func newRSSSampler(c Cluster) *rssSampler {
	s := &rssSampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if u, ok := c.Usage(); ok {
				s.peak = max(s.peak, u.RSS)
			}
			select {
			case <-s.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.stopc)
	<-s.done
	return s.peak
}
