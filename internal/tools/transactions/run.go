package transactions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// commands are the subcommands, in Kafka's order of help.
var commands = []string{"list", "describe", "describe-producers", "abort", "find-hanging"}

// commandHelp is Kafka's help line of each command.
var commandHelp = map[string]string{
	"list":               "list transactions",
	"describe":           "describe the state of an active transactional-id",
	"describe-producers": "describe the states of active producers for a topic partition",
	"abort":              "abort a hanging transaction (requires administrative privileges)",
	"find-hanging":       "find hanging transactions",
}

// maxBatch is how many partitions find-hanging describes per request,
// as Kafka's MAX_BATCH_SIZE.
const maxBatch = 500

// Run is `silkworm transactions`: args are the global options, a command
// and its options. Output goes to stdout; errors are returned.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return run(ctx, args, stdout, time.Now)
}

func run(ctx context.Context, args []string, stdout io.Writer, now func() time.Time) error {
	global := cli.NewParser("transactions", "This tool is used to analyze the transactional state of producers in the cluster. It can be used to detect and recover from hanging transactions.")
	global.Output = stdout
	bootstrap := global.String("bootstrap-server", "host:port", "REQUIRED: A list of host/port pairs to use for establishing the connection to the Kafka cluster.", "")
	commandConfig := global.String("command-config", "FILE", "Property file containing configs to be passed to admin clients", "")
	// The command is the first argument that is neither an option nor the
	// value of one.
	split := len(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--bootstrap-server" || a == "--command-config" {
			i++
			continue
		}
		if slices.Contains(commands, a) {
			split = i
			break
		}
	}
	if err := global.Parse(args[:split]); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			fmt.Fprintln(stdout, "\nCommands (each with its own --help):")
			for _, c := range commands {
				fmt.Fprintf(stdout, "  %-20s %s\n", c, commandHelp[c])
			}
			return nil
		}
		return err
	}
	if rest := global.Args(); len(rest) > 0 {
		return fmt.Errorf("invalid choice: '%s' (choose from %s)", rest[0], quoted(commands))
	}
	if split == len(args) {
		return errors.New("too few arguments: a command is required, one of " + quoted(commands))
	}
	if *bootstrap == "" {
		return errors.New("argument --bootstrap-server is required")
	}
	name, sub := args[split], args[split+1:]
	p := cli.NewParser(name, "")
	p.Output = stdout
	var exec func(cl *kgo.Client, adm *kadm.Client) error
	switch name {
	case "list":
		duration := p.Int64("duration-filter", "DURATION_FILTER", "Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned", 0)
		pattern := p.String("transactional-id-pattern", "PATTERN", "Transactional id regular expression pattern to filter by", "")
		exec = func(cl *kgo.Client, _ *kadm.Client) error {
			d := int64(-1)
			if p.Has("duration-filter") {
				d = *duration
			}
			return list(ctx, cl, stdout, d, *pattern)
		}
	case "describe":
		id := p.String("transactional-id", "TRANSACTIONAL_ID", "transactional id", "")
		exec = func(_ *kgo.Client, adm *kadm.Client) error {
			if !p.Has("transactional-id") {
				return errors.New("argument --transactional-id is required")
			}
			return describe(ctx, adm, stdout, *id, now())
		}
	case "describe-producers":
		brokerID := p.Int("broker-id", "BROKER_ID", "optional broker id to describe the producer state on a specific replica", 0)
		topic := p.String("topic", "TOPIC", "topic name", "")
		partition := p.Int("partition", "PARTITION", "partition number", 0)
		exec = func(cl *kgo.Client, _ *kadm.Client) error {
			if err := p.Require("topic", "partition"); err != nil {
				return err
			}
			broker := optional(p.Has("broker-id"), int32(*brokerID))
			ps, err := describeProducers(ctx, cl, broker, *topic, int32(*partition))
			if err != nil {
				clause := "leader"
				if broker != nil {
					clause = fmt.Sprintf("broker %d", *broker)
				}
				return fmt.Errorf("Failed to describe producers for partition %s-%d on %s: %s. Enable debug logging for additional detail.", *topic, *partition, clause, message(err))
			}
			printTable(stdout, producersHeaders, producerRows(ps))
			return nil
		}
	case "abort":
		topic := p.String("topic", "TOPIC", "topic name", "")
		partition := p.Int("partition", "PARTITION", "partition number", 0)
		startOffset := p.Int64("start-offset", "START_OFFSET", "start offset of the transaction to abort", 0)
		producerID := p.Int64("producer-id", "PRODUCER_ID", "producer id", 0)
		producerEpoch := p.Int("producer-epoch", "PRODUCER_EPOCH", "producer epoch", 0)
		coordinatorEpoch := p.Int("coordinator-epoch", "COORDINATOR_EPOCH", "coordinator epoch", 0)
		exec = func(cl *kgo.Client, adm *kadm.Client) error {
			if err := p.Require("topic", "partition"); err != nil {
				return err
			}
			spec := abortSpec{topic: *topic, partition: int32(*partition)}
			switch {
			case p.Has("start-offset"):
				ps, err := describeProducers(ctx, cl, nil, *topic, int32(*partition))
				if err != nil {
					return fmt.Errorf("Failed to validate producer state for partition %s-%d: %s. Enable debug logging for additional detail.", *topic, *partition, message(err))
				}
				i := slices.IndexFunc(ps, func(p producer) bool { return p.CurrentTxnStartOffset == *startOffset })
				if i < 0 {
					return fmt.Errorf("Could not find any open transactions starting at offset %d on partition %s-%d", *startOffset, *topic, *partition)
				}
				spec.producerID, spec.producerEpoch, spec.coordinatorEpoch = ps[i].ProducerID, int16(ps[i].ProducerEpoch), max(ps[i].CoordinatorEpoch, 0)
			case p.Has("producer-id"):
				if !p.Has("producer-epoch") {
					return errors.New("Missing required argument --producer-epoch")
				}
				if !p.Has("coordinator-epoch") {
					return errors.New("Missing required argument --coordinator-epoch")
				}
				// A transaction of a new producer id that hung before its
				// first marker shows coordinator epoch -1: 0 is at most
				// any real one.
				spec.producerID, spec.producerEpoch, spec.coordinatorEpoch = *producerID, int16(*producerEpoch), max(int32(*coordinatorEpoch), 0)
			default:
				return errors.New("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
			}
			return abort(ctx, adm, spec)
		}
	case "find-hanging":
		brokerID := p.Int("broker-id", "BROKER_ID", "broker id to search for hanging transactions", 0)
		maxTimeout := p.Int("max-transaction-timeout", "MAX_TRANSACTION_TIMEOUT", "maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)", 15)
		topic := p.String("topic", "TOPIC", "topic name to limit search to (required if --partition is specified)", "")
		partition := p.Int("partition", "PARTITION", "partition number", 0)
		exec = func(cl *kgo.Client, adm *kadm.Client) error {
			if !p.Has("topic") && !p.Has("broker-id") {
				return errors.New("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search")
			}
			if p.Has("partition") && !p.Has("topic") {
				return errors.New("The --partition argument requires --topic to be provided")
			}
			h := hangingSearch{cl: cl, adm: adm, broker: optional(p.Has("broker-id"), int32(*brokerID)),
				maxTimeout: time.Duration(*maxTimeout) * time.Minute, now: now}
			if p.Has("topic") {
				h.topic = topic
			}
			if p.Has("partition") {
				h.partition = optional(true, int32(*partition))
			}
			found, err := h.find(ctx)
			if err != nil {
				return err
			}
			printTable(stdout, hangingHeaders, hangingRows(found, now()))
			return nil
		}
	}
	if err := p.Parse(sub); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if len(p.Args()) > 0 {
		return fmt.Errorf("unrecognized arguments: '%s'", p.Args()[0])
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	return exec(cl, adm)
}

func quoted(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += "'" + n + "'"
	}
	return out
}

func optional[T any](ok bool, v T) *T {
	if !ok {
		return nil
	}
	return &v
}

// message is an error's text as Kafka's exception message shows it: a
// Kafka error's description.
func message(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Description
	}
	return err.Error()
}

// list prints the transactions of every broker.
func list(ctx context.Context, cl *kgo.Client, w io.Writer, duration int64, pattern string) error {
	req := kmsg.NewPtrListTransactionsRequest()
	req.DurationFilterMillis = duration
	if pattern != "" {
		req.TransactionalIDPattern = &pattern
	}
	var all []kadm.ListedTransaction
	for _, shard := range cl.RequestSharded(ctx, req) {
		err := shard.Err
		if err == nil {
			err = kerr.ErrorForCode(shard.Resp.(*kmsg.ListTransactionsResponse).ErrorCode)
		}
		if err != nil {
			return fmt.Errorf("Failed to list transactions: %s. Enable debug logging for additional detail.", message(err))
		}
		for _, s := range shard.Resp.(*kmsg.ListTransactionsResponse).TransactionStates {
			all = append(all, kadm.ListedTransaction{Coordinator: shard.Meta.NodeID, TxnID: s.TransactionalID,
				ProducerID: s.ProducerID, State: s.TransactionState})
		}
	}
	printTable(w, listHeaders, listRows(all))
	return nil
}

// describe prints one transactional id as its coordinator describes it.
func describe(ctx context.Context, adm *kadm.Client, w io.Writer, id string, now time.Time) error {
	fail := func(err error) error {
		return fmt.Errorf("Failed to describe transaction state of transactional-id `%s`: %s. Enable debug logging for additional detail.", id, message(err))
	}
	described, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		return fail(err)
	}
	d, ok := described[id]
	if !ok {
		return fail(errors.New("no answer for the transactional id"))
	}
	if d.Err != nil {
		return fail(d.Err)
	}
	printTable(w, describeHeaders, [][]string{describeRow(d, now)})
	return nil
}

// describeProducers returns the producers of one partition, from broker
// (any replica) or, when nil, from its leader.
func describeProducers(ctx context.Context, cl *kgo.Client, broker *int32, topic string, partition int32) ([]producer, error) {
	got, err := describeProducersOf(ctx, cl, broker, map[string][]int32{topic: {partition}})
	if err != nil {
		return nil, err
	}
	r := got[topicPartition{topic, partition}]
	return r.producers, r.err
}

type topicPartition struct {
	topic     string
	partition int32
}

type partitionProducers struct {
	producers []producer
	err       error
}

// describeProducersOf describes the producers of parts, on broker or on
// each partition's leader.
func describeProducersOf(ctx context.Context, cl *kgo.Client, broker *int32, parts map[string][]int32) (map[topicPartition]partitionProducers, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	for topic, ps := range parts {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, ps
		req.Topics = append(req.Topics, rt)
	}
	var resps []*kmsg.DescribeProducersResponse
	if broker != nil {
		resp, err := req.RequestWith(ctx, cl.Broker(int(*broker)))
		if err != nil {
			return nil, err
		}
		resps = append(resps, resp)
	} else {
		for _, shard := range cl.RequestSharded(ctx, req) {
			if shard.Err != nil {
				return nil, shard.Err
			}
			resps = append(resps, shard.Resp.(*kmsg.DescribeProducersResponse))
		}
	}
	out := map[topicPartition]partitionProducers{}
	for _, resp := range resps {
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				var pp partitionProducers
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					pp.err = err
					if rp.ErrorMessage != nil && *rp.ErrorMessage != "" {
						pp.err = fmt.Errorf("%w: %s", err, *rp.ErrorMessage)
					}
				}
				for _, ap := range rp.ActiveProducers {
					pp.producers = append(pp.producers, producer{ProducerID: ap.ProducerID, ProducerEpoch: ap.ProducerEpoch,
						LastSequence: ap.LastSequence, LastTimestamp: ap.LastTimestamp, CoordinatorEpoch: ap.CoordinatorEpoch,
						CurrentTxnStartOffset: ap.CurrentTxnStartOffset})
				}
				out[topicPartition{rt.Topic, rp.Partition}] = pp
			}
		}
	}
	return out, nil
}

// abortSpec is Kafka's AbortTransactionSpec.
type abortSpec struct {
	topic            string
	partition        int32
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
}

func (s abortSpec) String() string {
	return fmt.Sprintf("AbortTransactionSpec(topicPartition=%s-%d, producerId=%d, producerEpoch=%d, coordinatorEpoch=%d)",
		s.topic, s.partition, s.producerID, s.producerEpoch, s.coordinatorEpoch)
}

// abort writes an ABORT marker for the spec's producer to its partition,
// as Kafka's Admin.abortTransaction does (WriteTxnMarkers to the leader).
func abort(ctx context.Context, adm *kadm.Client, s abortSpec) error {
	fail := func(err error) error {
		return fmt.Errorf("Failed to abort transaction %s: %s. Enable debug logging for additional detail.", s, message(err))
	}
	resps, err := adm.WriteTxnMarkers(ctx, kadm.TxnMarkers{ProducerID: s.producerID, ProducerEpoch: s.producerEpoch,
		CoordinatorEpoch: s.coordinatorEpoch, Topics: kadm.TopicsSet{s.topic: {s.partition: {}}}})
	if err != nil {
		return fail(err)
	}
	for _, r := range resps {
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.Err != nil {
					return fail(p.Err)
				}
			}
		}
	}
	return nil
}

// hangingSearch is one run of find-hanging.
type hangingSearch struct {
	cl         *kgo.Client
	adm        *kadm.Client
	broker     *int32
	topic      *string
	partition  *int32
	maxTimeout time.Duration
	now        func() time.Time
}

// find returns the hanging transactions, as Kafka's
// FindHangingTransactionsCommand decides.
func (h hangingSearch) find(ctx context.Context) ([]openTxn, error) {
	parts, err := h.partitions(ctx)
	if err != nil {
		return nil, err
	}
	var candidates []openTxn
	for start := 0; start < len(parts); start += maxBatch {
		batch := parts[start:min(start+maxBatch, len(parts))]
		req := map[string][]int32{}
		for _, tp := range batch {
			req[tp.topic] = append(req[tp.topic], tp.partition)
		}
		got, err := describeProducersOf(ctx, h.cl, h.broker, req)
		if err == nil {
			for _, tp := range batch {
				if r, ok := got[tp]; ok && r.err != nil {
					err = r.err
					break
				}
			}
		}
		if err != nil {
			broker := "null"
			if h.broker != nil {
				broker = fmt.Sprint(*h.broker)
			}
			return nil, fmt.Errorf("Failed to describe producers for %d partitions on broker %s: %s. Enable debug logging for additional detail.", len(batch), broker, message(err))
		}
		now := h.now().UnixMilli()
		for _, tp := range batch {
			for _, p := range got[tp].producers {
				if p.CurrentTxnStartOffset >= 0 && now-p.LastTimestamp > h.maxTimeout.Milliseconds() {
					candidates = append(candidates, openTxn{Topic: tp.topic, Partition: tp.partition, producer: p})
				}
			}
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	var pids []int64
	for _, c := range candidates {
		if !slices.Contains(pids, c.ProducerID) {
			pids = append(pids, c.ProducerID)
		}
	}
	listed, err := h.adm.ListTransactions(ctx, pids, nil)
	if err != nil {
		return nil, fmt.Errorf("Failed to list transactions for %d producer ids: %s. Enable debug logging for additional detail.", len(pids), message(err))
	}
	ids := map[int64]string{}
	var txnIDs []string
	for _, l := range listed {
		ids[l.ProducerID] = l.TxnID
		txnIDs = append(txnIDs, l.TxnID)
	}
	descriptions := map[string]*kadm.DescribedTransaction{}
	if len(txnIDs) > 0 {
		described, err := h.adm.DescribeTransactions(ctx, txnIDs...)
		if err != nil {
			return nil, fmt.Errorf("Failed to describe %d transactions: %s. Enable debug logging for additional detail.", len(txnIDs), message(err))
		}
		for _, id := range txnIDs {
			d, ok := described[id]
			switch {
			case !ok || errors.Is(d.Err, kerr.TransactionalIDNotFound):
				descriptions[id] = nil
			case d.Err != nil:
				return nil, fmt.Errorf("Failed to describe %d transactions: %s. Enable debug logging for additional detail.", len(txnIDs), message(d.Err))
			default:
				descriptions[id] = &d
			}
		}
	}
	var hanging []openTxn
	for _, c := range candidates {
		id, known := ids[c.ProducerID]
		d := descriptions[id]
		if !known || d == nil {
			hanging = append(hanging, c)
			continue
		}
		// The coordinator still expects to write a marker to the
		// partitions of its ongoing (or preparing) transaction.
		if _, ok := d.Topics[c.Topic][c.Partition]; !ok {
			hanging = append(hanging, c)
		}
	}
	return hanging, nil
}

// partitions lists the partitions to search: the one given, the topic's,
// or every topic's (internal ones included); with a broker, only those
// it holds a replica of.
func (h hangingSearch) partitions(ctx context.Context) ([]topicPartition, error) {
	if h.topic != nil && h.partition != nil {
		return []topicPartition{{*h.topic, *h.partition}}, nil
	}
	var topics []string
	if h.topic != nil {
		topics = []string{*h.topic}
	} else {
		all, err := h.adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return nil, fmt.Errorf("Failed to list topics: %s. Enable debug logging for additional detail.", message(err))
		}
		topics = all.Names()
	}
	var out []topicPartition
	for start := 0; start < len(topics); start += maxBatch {
		batch := topics[start:min(start+maxBatch, len(topics))]
		described, err := h.adm.ListTopicsWithInternal(ctx, batch...)
		if err == nil {
			err = described.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("Failed to describe %d topics: %s. Enable debug logging for additional detail.", len(batch), message(err))
		}
		for _, td := range described.Sorted() {
			for _, pd := range td.Partitions.Sorted() {
				if h.broker == nil || slices.Contains(pd.Replicas, *h.broker) {
					out = append(out, topicPartition{td.Topic, pd.Partition})
				}
			}
		}
	}
	return out, nil
}
