package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// RunConsumer is `silkworm console-consumer`: it prints records until
// --max-messages, --timeout-ms without a record, or ctx ends (Ctrl-C), then
// writes "Processed a total of N messages" to stderr.
func RunConsumer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("console-consumer", "This tool helps to read data from Kafka topics and outputs it to standard output.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to.", "")
	topic := p.String("topic", "topic", "The topic to consume on.", "")
	include := p.String("include", "Java regex (String)", "Regular expression specifying list of topics to include for consumption.", "")
	p.Ignored("whitelist", "Java regex (String)", "DEPRECATED, use --include instead; ignored.")
	partition := p.Int("partition", "partition", "The partition to consume from. Consumption starts from the end of the partition unless '--offset' is specified.", 0)
	offset := p.String("offset", "consume offset", "The offset to consume from (a non-negative number), or 'earliest' which means from beginning, or 'latest' which means from end", "latest")
	consumerProps := p.List("consumer-property", "consumer_prop", "A mechanism to pass user-defined properties in the form key=value to the consumer.")
	consumerConfig := p.String("consumer.config", "config file", "Consumer config properties file. Note that [consumer-property] takes precedence over this config.", "")
	formatter := p.String("formatter", "class", "The name of a class to use for formatting kafka messages for display.", "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
	props := p.List("property", "prop", "The properties to initialize the message formatter: print.timestamp, print.key, print.offset, print.partition, print.headers, print.value, key.separator, line.separator, headers.separator, null.literal.")
	p.Ignored("formatter-config", "config file", "Accepted for compatibility; use --property.")
	fromBeginning := p.Flag("from-beginning", "If the consumer does not already have an established offset to consume from, start with the earliest message present in the log rather than the latest message.")
	maxMessages := p.Int("max-messages", "num_messages", "The maximum number of messages to consume before exiting. If not set, consumption is continual.", 0)
	timeoutMs := p.Int("timeout-ms", "timeout_ms", "If specified, exit if no message is available for consumption for the specified interval.", 0)
	p.Ignored("skip-message-on-error", "", "Accepted for compatibility; records are printed as raw bytes and cannot fail to format.")
	p.Ignored("key-deserializer", "deserializer for key", "Accepted for compatibility; keys are printed as raw bytes.")
	p.Ignored("value-deserializer", "deserializer for values", "Accepted for compatibility; values are printed as raw bytes.")
	p.Ignored("enable-systest-events", "", "Accepted for compatibility; ignored.")
	isolation := p.String("isolation-level", "isolation-level", "Set to read_committed in order to filter out transactional messages which are not committed. Set to read_uncommitted to read all messages.", "read_uncommitted")
	group := p.String("group", "consumer group id", "The consumer group id of the consumer.", "")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if len(p.Args()) > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return err
	}
	if p.Has("topic") == p.Has("include") {
		return errors.New("exactly one of --include/--topic is required")
	}
	if p.Has("partition") && !p.Has("topic") {
		return errors.New("the topic is required when partition is specified")
	}
	if p.Has("offset") && !p.Has("partition") {
		return errors.New("the partition is required when offset is specified")
	}
	if p.Has("offset") && *fromBeginning {
		return errors.New("options from-beginning and offset cannot be specified together")
	}
	if p.Has("group") && p.Has("partition") {
		return errors.New("options group and partition cannot be specified together")
	}
	if *formatter != "org.apache.kafka.tools.consumer.DefaultMessageFormatter" && *formatter != "kafka.tools.DefaultMessageFormatter" {
		return fmt.Errorf("formatter %s is not supported; only the DefaultMessageFormatter is built in", *formatter)
	}
	if *isolation != "read_committed" && *isolation != "read_uncommitted" {
		return fmt.Errorf("invalid --isolation-level %q: must be read_committed or read_uncommitted", *isolation)
	}
	fprops, err := cli.ParseProps(*props)
	if err != nil {
		return fmt.Errorf("--property: %w", err)
	}
	f := NewFormatter(fprops)

	cp, err := cli.LoadProps(*consumerConfig)
	if err != nil {
		return err
	}
	extra, err := cli.ParseProps(*consumerProps)
	if err != nil {
		return fmt.Errorf("--consumer-property: %w", err)
	}
	cp.Merge(extra)
	cp["bootstrap.servers"] = *bootstrap
	cp["isolation.level"] = *isolation
	if p.Has("group") {
		cp["group.id"] = *group
	}
	if _, ok := cp["auto.offset.reset"]; !ok || *fromBeginning {
		cp["auto.offset.reset"] = "latest"
		if *fromBeginning {
			cp["auto.offset.reset"] = "earliest"
		}
	}
	var opts []kgo.Opt
	if p.Has("partition") {
		start := kgo.NewOffset().AtEnd()
		switch *offset {
		case "earliest":
			start = kgo.NewOffset().AtStart()
		case "latest":
		default:
			n, err := strconv.ParseInt(*offset, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("invalid --offset %q: must be a non-negative number, 'earliest' or 'latest'", *offset)
			}
			start = kgo.NewOffset().At(n)
		}
		if *fromBeginning {
			start = kgo.NewOffset().AtStart()
		}
		delete(cp, "auto.offset.reset")
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{*topic: {int32(*partition): start}}))
	} else if p.Has("include") {
		if _, err := regexp.Compile(*include); err != nil {
			return fmt.Errorf("invalid --include: %w", err)
		}
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(*include))
	} else {
		opts = append(opts, kgo.ConsumeTopics(*topic))
	}
	cl, err := cli.NewClient(ctx, cli.Consumer, cp, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	n, err := Consume(ctx, cl, f, *maxMessages, time.Duration(*timeoutMs)*time.Millisecond, stdout, stderr, nil)
	if p.Has("group") || cp["group.id"] != "" {
		// As the Java consumer does on close with auto commit on: commit
		// what was printed, so that the next run in the group resumes
		// after it. This runs after Ctrl-C too, hence its own context.
		if cerr := commitOnExit(ctx, cl, cp); cerr != nil && err == nil {
			err = cerr
		}
	}
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	return err
}

// commitOnExit commits the offsets of the records polled so far unless
// enable.auto.commit=false.
func commitOnExit(ctx context.Context, cl *kgo.Client, props cli.Props) error {
	if v, ok := props["enable.auto.commit"]; ok && strings.EqualFold(strings.TrimSpace(v), "false") {
		return nil
	}
	commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := cl.CommitUncommittedOffsets(commitCtx); err != nil {
		return fmt.Errorf("commit offsets: %w", err)
	}
	return nil
}

// Consume polls and prints records, as kafka-console-consumer.sh and
// kafka-console-share-consumer.sh do. It stops after max records (0: no
// limit), after idle without a record (0: never) or when ctx ends; those
// are normal ends, not errors. done, if not nil, is called for every
// record polled, with whether it was printed (a share consumer
// acknowledges each one).
func Consume(ctx context.Context, cl *kgo.Client, f *Formatter, max int, idle time.Duration, stdout, stderr io.Writer, done func(r *kgo.Record, printed bool)) (int, error) {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	n := 0
	for max == 0 || n < max {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if idle > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, idle)
		}
		fetches := cl.PollRecords(pollCtx, max-n)
		timedOut := pollCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return n, nil
		}
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				continue
			}
			w.Flush()
			fmt.Fprintf(stderr, "ERROR Error processing message, terminating consumer process: topic %s partition %d: %v\n", fe.Topic, fe.Partition, fe.Err)
			return n, fmt.Errorf("consume %s: %w", fe.Topic, fe.Err)
		}
		if fetches.NumRecords() == 0 && timedOut {
			w.Flush()
			fmt.Fprintln(stderr, "ERROR Error processing message, terminating consumer process: org.apache.kafka.common.errors.TimeoutException")
			return n, nil
		}
		var werr error
		fetches.EachRecord(func(r *kgo.Record) {
			if werr != nil || (max > 0 && n >= max) {
				if done != nil {
					done(r, false)
				}
				return
			}
			werr = f.Write(w, r)
			if done != nil {
				done(r, true)
			}
			n++
		})
		if werr != nil {
			return n, fmt.Errorf("write output: %w", werr)
		}
		if w.Buffered() > 0 {
			w.Flush()
		}
	}
	return n, nil
}
