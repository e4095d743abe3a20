package verifiable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

const consumerDescription = "This tool consumes messages from a specific topic and emits consumer events " +
	"(e.g. group rebalances, received messages, and offsets committed) as JSON objects to STDOUT."

// maxPollRecords is the Java consumer's max.poll.records default: the most
// records one poll returns.
const maxPollRecords = 500

// commitTimeout bounds a synchronous commit, as the Java consumer's
// default.api.timeout.ms does.
const commitTimeout = 60 * time.Second

// consumerOptions is a parsed verifiable-consumer command line.
type consumerOptions struct {
	topic       string
	maxMessages int64 // < 0: until stopped
	autoCommit  bool
	verbose     bool
	props       cli.Props
	groupOpts   []kgo.Opt // the group protocol and its balancers
}

func parseConsumerOptions(args []string, stdout io.Writer) (*consumerOptions, error) {
	p := cli.NewParser("verifiable-consumer", consumerDescription)
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "HOST1:PORT1[,HOST2:PORT2[...]]", "REQUIRED: The server(s) to connect to. "+
		"Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,...", "")
	topic := p.String("topic", "TOPIC", "REQUIRED: Consumes messages from this topic.", "")
	protocol := p.Choice("group-protocol", []string{"classic", "consumer"}, "Group protocol (must be one of CLASSIC, CONSUMER)", "classic")
	remoteAssignor := p.String("group-remote-assignor", "GROUP_REMOTE_ASSIGNOR", "Group remote assignor (uniform or range); only used if the group protocol is CONSUMER", "")
	groupID := p.String("group-id", "GROUP_ID", "REQUIRED: The groupId shared among members of the consumer group", "")
	instanceID := p.String("group-instance-id", "GROUP_INSTANCE_ID", "A unique identifier of the consumer instance", "")
	maxMessages := p.Int("max-messages", "MAX-MESSAGES", "Consume this many messages. If -1 (the default), the consumer will consume until the process is killed externally", -1)
	sessionTimeout := p.Int("session-timeout", "TIMEOUT_MS", "Set the consumer's session timeout", 30000)
	verbose := p.Flag("verbose", "Enable to log individual consumed records")
	autoCommit := p.Flag("enable-autocommit", "Enable offset auto-commit on consumer")
	resetPolicy := p.String("reset-policy", "RESET_POLICY", "Set reset policy (must be either 'earliest', 'latest', or 'none'", "earliest")
	strategy := p.String("assignment-strategy", "ASSIGNMENT_STRATEGY", "Set assignment strategy (e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor); "+
		"only used if the group protocol is CLASSIC", "org.apache.kafka.clients.consumer.RangeAssignor")
	config := p.String("consumer.config", "CONFIG_FILE", "(DEPRECATED) Consumer config properties file (config options shared with command line parameters will be overridden). Use --command-config instead.", "")
	commandConfig := p.String("command-config", "CONFIG_FILE", "Config properties file (config options shared with command line parameters will be overridden).", "")
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("unrecognized arguments: '%s'", p.Args()[0])
	}
	if err := p.Require("bootstrap-server", "topic", "group-id"); err != nil {
		return nil, err
	}
	o := &consumerOptions{topic: *topic, maxMessages: int64(*maxMessages), autoCommit: *autoCommit, verbose: *verbose}
	props := cli.Props{}
	if *config != "" && *commandConfig != "" {
		return nil, errors.New("Options --consumer.config and --command-config are mutually exclusive.")
	}
	if *commandConfig != "" {
		config = commandConfig
	}
	if *config != "" {
		file, err := cli.LoadProps(*config)
		if err != nil {
			return nil, err
		}
		props.Merge(file)
	}
	// The group protocol is this tool's to set up: the client properties
	// know only the classic one.
	proto := strings.ToLower(*protocol)
	if v, ok := props["group.protocol"]; ok && !p.Has("group-protocol") {
		proto = strings.ToLower(strings.TrimSpace(v))
	}
	assignor := *remoteAssignor
	if v, ok := props["group.remote.assignor"]; ok && !p.Has("group-remote-assignor") {
		assignor = strings.TrimSpace(v)
	}
	delete(props, "group.protocol")
	delete(props, "group.remote.assignor")
	switch proto {
	case "classic":
		props["partition.assignment.strategy"] = *strategy
		props["session.timeout.ms"] = fmt.Sprint(*sessionTimeout)
	case "consumer":
		// KIP-848: the broker assigns. franz-go names the server-side
		// assignor after its balancer: sticky is "uniform".
		delete(props, "partition.assignment.strategy")
		delete(props, "session.timeout.ms")
		var b kgo.GroupBalancer
		switch strings.ToLower(assignor) {
		case "", "uniform", "org.apache.kafka.coordinator.group.assignor.uniformassignor":
			b = kgo.StickyBalancer()
		case "range", "org.apache.kafka.coordinator.group.assignor.rangeassignor":
			b = kgo.RangeBalancer()
		default:
			return nil, fmt.Errorf("unknown group remote assignor %q; known: uniform, range", assignor)
		}
		o.groupOpts = append(o.groupOpts, kgo.ServerSideBalancer(), kgo.Balancers(b))
	default:
		return nil, fmt.Errorf("invalid value %q for configuration group.protocol: expected one of classic, consumer", proto)
	}
	props["group.id"] = *groupID
	if p.Has("group-instance-id") {
		props["group.instance.id"] = *instanceID
	}
	props["bootstrap.servers"] = *bootstrap
	props["enable.auto.commit"] = fmt.Sprint(*autoCommit)
	props["auto.offset.reset"] = *resetPolicy
	o.props = props
	return o, nil
}

// Consumer runs verifiable-consumer (Kafka's VerifiableConsumer) with args,
// writing its JSON events to stdout and errors to stderr. It returns nil
// after --help. Cancelling ctx is Kafka's shutdown hook: the consumer
// stops polling, closes (leaving the group) and prints shutdown_complete,
// as it does after --max-messages records.
func Consumer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseConsumerOptions(args, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return runConsumer(ctx, o, newPrinter(stdout, nil), stderr)
}

// consumerRun is one run's count of consumed records and its printer. Its
// rebalance callbacks run on franz-go's goroutines; the rest runs on the
// poll loop's.
type consumerRun struct {
	o        *consumerOptions
	out      *printer
	consumed int64
}

func (r *consumerRun) finished() bool { return r.o.maxMessages >= 0 && r.consumed >= r.o.maxMessages }

func runConsumer(ctx context.Context, o *consumerOptions, out *printer, stderr io.Writer) error {
	r := &consumerRun{o: o, out: out}
	out.print(&startupComplete{named("startup_complete")})
	opts := append([]kgo.Opt{
		kgo.ConsumeTopics(o.topic),
		kgo.BlockRebalanceOnPoll(), // callbacks run between polls, as in Java's poll
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(&partitionsEvent{header: named("partitions_assigned"), Partitions: sortedPartitions(m)})
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(&partitionsEvent{header: named("partitions_revoked"), Partitions: sortedPartitions(m)})
		}),
		// Java's onPartitionsLost defaults to onPartitionsRevoked.
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			out.print(&partitionsEvent{header: named("partitions_revoked"), Partitions: sortedPartitions(m)})
		}),
	}, o.groupOpts...)
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	var noOffset atomic.Pointer[string]
	if strings.EqualFold(o.props["auto.offset.reset"], "none") {
		// franz-go starts a partition without a committed offset from
		// the beginning even with no reset policy; the Java consumer's
		// poll throws instead, which ends Kafka's tool.
		opts = append(opts, kgo.OnOffsetsFetched(func(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
			if missing := uncommitted(resp); len(missing) > 0 {
				msg := "Undefined offset with no reset policy for partitions: [" + strings.Join(missing, ", ") + "]"
				noOffset.CompareAndSwap(nil, &msg)
				stopPolling()
			}
			return nil
		}))
	}
	cl, err := cli.NewClient(ctx, cli.Consumer, o.props, opts...)
	if err != nil {
		out.print(&shutdownComplete{named("shutdown_complete")})
		return err
	}
	for !r.finished() {
		fetches := cl.PollRecords(pollCtx, maxPollRecords)
		if msg := noOffset.Load(); msg != nil {
			fmt.Fprintf(stderr, "ERROR Error during processing, terminating consumer process: %s\n", *msg)
			break
		}
		if pollCtx.Err() != nil || fetches.IsClientClosed() {
			break
		}
		var fatal error
		fetches.EachError(func(t string, p int32, err error) {
			switch {
			case errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
			case fatalFetchError(err):
				if fatal == nil {
					fatal = fmt.Errorf("%s-%d: %w", t, p, err)
				}
			default:
				fmt.Fprintf(stderr, "WARN Error consuming %s-%d: %v\n", t, p, err)
			}
		})
		if fatal != nil {
			// Kafka's tool logs what poll threw and stops.
			fmt.Fprintf(stderr, "ERROR Error during processing, terminating consumer process: %v\n", fatal)
			break
		}
		var parts []partitionRecords
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) > 0 {
				parts = append(parts, partitionRecords{topic: p.Topic, partition: p.Partition, records: p.Records})
			}
		})
		if len(parts) > 0 {
			offsets := r.onRecords(parts)
			if !o.autoCommit {
				r.commitSync(cl, offsets)
			}
		}
		cl.AllowRebalance()
	}
	cl.AllowRebalance()
	cl.Close()
	out.print(&shutdownComplete{named("shutdown_complete")})
	return nil
}

// uncommitted lists the partitions ("topic-0") an OffsetFetch response
// has no committed offset for.
func uncommitted(resp *kmsg.OffsetFetchResponse) []string {
	var out []string
	seen := map[string]bool{} // franz-go fills both forms of the response
	add := func(topic string, p int32, offset int64) {
		if tp := fmt.Sprintf("%s-%d", topic, p); offset < 0 && !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			add(t.Topic, p.Partition, p.Offset)
		}
	}
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.Offset)
			}
		}
	}
	sort.Strings(out)
	return out
}

// fatalFetchError reports whether a fetch error is one that Java's poll
// throws (an authorization failure, an offset out of range with no reset
// policy), which ends Kafka's tool, rather than one the client retries or
// only reports (data loss).
func fatalFetchError(err error) bool {
	var loss *kgo.ErrDataLoss
	if errors.As(err, &loss) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return !ke.Retriable
	}
	return true
}

// partitionRecords are the records one poll returned for one partition,
// in offset order.
type partitionRecords struct {
	topic     string
	partition int32
	records   []*kgo.Record
}

// onRecords prints records_consumed for one poll (and record_data for
// each record with --verbose), counting at most up to --max-messages, and
// returns the offsets to commit: one past the last record counted in each
// partition.
func (r *consumerRun) onRecords(parts []partitionRecords) []commitData {
	var (
		total     int64
		summaries = []recordSetSummary{}
		offsets   []commitData
	)
	for _, p := range parts {
		total += int64(len(p.records))
	}
	for _, p := range parts {
		recs := p.records
		if r.o.maxMessages >= 0 && r.consumed+int64(len(recs)) > r.o.maxMessages {
			recs = recs[:r.o.maxMessages-r.consumed]
		}
		if len(recs) == 0 {
			continue
		}
		minOffset, maxOffset := recs[0].Offset, recs[len(recs)-1].Offset
		offsets = append(offsets, commitData{Topic: p.topic, Partition: p.partition, Offset: maxOffset + 1})
		summaries = append(summaries, recordSetSummary{Topic: p.topic, Partition: p.partition,
			Count: int64(len(recs)), MinOffset: minOffset, MaxOffset: maxOffset})
		if r.o.verbose {
			for _, rec := range recs {
				r.out.print(&recordData{header: named("record_data"), Key: stringOrNull(rec.Key), Value: stringOrNull(rec.Value),
					Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset})
			}
		}
		r.consumed += int64(len(recs))
		if r.finished() {
			break
		}
	}
	r.out.print(&recordsConsumed{header: named("records_consumed"), Count: total, Partitions: summaries})
	return offsets
}

// commitSync commits offsets and prints offsets_committed with the
// outcome.
func (r *consumerRun) commitSync(cl *kgo.Client, offsets []commitData) {
	m := map[string]map[int32]kgo.EpochOffset{}
	for _, c := range offsets {
		if m[c.Topic] == nil {
			m[c.Topic] = map[int32]kgo.EpochOffset{}
		}
		m[c.Topic][c.Partition] = kgo.EpochOffset{Epoch: -1, Offset: c.Offset}
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	var commitErr error
	cl.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && commitErr == nil {
					commitErr = e
				}
			}
		}
	})
	sort.Slice(offsets, func(i, j int) bool {
		if offsets[i].Topic != offsets[j].Topic {
			return offsets[i].Topic < offsets[j].Topic
		}
		return offsets[i].Partition < offsets[j].Partition
	})
	r.out.print(committedEvent(offsets, commitErr))
}

func committedEvent(offsets []commitData, err error) *offsetsCommitted {
	ev := &offsetsCommitted{header: named("offsets_committed"), Offsets: offsets, Success: err == nil}
	if ev.Offsets == nil {
		ev.Offsets = []commitData{}
	}
	if err != nil {
		_, msg := javaException(err)
		ev.Error = &msg
	}
	return ev
}

func stringOrNull(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// sortedPartitions lists the partitions of m by topic, then partition.
func sortedPartitions(m map[string][]int32) []topicPartition {
	out := []topicPartition{}
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, topicPartition{Topic: t, Partition: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}
