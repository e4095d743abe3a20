package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

const producerDescription = "This tool is used to verify the producer performance. To enable transactions, " +
	"give a transactional id (--transactional-id, or transactional.id in --producer-props or --producer.config) " +
	"or a transaction duration (--transaction-duration-ms)."

// interruptFlushTimeout bounds the wait for in-flight records after Ctrl-C
// before the summary is printed.
const interruptFlushTimeout = 10 * time.Second

type producerOptions struct {
	topic         string
	numRecords    int64
	warmup        int64
	recordSize    int
	payloads      [][]byte
	monotonic     bool
	throughput    float64
	props         cli.Props
	printMetrics  bool
	transactional bool
	txnDuration   time.Duration
}

func parseProducerOptions(args []string, stdout io.Writer) (*producerOptions, error) {
	p := cli.NewParser("producer-perf-test", producerDescription)
	p.Output = stdout
	topic := p.String("topic", "TOPIC", "REQUIRED: produce messages to this topic.", "")
	numRecords := p.Int64("num-records", "NUM-RECORDS", "REQUIRED: number of messages to produce.", 0)
	recordSize := p.Int("record-size", "RECORD-SIZE", "message size in bytes. Exactly one of --record-size, --payload-file or --payload-monotonic must be given.", 0)
	payloadFile := p.String("payload-file", "PAYLOAD-FILE", "file to read the message payloads from (UTF-8 text). "+
		"Payloads are split at the delimiter and one is picked at random for each message. "+
		"Exactly one of --record-size, --payload-file or --payload-monotonic must be given.", "")
	monotonic := p.Flag("payload-monotonic", "payload is a monotonically increasing integer. "+
		"Exactly one of --record-size, --payload-file or --payload-monotonic must be given.")
	delimiter := p.String("payload-delimiter", "PAYLOAD-DELIMITER", "delimiter between payloads in --payload-file; ignored without it.", `\n`)
	throughput := p.Float64("throughput", "THROUGHPUT", "REQUIRED: throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 to disable throttling.", 0)
	producerProps := p.Multi("producer-props", "PROP-NAME=PROP-VALUE", "kafka producer related configuration properties like bootstrap.servers,client.id etc. "+
		"These configs take precedence over those passed via --producer.config.")
	producerConfig := p.String("producer.config", "CONFIG-FILE", "producer config properties file.", "")
	printMetrics := p.Flag("print-metrics", "print out metrics at the end of the test.")
	txnID := p.String("transactional-id", "TRANSACTIONAL-ID", "The transactional id to use. Takes precedence over transactional.id "+
		"in --producer.config or --producer-props. If only --transaction-duration-ms is given, the id is performance-producer- followed by a random uuid.", "")
	txnDuration := p.Int64("transaction-duration-ms", "TRANSACTION-DURATION", "The max age of each transaction; commitTransaction is called after this time has elapsed. "+
		"Must be greater than 0. Defaults to 3000 when a transactional id is given.", 0)
	warmup := p.Int64("warmup-records", "WARMUP-RECORDS", "The number of records to treat as warmup; they are left out of the steady-state statistics, "+
		"printed as an additional summary line.", 0)
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", p.Args()[0])
	}
	if err := p.Require("topic", "num-records", "throughput"); err != nil {
		return nil, err
	}
	if err := p.RequireOneOf("record-size", "payload-file", "payload-monotonic"); err != nil {
		return nil, err
	}
	o := &producerOptions{topic: *topic, numRecords: *numRecords, warmup: max(*warmup, 0), recordSize: *recordSize,
		monotonic: *monotonic, throughput: *throughput, printMetrics: *printMetrics}
	if o.numRecords <= 0 {
		return nil, errors.New("--num-records should be greater than zero")
	}
	if o.warmup >= o.numRecords {
		return nil, errors.New("the value for --warmup-records must be strictly fewer than the number of records in the test, --num-records")
	}
	if p.Has("record-size") && o.recordSize <= 0 {
		return nil, errors.New("--record-size should be greater than zero")
	}
	if !p.Has("producer-props") && !p.Has("producer.config") {
		return nil, errors.New("either --producer-props or --producer.config must be specified")
	}
	if p.Has("transaction-duration-ms") && *txnDuration <= 0 {
		return nil, errors.New("--transaction-duration-ms should be greater than zero")
	}
	if *payloadFile != "" {
		delim := *delimiter
		if delim == `\n` {
			delim = "\n"
		}
		abs, _ := filepath.Abs(*payloadFile)
		fmt.Fprintf(stdout, "Reading payloads from: %s\n", abs)
		data, err := os.ReadFile(*payloadFile)
		if err != nil {
			return nil, fmt.Errorf("read --payload-file: %w", err)
		}
		if len(data) == 0 {
			return nil, errors.New("file does not exist or empty file provided")
		}
		for _, part := range bytes.Split(data, []byte(delim)) {
			if len(part) > 0 {
				o.payloads = append(o.payloads, part)
			}
		}
		fmt.Fprintf(stdout, "Number of messages read: %d\n", len(o.payloads))
		if len(o.payloads) == 0 {
			return nil, errors.New("--payload-file holds no payloads")
		}
	}

	props, err := cli.LoadProps(*producerConfig)
	if err != nil {
		return nil, err
	}
	kv, err := cli.ParseProps(*producerProps)
	if err != nil {
		return nil, err
	}
	props.Merge(kv)
	if _, ok := props["client.id"]; !ok {
		props["client.id"] = "perf-producer-client"
	}
	o.transactional = p.Has("transaction-duration-ms") || p.Has("transactional-id") || props["transactional.id"] != ""
	if o.transactional {
		switch {
		case *txnID != "":
			props["transactional.id"] = *txnID
		case props["transactional.id"] == "":
			props["transactional.id"] = "performance-producer-" + randomUUID()
		}
		o.txnDuration = 3000 * time.Millisecond
		if p.Has("transaction-duration-ms") {
			o.txnDuration = time.Duration(*txnDuration) * time.Millisecond
		}
	}
	o.props = props
	return o, nil
}

func randomUUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ProducerPerf runs producer-perf-test (Kafka's kafka-producer-perf-test.sh)
// with args, writing Kafka's report lines to stdout. It returns nil after
// --help. When ctx is cancelled (Ctrl-C) it stops sending, waits a bounded
// time for records in flight and prints the summary of what was
// acknowledged. A failed record ends the run with an error after the
// summary.
func ProducerPerf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseProducerOptions(args, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return runProducer(ctx, o, stdout, stderr)
}

func runProducer(ctx context.Context, o *producerOptions, stdout, _ io.Writer) error {
	cl, err := cli.NewClient(ctx, cli.Producer, o.props,
		// Like the Java producer, ask for the topic to be created if the
		// broker creates topics on demand.
		kgo.AllowAutoTopicCreation())
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := checkTopic(ctx, cl, o.topic, true); err != nil {
		return err
	}
	if o.transactional {
		if err := cl.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
	}

	if o.warmup > 0 {
		fmt.Fprintf(stdout, "Warmup first %d records. Steady state results will print after the complete test summary.\n", o.warmup)
	}
	out := &syncWriter{w: stdout}
	start := time.Now()
	stats := newProducerStats(out, start, false)
	var steady *producerStats

	var (
		errOnce  sync.Once
		firstErr error
	)
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()

	gen := newPayloadGen(o)
	var interval time.Duration
	if o.throughput > 0 {
		interval = time.Duration(float64(time.Second) / o.throughput)
	}
	txnStart := start
	var sent int64
	for i := int64(0); i < o.numRecords; i++ {
		if sendCtx.Err() != nil {
			break
		}
		payload := gen.next(i)
		now := time.Now()
		sendStart := now
		if interval > 0 {
			// Pace: record i is due at start+i*interval. Latency counts
			// from that intended time, so a stall is charged to every
			// record it delays (no coordinated omission).
			due := start.Add(time.Duration(i) * interval)
			if wait := due.Sub(now); wait > 0 {
				if wait > time.Millisecond || i%64 == 0 {
					select {
					case <-time.After(wait):
					case <-sendCtx.Done():
					}
				}
			}
			sendStart = due
		}
		if o.warmup > 0 && i == o.warmup {
			steady = newProducerStats(out, time.Now(), true)
			stats.suppressWindows()
		}
		st := steady
		n := len(payload)
		cl.Produce(context.Background(), &kgo.Record{Topic: o.topic, Value: payload}, func(_ *kgo.Record, err error) {
			done := time.Now()
			if err != nil {
				errOnce.Do(func() {
					firstErr = err
					stopSending()
				})
				return
			}
			stats.record(done.Sub(sendStart), n, done)
			if st != nil {
				st.record(done.Sub(sendStart), n, done)
			}
		})
		sent++
		if o.transactional && now.Sub(txnStart) >= o.txnDuration {
			if err := commitTransaction(sendCtx, cl); err != nil {
				if sendCtx.Err() == nil {
					return err
				}
				break
			}
			if i+1 < o.numRecords {
				if err := cl.BeginTransaction(); err != nil {
					return fmt.Errorf("begin transaction: %w", err)
				}
			}
			txnStart = time.Now()
		}
	}

	flushCtx := context.Background()
	if ctx.Err() != nil || firstErr != nil {
		var cancel context.CancelFunc
		flushCtx, cancel = context.WithTimeout(context.Background(), interruptFlushTimeout)
		defer cancel()
	}
	if o.transactional && firstErr == nil {
		if err := commitTransaction(flushCtx, cl); err != nil {
			return err
		}
	} else {
		_ = cl.Flush(flushCtx) // records still missing are left out of the summary
	}
	end := time.Now()
	fmt.Fprintln(out, stats.totalLine(end))
	if steady != nil {
		fmt.Fprintln(out, steady.totalLine(end))
	}
	if o.printMetrics {
		records, byteCount := stats.counts()
		printMetrics(out, o.props["client.id"], end.Sub(start), sent, records, byteCount)
	}
	if firstErr != nil {
		return fmt.Errorf("produce to %s: %w", o.topic, firstErr)
	}
	return nil
}

func commitTransaction(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush before commit: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// checkTopic asks the cluster for topic's metadata (allowing creation when
// autoCreate, as the Java producer does) and returns an error naming the
// topic if it does not exist.
func checkTopic(ctx context.Context, cl *kgo.Client, topic string, autoCreate bool) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = autoCreate
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("metadata for topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case err == nil:
			return nil
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return fmt.Errorf("topic %s does not exist", topic)
		case errors.Is(err, kerr.LeaderNotAvailable):
			return nil // just created; the client waits for the leader
		default:
			return fmt.Errorf("topic %s: %w", topic, err)
		}
	}
	return fmt.Errorf("topic %s does not exist", topic)
}

// payloadGen makes record values: random upper-case letters of the record
// size (fresh for each record, so compression sees what Kafka's tool
// sends), a random pick from the payload file, or the record index.
// Values are carved from larger slabs so that each record keeps its own
// bytes until the client is done with them. Used by the send loop only.
type payloadGen struct {
	size      int
	payloads  [][]byte
	monotonic bool
	rng       *rand.Rand
	slab      []byte
}

func newPayloadGen(o *producerOptions) *payloadGen {
	return &payloadGen{size: o.recordSize, payloads: o.payloads, monotonic: o.monotonic,
		rng: rand.New(rand.NewPCG(0, 0))}
}

func (g *payloadGen) next(i int64) []byte {
	switch {
	case len(g.payloads) > 0:
		return g.payloads[g.rng.IntN(len(g.payloads))]
	case g.monotonic:
		return strconv.AppendInt(nil, i, 10)
	}
	if len(g.slab) < g.size {
		g.slab = make([]byte, max(g.size, 256<<10))
	}
	b := g.slab[:g.size:g.size]
	g.slab = g.slab[g.size:]
	for j := 0; j < len(b); {
		x := g.rng.Uint64()
		for k := 0; k < 4 && j < len(b); k++ {
			b[j] = 'A' + byte((uint32(x&0xffff)*26)>>16)
			x >>= 16
			j++
		}
	}
	return b
}

// syncWriter serialises writes from the send loop and kgo's promise
// goroutines. Safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// printMetrics prints the producer counters the tool keeps, in the layout
// of Kafka's metrics table (group:name:{tags} : value). kgo keeps no metric
// registry, so this is a small subset of the Java producer's metrics.
func printMetrics(w io.Writer, clientID string, elapsed time.Duration, sent, acked, byteCount int64) {
	tags := "{client-id=" + clientID + "}"
	rows := []struct {
		name  string
		value float64
	}{
		{"producer-metrics:byte-total:" + tags, float64(byteCount)},
		{"producer-metrics:record-error-total:" + tags, float64(sent - acked)},
		{"producer-metrics:record-send-rate:" + tags, float64(acked) / elapsed.Seconds()},
		{"producer-metrics:record-send-total:" + tags, float64(acked)},
	}
	width := len("Metric Name")
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	fmt.Fprintf(w, "\n%-*s %s\n", width, "Metric Name", "Value")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s : %s\n", width, r.name, javafmt.Fixed(r.value, 3))
	}
}
