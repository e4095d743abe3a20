package sharegroups

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
	"github.com/silkworm/silkworm/internal/tools/console"
)

// RunConsoleShareConsumer is `silkworm console-share-consumer`, Kafka's
// kafka-console-share-consumer.sh: it joins share group --group (default
// "console-share-consumer") on --topic, prints each record with the
// console consumer's DefaultMessageFormatter and acknowledges it (ACCEPT,
// or REJECT with --reject, RELEASE with --release), until --max-messages,
// --timeout-ms without a record, or ctx ends; then it writes "Processed a
// total of N messages" to stderr.
func RunConsoleShareConsumer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("console-share-consumer", "This tool helps to read data from Kafka topics using share groups and outputs it to standard output.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to.", "")
	topic := p.String("topic", "topic", "REQUIRED: The topic to consume from.", "")
	group := p.String("group", "share group id", "The share group id of the consumer.", "console-share-consumer")
	consumerProps := p.List("consumer-property", "consumer_prop", "A mechanism to pass user-defined properties in the form key=value to the consumer.")
	consumerConfig := p.String("consumer-config", "config file", "Consumer config properties file. Note that [consumer-property] takes precedence over this config.", "")
	formatter := p.String("formatter", "class", "The name of a class to use for formatting Kafka messages for display.", "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
	props := p.List("property", "prop", "The properties to initialize the message formatter: print.timestamp, print.key, print.offset, print.partition, print.delivery, print.headers, print.value, key.separator, line.separator, headers.separator, null.literal.")
	p.Ignored("formatter-config", "config file", "Accepted for compatibility; use --property.")
	maxMessages := p.Int("max-messages", "num_messages", "The maximum number of messages to consume before exiting. If not set, consumption is continual.", 0)
	timeoutMs := p.Int("timeout-ms", "timeout_ms", "If specified, exit if no message is available for consumption for the specified interval.", 0)
	reject := p.Flag("reject", "If specified, messages are rejected as they are consumed.")
	release := p.Flag("release", "If specified, messages are released as they are consumed.")
	p.Ignored("reject-message-on-error", "", "Accepted for compatibility; records are printed as raw bytes and cannot fail to format.")
	p.Ignored("key-deserializer", "deserializer for key", "Accepted for compatibility; keys are printed as raw bytes.")
	p.Ignored("value-deserializer", "deserializer for values", "Accepted for compatibility; values are printed as raw bytes.")
	p.Ignored("enable-systest-events", "", "Accepted for compatibility; ignored.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if len(p.Args()) > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server", "topic"); err != nil {
		return err
	}
	if *reject && *release {
		return errors.New("options reject and release cannot be specified together")
	}
	if *formatter != "org.apache.kafka.tools.consumer.DefaultMessageFormatter" && *formatter != "kafka.tools.DefaultMessageFormatter" {
		return fmt.Errorf("formatter %s is not supported; only the DefaultMessageFormatter is built in", *formatter)
	}
	fprops, err := cli.ParseProps(*props)
	if err != nil {
		return fmt.Errorf("--property: %w", err)
	}
	f := console.NewFormatter(fprops)
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
	delete(cp, "group.id")
	delete(cp, "auto.offset.reset") // a share group's start is its share.auto.offset.reset
	cl, err := cli.NewClient(ctx, cli.Consumer, cp, kgo.ShareGroup(*group), kgo.ConsumeTopics(*topic))
	if err != nil {
		return err
	}
	defer cl.Close()
	status := kgo.AckAccept
	switch {
	case *reject:
		status = kgo.AckReject
	case *release:
		status = kgo.AckRelease
	}
	n, err := shareConsume(ctx, cl, f, status, *maxMessages, time.Duration(*timeoutMs)*time.Millisecond, stdout, stderr)
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if ferr := cl.FlushAcks(flushCtx); ferr != nil && err == nil && ctx.Err() == nil {
		err = fmt.Errorf("acknowledge: %w", ferr)
	}
	cancel()
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	return err
}

// shareConsume polls, prints and acknowledges records until max records
// (0: no limit), idle without a record (0: never) or ctx ends.
func shareConsume(ctx context.Context, cl *kgo.Client, f *console.Formatter, status kgo.AckStatus, max int, idle time.Duration, stdout, stderr io.Writer) (int, error) {
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
				r.Ack(kgo.AckRelease) // not printed: someone else gets it
				return
			}
			werr = f.Write(w, r)
			r.Ack(status)
			n++
		})
		if werr != nil {
			return n, fmt.Errorf("write output: %w", werr)
		}
		w.Flush()
	}
	return n, nil
}
