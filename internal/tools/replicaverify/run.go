package replicaverify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

const description = "Validate that all replicas for a set of topics have the same data."

// debuggingConsumerID is Kafka's FetchRequest.DEBUGGING_CONSUMER_ID, the
// replica id Kafka's tool fetches with.
const debuggingConsumerID = -2

// options is a parsed replica-verification command line.
type options struct {
	props          cli.Props
	include        *regexp.Regexp
	fetchSize      int32
	maxWait        time.Duration
	initialTime    int64
	reportInterval time.Duration
}

func parseOptions(args []string, stdout io.Writer) (*options, error) {
	p := cli.NewParser("replica-verification", description)
	p.Output = stdout
	brokerList := p.String("broker-list", "hostname:port,...,hostname:port", "REQUIRED: The list of hostname and port of the server to connect to.", "")
	bootstrap := p.String("bootstrap-server", "hostname:port,...,hostname:port", "The server(s) to connect to; the same as --broker-list.", "")
	commandConfig := p.String("command-config", "command config property file", "Property file containing configs to be passed to the client (security settings).", "")
	fetchSize := p.Int("fetch-size", "bytes", "The fetch size of each request.", 1048576)
	maxWait := p.Int("max-wait-ms", "ms", "The max amount of time each fetch request waits.", 1000)
	include := p.String("topics-include", "Java regex (String)", "List of topics to verify replica consistency.", ".*")
	initialTime := p.Int64("time", "timestamp/-1(latest)/-2(earliest)", "Timestamp for getting the initial offsets.", -1)
	reportInterval := p.Int64("report-interval-ms", "ms", "The reporting interval.", 30000)
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("found non-option argument %q", p.Args()[0])
	}
	servers := *brokerList
	if servers == "" {
		servers = *bootstrap
	}
	if servers == "" {
		return nil, p.Require("broker-list")
	}
	props, err := cli.LoadProps(*commandConfig)
	if err != nil {
		return nil, err
	}
	props["bootstrap.servers"] = servers
	re, err := includeRegexp(*include)
	if err != nil {
		return nil, err
	}
	if *fetchSize <= 0 {
		return nil, errors.New("--fetch-size must be greater than zero")
	}
	return &options{props: props, include: re, fetchSize: int32(*fetchSize), maxWait: time.Duration(*maxWait) * time.Millisecond,
		initialTime: *initialTime, reportInterval: time.Duration(*reportInterval) * time.Millisecond}, nil
}

// includeRegexp reads --topics-include as Kafka's TopicFilter.IncludeList:
// commas are alternatives, spaces and surrounding quotes are dropped, and
// the expression must match the whole topic name.
func includeRegexp(s string) (*regexp.Regexp, error) {
	expr := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), ",", "|"), " ", "")
	expr = strings.TrimRight(strings.TrimLeft(expr, `"'`), `"'`)
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, fmt.Errorf("%s is an invalid regex", s)
	}
	return re, nil
}

// Run runs replica-verification (Kafka's kafka-replica-verification.sh)
// with args, writing Kafka's lines to stdout and warnings to stderr, until
// ctx is cancelled (Ctrl-C), when it returns nil. It returns nil after
// --help, and an error when the replicas disagree on a batch's offsets (the
// line saying where is on stdout first) or when the cluster cannot be read.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return run(ctx, o, stdout, stderr, time.Now)
}

// replicaSet is what the tool learns from metadata: the partitions to
// verify, their replicas by broker, and the topic ids for Fetch v13+.
type replicaSet struct {
	partitions []topicPartition
	expected   map[topicPartition]int
	byBroker   map[int32][]topicPartition
	topicIDs   map[string][16]byte
	names      map[[16]byte]string
}

func run(ctx context.Context, o *options, stdout, stderr io.Writer, now func() time.Time) error {
	cl, err := cli.NewClient(ctx, cli.Admin, o.props)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	set, err := describe(ctx, adm, o.include)
	if err != nil {
		return err
	}
	initial, err := initialOffsets(ctx, adm, set, o.initialTime)
	if err != nil {
		return err
	}
	v := newVerifier(stdout, now, o.reportInterval, set.expected, initial)
	brokers := make([]int32, 0, len(set.byBroker))
	for b := range set.byBroker {
		brokers = append(brokers, b)
	}
	sort.Slice(brokers, func(i, j int) bool { return brokers[i] < brokers[j] })
	fmt.Fprintf(stdout, "%s: verification process is started\n", now().Format(dateLayout))

	warned := map[string]bool{}
	for ctx.Err() == nil {
		rounds := make([]brokerAnswer, len(brokers))
		var wg sync.WaitGroup
		for i, b := range brokers {
			wg.Go(func() { rounds[i] = fetchReplicas(ctx, cl, b, set, v, o) })
		}
		wg.Wait()
		if ctx.Err() != nil {
			return nil
		}
		for i, b := range brokers {
			for _, w := range rounds[i].warnings {
				if !warned[w] {
					warned[w] = true
					fmt.Fprintln(stderr, w)
				}
			}
			for _, tp := range set.byBroker[b] {
				f, ok := rounds[i].parts[tp]
				if !ok {
					f = fetched{highWatermark: -1}
				}
				v.add(tp, b, f)
			}
		}
		if err := v.verify(); err != nil {
			return err
		}
	}
	return nil
}

// describe lists the topics (internal ones too) that include matches and
// where their replicas are.
func describe(ctx context.Context, adm *kadm.Client, include *regexp.Regexp) (*replicaSet, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	set := &replicaSet{expected: map[topicPartition]int{}, byBroker: map[int32][]topicPartition{},
		topicIDs: map[string][16]byte{}, names: map[[16]byte]string{}}
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			return nil, fmt.Errorf("describe topic %s: %w", t.Topic, t.Err)
		}
		if !include.MatchString(t.Topic) {
			continue
		}
		set.topicIDs[t.Topic] = t.ID
		set.names[t.ID] = t.Topic
		for _, p := range t.Partitions.Sorted() {
			tp := topicPartition{t.Topic, p.Partition}
			set.partitions = append(set.partitions, tp)
			set.expected[tp] = len(p.Replicas)
			for _, r := range p.Replicas {
				set.byBroker[r] = append(set.byBroker[r], tp)
			}
		}
	}
	if len(set.partitions) == 0 {
		return nil, errors.New("No topics found. [topics-include] if specified, is either filtering out all topics or there is no topic.")
	}
	return set, nil
}

// initialOffsets are where verification starts: the high watermarks
// (-1), the log start offsets (-2) or the offsets for a timestamp.
func initialOffsets(ctx context.Context, adm *kadm.Client, set *replicaSet, at int64) (map[topicPartition]int64, error) {
	topics := make([]string, 0, len(set.topicIDs))
	for t := range set.topicIDs {
		topics = append(topics, t)
	}
	var (
		listed kadm.ListedOffsets
		err    error
	)
	switch at {
	case -1:
		listed, err = adm.ListEndOffsets(ctx, topics...)
	case -2:
		listed, err = adm.ListStartOffsets(ctx, topics...)
	default:
		listed, err = adm.ListOffsetsAfterMilli(ctx, at, topics...)
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list initial offsets: %w", err)
	}
	out := map[topicPartition]int64{}
	listed.Each(func(l kadm.ListedOffset) { out[topicPartition{l.Topic, l.Partition}] = l.Offset })
	return out, nil
}

// brokerAnswer is one broker's answer in a round, and the warnings about
// the partitions it answered with an error.
type brokerAnswer struct {
	parts    map[topicPartition]fetched
	warnings []string
}

// fetchReplicas sends one Fetch for broker's replicas, from the verified
// offsets, as Kafka's debugging consumer. A failed request answers
// nothing, so the round verifies nothing new for these partitions.
func fetchReplicas(ctx context.Context, cl *kgo.Client, broker int32, set *replicaSet, v *verifier, o *options) brokerAnswer {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = debuggingConsumerID
	req.ReplicaState.ID = debuggingConsumerID
	req.ReplicaState.Epoch = -1
	req.MaxWaitMillis = int32(o.maxWait.Milliseconds())
	req.MinBytes = 1
	req.MaxBytes = 1<<31 - 1
	req.SessionID = 0
	req.SessionEpoch = -1
	byTopic := map[string]int{}
	for _, tp := range set.byBroker[broker] {
		i, ok := byTopic[tp.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[tp.topic] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic = tp.topic
			t.TopicID = set.topicIDs[tp.topic]
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = tp.partition
		p.CurrentLeaderEpoch = -1
		p.FetchOffset = v.offset(tp)
		p.LogStartOffset = 0
		p.PartitionMaxBytes = o.fetchSize
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	ans := brokerAnswer{parts: map[topicPartition]fetched{}}
	// The request waits up to max-wait-ms on the broker; allow for the
	// round trip on top.
	rctx, cancel := context.WithTimeout(ctx, o.maxWait+30*time.Second)
	defer cancel()
	kresp, err := cl.Broker(int(broker)).Request(rctx, req)
	if err != nil {
		if ctx.Err() == nil {
			ans.warnings = append(ans.warnings, fmt.Sprintf("WARN Fetch from broker %d failed: %v", broker, err))
		}
		return ans
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		ans.warnings = append(ans.warnings, fmt.Sprintf("WARN Fetch from broker %d failed: %v", broker, err))
		return ans
	}
	for _, t := range resp.Topics {
		name := t.Topic
		if name == "" {
			name = set.names[t.TopicID]
		}
		for _, p := range t.Partitions {
			tp := topicPartition{name, p.Partition}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				ans.warnings = append(ans.warnings, fmt.Sprintf("WARN Broker %d answered the fetch of replica %s with %v", broker, tp, err))
				ans.parts[tp] = fetched{highWatermark: -1}
				continue
			}
			ans.parts[tp] = fetched{highWatermark: p.HighWatermark, batches: p.RecordBatches}
		}
	}
	return ans
}
