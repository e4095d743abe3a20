package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// pollTimeout is how long one poll waits for records, Kafka's 100 ms.
const pollTimeout = 100 * time.Millisecond

type consumerOptions struct {
	topic        string
	include      string
	messages     int64
	props        cli.Props
	group        bool
	detailed     bool
	hideHeader   bool
	dateFormat   string
	interval     time.Duration
	timeout      time.Duration
	timeoutMs    int64
	printMetrics bool
}

func parseConsumerOptions(args []string, stdout, stderr io.Writer) (*consumerOptions, error) {
	p := cli.NewParser("consumer-perf-test", "This tool is used to verify the consumer performance.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server to connect to", "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.", "")
	brokerList := p.String("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. The broker list string in the form HOST1:PORT1,HOST2:PORT2.", "")
	topic := p.String("topic", "topic", "The topic to consume from.", "")
	include := p.String("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption.", "")
	group := p.String("group", "gid", "The group id to consume on.", "perf-consumer-"+strconv.Itoa(rand.IntN(100000)))
	fetchSize := p.Int("fetch-size", "size", "The amount of data to fetch in a single request.", 1024*1024)
	fromLatest := p.Flag("from-latest", "If the consumer does not already have an established offset to consume from, "+
		"start with the latest message present in the log rather than the earliest message.")
	p.Ignored("socket-buffer-size", "size", "The size of the tcp RECV size. (ignored)")
	consumerConfig := p.String("consumer.config", "config file", "Consumer config properties file.", "")
	printMetrics := p.Flag("print-metrics", "Print out the metrics.")
	detailed := p.Flag("show-detailed-stats", "If set, stats are reported for each reporting interval as configured by reporting-interval")
	timeout := p.Int64("timeout", "milliseconds", "The maximum allowed time in milliseconds between returned records.", 10000)
	messages := p.Int64("messages", "count", "REQUIRED: The number of messages to consume.", 0)
	interval := p.Int64("reporting-interval", "interval_ms", "Interval in milliseconds at which to print progress info.", 5000)
	dateFormat := p.String("date-format", "date format", "The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.", "yyyy-MM-dd HH:mm:ss:SSS")
	hideHeader := p.Flag("hide-header", "If set, skips printing the header for the stats")
	p.Ignored("threads", "count", "DEPRECATED and ignored: Number of processing threads.")
	p.Ignored("num-fetch-threads", "count", "DEPRECATED and ignored: Number of fetcher threads.")
	p.Ignored("new-consumer", "", "DEPRECATED and ignored: the new consumer is always used.")
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("found non-option argument %q", p.Args()[0])
	}
	if err := p.Require("messages"); err != nil {
		return nil, err
	}
	if err := p.RequireOneOf("topic", "include"); err != nil {
		return nil, err
	}
	if p.Has("threads") || p.Has("num-fetch-threads") {
		fmt.Fprintln(stderr, "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test")
	}
	if *interval <= 0 {
		return nil, errors.New("reporting interval must be greater than 0")
	}
	if *timeout < 0 {
		return nil, errors.New("--timeout must not be negative")
	}
	if *messages < 0 {
		return nil, errors.New("--messages must not be negative")
	}
	servers := *bootstrap
	if servers == "" {
		servers = *brokerList
	}
	if servers == "" {
		return nil, errors.New("missing required argument \"[bootstrap-server]\"")
	}
	props, err := cli.LoadProps(*consumerConfig)
	if err != nil {
		return nil, err
	}
	props["bootstrap.servers"] = servers
	props["group.id"] = *group
	props["max.partition.fetch.bytes"] = strconv.Itoa(*fetchSize)
	if *fromLatest {
		props["auto.offset.reset"] = "latest"
	} else {
		props["auto.offset.reset"] = "earliest"
	}
	props["check.crcs"] = "false"
	if _, ok := props["client.id"]; !ok {
		props["client.id"] = "perf-consumer-client"
	}
	return &consumerOptions{
		topic: *topic, include: *include, messages: *messages, props: props, group: true,
		detailed: *detailed, hideHeader: *hideHeader, dateFormat: *dateFormat,
		interval:  time.Duration(*interval) * time.Millisecond,
		timeout:   time.Duration(*timeout) * time.Millisecond,
		timeoutMs: *timeout, printMetrics: *printMetrics,
	}, nil
}

// ConsumerPerf runs consumer-perf-test (Kafka's kafka-consumer-perf-test.sh)
// with args, writing Kafka's header and stats lines to stdout. It consumes
// in a consumer group, as Kafka's tool does; against a cluster without group
// support (no JoinGroup in ApiVersions) it warns on stderr and reads the
// partitions directly. When ctx is cancelled (Ctrl-C) it prints the stats
// of what was consumed so far. On a terminal, stderr shows a progress line.
func ConsumerPerf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseConsumerOptions(args, stdout, stderr)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return runConsumer(ctx, o, stdout, stderr)
}

// joinTracker measures the time spent joining the group, as Kafka's
// rebalance listener does: from the moment the consumer holds no
// partitions until it is assigned some. Safe for concurrent use (kgo calls
// the callbacks from its own goroutine).
type joinTracker struct {
	mu        sync.Mutex
	assigned  int
	joinStart time.Time
	total     time.Duration
	round     time.Duration
}

func (j *joinTracker) onAssigned(n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.assigned == 0 {
		d := time.Since(j.joinStart)
		j.total += d
		j.round += d
	}
	j.assigned += n
}

func (j *joinTracker) onRevoked(n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.assigned = max(j.assigned-n, 0)
	if j.assigned == 0 {
		j.joinStart = time.Now()
	}
}

// takeRound returns the join time since the last call and starts a new round.
func (j *joinTracker) takeRound() time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.round
	j.round = 0
	return r
}

func (j *joinTracker) totalTime() time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

func countPartitions(m map[string][]int32) int {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return n
}

// supportsGroups reports whether the cluster answers JoinGroup.
func supportsGroups(ctx context.Context, cl *kgo.Client) (bool, error) {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return false, fmt.Errorf("api versions: %w", err)
	}
	joinGroup := kmsg.NewPtrJoinGroupRequest().Key()
	for _, k := range resp.ApiKeys {
		if k.ApiKey == joinGroup {
			return true, nil
		}
	}
	return false, nil
}

func runConsumer(ctx context.Context, o *consumerOptions, stdout, stderr io.Writer) error {
	// An admin-style probe first: it checks the cluster is reachable, the
	// topic exists and whether groups are supported.
	probe, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": o.props["bootstrap.servers"]})
	if err != nil {
		return err
	}
	if o.topic != "" {
		if err := checkTopic(ctx, probe, o.topic, false); err != nil {
			probe.Close()
			return err
		}
	}
	groups, err := supportsGroups(ctx, probe)
	probe.Close()
	if err != nil {
		return err
	}
	props := o.props.Clone()
	if !groups {
		fmt.Fprintln(stderr, "WARNING: the cluster does not support consumer groups (no JoinGroup API); consuming the partitions directly without a group.")
		delete(props, "group.id")
		o.group = false
	}

	if !o.hideHeader {
		fmt.Fprintln(stdout, consumerHeader(o.detailed))
	}
	start := time.Now()
	join := &joinTracker{joinStart: start}
	var extra []kgo.Opt
	if o.group {
		extra = append(extra,
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { join.onAssigned(countPartitions(m)) }),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { join.onRevoked(countPartitions(m)) }),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { join.onRevoked(countPartitions(m)) }))
	}
	if o.topic != "" {
		extra = append(extra, kgo.ConsumeTopics(o.topic))
	} else {
		extra = append(extra, kgo.ConsumeRegex(), kgo.ConsumeTopics(o.include))
	}
	cl, err := cli.NewClient(ctx, cli.Consumer, props, extra...)
	if err != nil {
		return err
	}
	defer cl.Close()

	var msgs, byteCount atomic.Int64
	stopProgress := startProgress(stderr, func() string {
		return fmt.Sprintf("%d messages consumed (%s MB)", msgs.Load(), javafmt.Fixed(float64(byteCount.Load())/mib, 1))
	})
	var (
		now           = time.Now()
		lastReport    = now
		lastConsumed  = now
		read, nbytes  int64
		lastRead      int64
		lastBytes     int64
		reportedError = map[string]bool{}
	)
	for read < o.messages && now.Sub(lastConsumed) <= o.timeout && ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, pollTimeout)
		fetches := cl.PollRecords(pollCtx, int(min(o.messages-read, 1<<20)))
		cancel()
		now = time.Now()
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || reportedError[err.Error()] {
				return
			}
			reportedError[err.Error()] = true
			fmt.Fprintf(stderr, "WARNING: fetch from %s-%d: %v\n", t, p, err)
		})
		n := 0
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			nbytes += int64(len(r.Key) + len(r.Value))
		})
		if n > 0 {
			read += int64(n)
			lastConsumed = now
			msgs.Store(read)
			byteCount.Store(nbytes)
		}
		if n > 0 && now.Sub(lastReport) >= o.interval {
			round := join.takeRound()
			if o.detailed {
				fmt.Fprintln(stdout, consumerProgressLine(o.dateFormat, lastReport, now, nbytes, lastBytes, read, lastRead, round.Milliseconds()))
			}
			lastReport, lastRead, lastBytes = now, read, nbytes
		}
	}
	end := time.Now()
	stopProgress()
	if read < o.messages && ctx.Err() == nil {
		fmt.Fprintln(stdout, consumerTimeoutWarning(o.timeoutMs))
	}
	if o.group && props["enable.auto.commit"] != "false" {
		commitCtx, cancel := context.WithTimeout(context.Background(), interruptFlushTimeout)
		if err := cl.CommitUncommittedOffsets(commitCtx); err != nil {
			fmt.Fprintf(stderr, "WARNING: commit offsets: %v\n", err)
		}
		cancel()
	}
	if !o.detailed {
		fmt.Fprintln(stdout, consumerTotalLine(o.dateFormat, start, end, nbytes, read, join.totalTime().Milliseconds()))
	}
	if o.printMetrics {
		tags := "{client-id=" + props["client.id"] + "}"
		rows := [][2]string{
			{"consumer-fetch-manager-metrics:bytes-consumed-total:" + tags, javafmt.Fixed(float64(nbytes), 3)},
			{"consumer-fetch-manager-metrics:records-consumed-total:" + tags, javafmt.Fixed(float64(read), 3)},
		}
		fmt.Fprintf(stdout, "\n%-*s %s\n", len(rows[1][0]), "Metric Name", "Value")
		for _, r := range rows {
			fmt.Fprintf(stdout, "%-*s : %s\n", len(rows[1][0]), r[0], r[1])
		}
	}
	return nil
}
