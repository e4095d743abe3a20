package verifiable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

const producerDescription = "This tool produces increasing integers to the specified topic and prints JSON metadata " +
	"to stdout on each \"send\" request, making externally visible which messages have been acked and which have not."

// producerOptions is a parsed verifiable-producer command line.
type producerOptions struct {
	topic        string
	maxMessages  int64 // < 0: until stopped
	throughput   int   // < 0: unthrottled
	valuePrefix  *int
	repeatingKey *int
	createTime   *int64
	props        cli.Props
}

func parseProducerOptions(args []string, stdout io.Writer) (*producerOptions, error) {
	p := cli.NewParser("verifiable-producer", producerDescription)
	p.Output = stdout
	topic := p.String("topic", "TOPIC", "REQUIRED: Produce messages to this topic.", "")
	bootstrap := p.String("bootstrap-server", "HOST1:PORT1[,HOST2:PORT2[...]]", "REQUIRED: The server(s) to connect to. "+
		"Comma-separated list of Kafka brokers in the form HOST1:PORT1,HOST2:PORT2,...", "")
	maxMessages := p.Int("max-messages", "MAX-MESSAGES", "Produce this many messages. If -1, produce messages until the process is killed externally.", -1)
	throughput := p.Int("throughput", "THROUGHPUT", "If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec.", -1)
	acks := p.Choice("acks", []string{"0", "1", "-1"}, "Acks required on each produced message. See Kafka docs on acks for details.", "-1")
	config := p.String("producer.config", "CONFIG_FILE", "(DEPRECATED) Producer config properties file. Use --command-config instead.", "")
	commandConfig := p.String("command-config", "CONFIG_FILE", "Config properties file (config options shared with command line parameters will be overridden).", "")
	createTime := p.Int64("message-create-time", "CREATETIME", "Send messages with creation time starting at the arguments value, in milliseconds since epoch", -1)
	valuePrefix := p.Int("value-prefix", "VALUE-PREFIX", "If specified, each produced value will have this prefix with a dot separator", 0)
	repeatingKeys := p.Int("repeating-keys", "REPEATING-KEYS", "If specified, each produced record will have a key starting at 0 increment by 1 "+
		"up to the number specified (exclusive), then the key is set to 0 again", 0)
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("unrecognized arguments: '%s'", p.Args()[0])
	}
	if err := p.Require("topic", "bootstrap-server"); err != nil {
		return nil, err
	}
	o := &producerOptions{topic: *topic, maxMessages: int64(*maxMessages), throughput: *throughput}
	if p.Has("value-prefix") {
		o.valuePrefix = valuePrefix
	}
	if p.Has("repeating-keys") {
		if *repeatingKeys <= 0 {
			return nil, errors.New("--repeating-keys must be greater than zero")
		}
		o.repeatingKey = repeatingKeys
	}
	if *createTime != -1 {
		o.createTime = createTime
	}
	props := cli.Props{
		"bootstrap.servers": *bootstrap,
		"acks":              *acks,
		"retries":           "0", // no producer retries, as Kafka's tool
	}
	if *config != "" && *commandConfig != "" {
		return nil, errors.New("Options --producer.config and --command-config are mutually exclusive.")
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
	// The Java producer turns idempotence off when it was not asked for
	// and retries is 0.
	if _, set := props["enable.idempotence"]; !set && props["retries"] == "0" {
		props["enable.idempotence"] = "false"
	}
	o.props = props
	return o, nil
}

// Producer runs verifiable-producer (Kafka's VerifiableProducer) with args,
// writing its JSON events to stdout; a failed record is an event too, so
// nothing goes to stderr. It returns
// nil after --help. Cancelling ctx is Kafka's shutdown hook: sending stops,
// the records in flight are flushed, and shutdown_complete and tool_data
// are printed, as they are after --max-messages.
func Producer(ctx context.Context, args []string, stdout, _ io.Writer) error {
	o, err := parseProducerOptions(args, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cl, err := cli.NewClient(ctx, cli.Producer, o.props, kgo.AllowAutoTopicCreation())
	if err != nil {
		return err
	}
	awaitLeaders(ctx, cl, o.topic)
	return runProducer(ctx, cl, o, newPrinter(stdout, nil))
}

// maxBlock is the Java producer's max.block.ms default: how long a send
// waits for the topic's metadata.
const maxBlock = 60 * time.Second

// awaitLeaders waits, up to maxBlock, until every partition of topic has a
// leader, asking for the topic to be created if the cluster creates topics
// on demand. The Java producer waits so for metadata before it sends, and
// a missing leader then is no record error; franz-go with retries=0 would
// fail the first records instead. If the wait ends first, the records'
// errors tell why.
func awaitLeaders(ctx context.Context, cl *kgo.Client, topic string) {
	ctx, cancel := context.WithTimeout(ctx, maxBlock)
	defer cancel()
	for {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		req.AllowAutoTopicCreation = true
		if resp, err := req.RequestWith(ctx, cl); err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
			ready := len(resp.Topics[0].Partitions) > 0
			for _, p := range resp.Topics[0].Partitions {
				ready = ready && p.ErrorCode == 0 && p.Leader >= 0
			}
			if ready {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sender is what the producer needs of a client; *kgo.Client is one, a
// test gives a fake.
type sender interface {
	Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error))
	Flush(ctx context.Context) error
	Close()
}

// producerRun is the state of one run: what was sent and acknowledged.
// The send loop owns it; produce callbacks, on franz-go's goroutines, touch
// only acked and the printer.
type producerRun struct {
	o     *producerOptions
	out   *printer
	cl    sender
	keyN  int
	sent  int64
	acked atomic.Int64 // counted by produce callbacks
}

// runProducer sends, prints and closes cl.
func runProducer(ctx context.Context, cl sender, o *producerOptions, out *printer) error {
	r := &producerRun{o: o, out: out, cl: cl}
	start := out.now()
	out.print(&startupComplete{named("startup_complete")})
	limit := o.maxMessages
	if limit < 0 {
		limit = 1<<63 - 1
	}
	var createTime int64
	if o.createTime != nil {
		createTime = *o.createTime
	}
	th := throttler{target: o.throughput, start: start}
	for i := int64(0); i < limit && ctx.Err() == nil; i++ {
		sendStart := out.now()
		rec := &kgo.Record{Topic: o.topic, Value: []byte(r.value(i))}
		key := r.key()
		if key != nil {
			rec.Key = []byte(*key)
		}
		if o.createTime != nil {
			rec.Timestamp = time.UnixMilli(createTime)
			// Kafka's tool moves the create time on by the time elapsed
			// since it started, at every record.
			createTime += out.now().Sub(start).Milliseconds()
		}
		r.send(rec, key)
		if th.shouldThrottle(i, sendStart) {
			th.throttle(ctx)
		}
	}
	// Closing flushes what is in flight: every record gets its event.
	_ = cl.Flush(context.Background())
	cl.Close()
	out.print(&shutdownComplete{named("shutdown_complete")})
	stop := out.now()
	acked := r.acked.Load()
	avg := 1000 * (float64(acked) / float64(stop.Sub(start).Milliseconds()))
	out.print(&toolData{header: named("tool_data"), Sent: r.sent, Acked: acked,
		TargetThroughput: int64(o.throughput), AvgThroughput: javaDouble(avg)})
	return nil
}

// value is the i-th value: "i", or "prefix.i" with --value-prefix.
func (r *producerRun) value(i int64) string {
	if r.o.valuePrefix != nil {
		return strconv.Itoa(*r.o.valuePrefix) + "." + strconv.FormatInt(i, 10)
	}
	return strconv.FormatInt(i, 10)
}

// key is the next key: nil, or 0, 1, ... up to --repeating-keys
// (exclusive) and again from 0.
func (r *producerRun) key() *string {
	if r.o.repeatingKey == nil {
		return nil
	}
	k := strconv.Itoa(r.keyN)
	r.keyN++
	if r.keyN == *r.o.repeatingKey {
		r.keyN = 0
	}
	return &k
}

// send produces rec; its callback prints the outcome.
func (r *producerRun) send(rec *kgo.Record, key *string) {
	value := string(rec.Value)
	r.sent++
	r.cl.Produce(context.Background(), rec, func(rec *kgo.Record, err error) {
		if err != nil {
			class, msg := javaException(err)
			r.out.print(&sendError{header: named("producer_send_error"), Topic: r.o.topic, Key: key, Value: value,
				Exception: class, Message: msg})
			return
		}
		r.acked.Add(1)
		r.out.print(&sendSuccess{header: named("producer_send_success"), Key: key, Value: value,
			Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset})
	})
}

// throttler paces the send loop as Kafka's ThroughputThrottler: once the
// rate so far is above target, it sleeps one record's share of a second,
// accumulated until the debt is at least minSleep. A target of 0 stops
// sending until the run is cancelled; a negative target never throttles.
type throttler struct {
	target  int
	start   time.Time
	deficit time.Duration
}

const minSleep = 2 * time.Millisecond

func (t *throttler) shouldThrottle(sentSoFar int64, sendStart time.Time) bool {
	if t.target < 0 {
		return false
	}
	elapsed := sendStart.Sub(t.start).Seconds()
	return elapsed > 0 && float64(sentSoFar)/elapsed > float64(t.target)
}

func (t *throttler) throttle(ctx context.Context) {
	if t.target == 0 {
		<-ctx.Done()
		return
	}
	t.deficit += time.Second / time.Duration(t.target)
	if t.deficit < minSleep {
		return
	}
	timer := time.NewTimer(t.deficit)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	t.deficit = 0
}
