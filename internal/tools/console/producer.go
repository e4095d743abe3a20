package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// RunProducer is `silkworm console-producer`: it sends each line of stdin as
// a record until EOF or ctx ends, then flushes. A record that fails is
// reported on stderr; the command then fails after the rest were sent.
func RunProducer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p := cli.NewParser("console-producer", "This tool helps to read data from standard input and publish it to Kafka.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server to connect to", "REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2.", "")
	brokerList := p.String("broker-list", "broker-list", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.", "")
	topic := p.String("topic", "topic", "REQUIRED: The topic id to produce messages to.", "")
	syncSend := p.Flag("sync", "If set message send requests to the brokers are synchronously, one at a time as they arrive.")
	codec := p.String("compression-codec", "compression-codec", "The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'.", "")
	batchSize := p.Int("batch-size", "size", "Number of messages to send in a single batch if they are not being sent synchronously.", 0)
	retries := p.Int("message-send-max-retries", "Integer", "Number of times a failed send is retried before giving up.", 0)
	retryBackoff := p.Int64("retry-backoff-ms", "Long", "Backoff time in ms before retrying a failed send.", 0)
	linger := p.Int64("timeout", "timeout_ms", "If set and the producer is running in asynchronous mode, this gives the maximum amount of time a message will queue awaiting sufficient batch size. The value is given in ms.", 1000)
	acks := p.String("request-required-acks", "request required acks", "The required acks of the producer requests", "-1")
	reqTimeout := p.Int64("request-timeout-ms", "request timeout ms", "The ack timeout of the producer requests. Value must be non-negative and non-zero.", 1500)
	maxBlock := p.Int64("max-block-ms", "max block on send", "The max time that the producer will block for during a send request.", 60000)
	maxMem := p.Int64("max-memory-bytes", "total memory in bytes", "The total memory used by the producer to buffer records waiting to be sent to the server.", 32*1024*1024)
	maxPart := p.Int64("max-partition-memory-bytes", "memory in bytes per partition", "The buffer size allocated for a partition. When records are received which are smaller than this size the producer will attempt to optimistically group them together until this size is reached.", 16*1024)
	metaExpiry := p.Int64("metadata-expiry-ms", "metadata expiration interval", "The period of time in milliseconds after which we force a refresh of metadata even if we haven't seen any leadership changes.", 5*60*1000)
	producerProps := p.List("producer-property", "producer_prop", "A mechanism to pass user-defined properties in the form key=value to the producer.")
	producerConfig := p.String("producer.config", "config file", "Producer config properties file. Note that [producer-property] takes precedence over this config.", "")
	p.Ignored("line-reader", "reader_class", "Accepted for compatibility; only Kafka's default line reader is built in.")
	props := p.List("property", "prop", "A mechanism to pass user-defined properties in the form key=value to the message reader: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error.")
	p.Ignored("reader-config", "config file", "Accepted for compatibility; use --property.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if len(p.Args()) > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("topic"); err != nil {
		return err
	}
	if *bootstrap == "" {
		*bootstrap = *brokerList
	}
	if *bootstrap == "" {
		return errors.New("missing required argument \"[bootstrap-server]\"")
	}
	readerProps, err := cli.ParseProps(*props)
	if err != nil {
		return fmt.Errorf("--property: %w", err)
	}
	lr, err := NewLineReader(readerProps)
	if err != nil {
		return err
	}
	cp, err := cli.LoadProps(*producerConfig)
	if err != nil {
		return err
	}
	set := func(opt, prop, v string) {
		if p.Has(opt) {
			cp[prop] = v
		}
	}
	// Kafka's defaults for the tool, then the options given, then the
	// property file, then --producer-property.
	base := cli.Props{"acks": *acks, "linger.ms": strconv.FormatInt(*linger, 10)}
	set("compression-codec", "compression.type", *codec)
	if p.Has("compression-codec") && *codec == "" {
		cp["compression.type"] = "gzip"
	}
	set("batch-size", "batch.size", strconv.Itoa(*batchSize))
	set("message-send-max-retries", "retries", strconv.Itoa(*retries))
	set("retry-backoff-ms", "retry.backoff.ms", strconv.FormatInt(*retryBackoff, 10))
	set("request-timeout-ms", "request.timeout.ms", strconv.FormatInt(*reqTimeout, 10))
	set("max-block-ms", "max.block.ms", strconv.FormatInt(*maxBlock, 10))
	set("max-memory-bytes", "buffer.memory", strconv.FormatInt(*maxMem, 10))
	set("max-partition-memory-bytes", "batch.size", strconv.FormatInt(*maxPart, 10))
	set("metadata-expiry-ms", "metadata.max.age.ms", strconv.FormatInt(*metaExpiry, 10))
	extra, err := cli.ParseProps(*producerProps)
	if err != nil {
		return fmt.Errorf("--producer-property: %w", err)
	}
	all := base.Merge(cp).Merge(extra)
	all["bootstrap.servers"] = *bootstrap
	cl, err := cli.NewClient(ctx, cli.Producer, all)
	if err != nil {
		return err
	}
	defer cl.Close()
	return produceLines(ctx, cl, lr, *topic, *syncSend, stdin, stderr)
}

// produceLines sends every line of in as a record of topic.
func produceLines(ctx context.Context, cl *kgo.Client, lr *LineReader, topic string, syncSend bool, in io.Reader, stderr io.Writer) error {
	var (
		failed atomic.Int64
		mu     sync.Mutex // serialises error output from produce callbacks
	)
	report := func(r *kgo.Record, err error) {
		failed.Add(1)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "ERROR Error when sending message to topic %s with key: %s, value: %d bytes with error: %v\n",
			topic, keyDesc(r.Key), len(r.Value), err)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		rec, err := lr.Parse(topic, sc.Text(), n)
		if err != nil {
			return err
		}
		if syncSend {
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				report(rec, err)
			}
			continue
		}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			if err != nil {
				report(r, err)
			}
		})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read standard input: %w", err)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d of %d records could not be sent", f, n)
	}
	return nil
}

func keyDesc(k []byte) string {
	if k == nil {
		return "null"
	}
	return fmt.Sprintf("%d bytes", len(k))
}
