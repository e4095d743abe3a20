package sharegroups

import (
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
	n, err := console.Consume(ctx, cl, f, *maxMessages, time.Duration(*timeoutMs)*time.Millisecond, stdout, stderr,
		func(r *kgo.Record, printed bool) {
			if printed {
				r.Ack(status)
			} else {
				r.Ack(kgo.AckRelease) // not printed: someone else gets it
			}
		})
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	if ferr := cl.FlushAcks(flushCtx); ferr != nil && err == nil && ctx.Err() == nil {
		err = fmt.Errorf("acknowledge: %w", ferr)
	}
	cancel()
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", n)
	return err
}
