package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// e2ePollTimeout is how long e2e-latency waits for its record to come back,
// Kafka's 60 s.
const e2ePollTimeout = 60 * time.Second

type e2eOptions struct {
	bootstrap  string
	topic      string
	numRecords int
	acks       string
	recordSize int
	props      cli.Props
}

const e2eUsage = "USAGE: silkworm e2e-latency broker_list topic num_messages producer_acks message_size_bytes [optional] properties_file\n" +
	"   or: silkworm e2e-latency --bootstrap-server <servers> --topic <topic> --num-records <n> --producer-acks <1|all> --record-size <bytes> [--command-config <file>]"

func parseE2EOptions(args []string, stdout io.Writer) (*e2eOptions, error) {
	p := cli.NewParser("e2e-latency", "This tool records the average end to end latency for a single message to travel through Kafka: "+
		"it produces one record, waits until a consumer has it, and repeats.\n"+e2eUsage)
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The Kafka broker list string in the form HOST1:PORT1,HOST2:PORT2.", "")
	topic := p.String("topic", "topic-name", "REQUIRED: The topic to use for the test.", "")
	num := p.Int("num-records", "count", "REQUIRED: The number of messages to send.", 0)
	acks := p.String("producer-acks", "producer-acks", "REQUIRED: Producer acknowledgements. Must be '1' or 'all'.", "")
	size := p.Int("record-size", "size", "REQUIRED: The size of each message to be sent in bytes.", 0)
	cfg := p.String("command-config", "config-file", "A config file with client properties for the producer and the consumer.", "")
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	o := &e2eOptions{bootstrap: *bootstrap, topic: *topic, numRecords: *num, acks: *acks, recordSize: *size}
	cfgPath := *cfg
	if pos := p.Args(); len(pos) > 0 {
		// Kafka's original positional form.
		if len(pos) != 5 && len(pos) != 6 {
			return nil, errors.New(e2eUsage)
		}
		var err error
		o.bootstrap, o.topic, o.acks = pos[0], pos[1], pos[3]
		if o.numRecords, err = strconv.Atoi(pos[2]); err != nil {
			return nil, fmt.Errorf("num_messages %q is not a number", pos[2])
		}
		if o.recordSize, err = strconv.Atoi(pos[4]); err != nil {
			return nil, fmt.Errorf("message_size_bytes %q is not a number", pos[4])
		}
		if len(pos) == 6 {
			cfgPath = pos[5]
		}
	} else if err := p.Require("bootstrap-server", "topic", "num-records", "producer-acks", "record-size"); err != nil {
		return nil, err
	}
	if o.acks != "1" && o.acks != "all" {
		return nil, errors.New("latency testing requires synchronous acknowledgement. Please use 1 or all")
	}
	if o.numRecords <= 0 {
		return nil, errors.New("the number of messages must be greater than zero")
	}
	if o.recordSize <= 0 {
		return nil, errors.New("the message size must be greater than zero")
	}
	props, err := cli.LoadProps(cfgPath)
	if err != nil {
		return nil, err
	}
	props["bootstrap.servers"] = o.bootstrap
	o.props = props
	return o, nil
}

// EndToEndLatency runs e2e-latency (Kafka's EndToEndLatency tool): for each
// of num_messages records it produces one record synchronously, polls until
// the consumer returns it, checks it is the record sent, and records the
// round trip. It prints every 1000th latency and then the average and
// percentiles in Kafka's format. A missing topic is created with one
// partition and replication factor 1, as Kafka's tool does. When ctx is
// cancelled it prints the results so far.
func EndToEndLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseE2EOptions(args, stdout)
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return runE2E(ctx, o, stdout)
}

func runE2E(ctx context.Context, o *e2eOptions, stdout io.Writer) error {
	admin, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": o.bootstrap})
	if err != nil {
		return err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if err := checkTopic(ctx, admin, o.topic, false); err != nil {
		fmt.Fprintf(stdout, "Topic \"%s\" does not exist. Will create topic with %d partition(s) and replication factor = %d\n", o.topic, 1, 1)
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, o.topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			fmt.Fprintf(stdout, "Creation of topic %s failed\n", o.topic)
			return fmt.Errorf("create topic %s: %w", o.topic, err)
		}
	}
	// Start the consumer at the current end of every partition, resolved
	// before the first record is produced.
	var ends kadm.ListedOffsets
	for {
		ends, err = adm.ListEndOffsets(ctx, o.topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		// A just-created topic may not have a leader yet.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("list end offsets of %s: %w", o.topic, err)
	}
	start := map[string]map[int32]kgo.Offset{o.topic: {}}
	ends.Each(func(l kadm.ListedOffset) { start[o.topic][l.Partition] = kgo.NewOffset().At(l.Offset) })

	consumerProps := o.props.Clone()
	delete(consumerProps, "group.id") // assigned partitions, no group, nothing to commit
	consumer, err := cli.NewClient(ctx, cli.Consumer, consumerProps,
		kgo.ConsumePartitions(start), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		return err
	}
	defer consumer.Close()
	producerProps := o.props.Clone()
	producerProps["acks"] = o.acks
	producerProps["linger.ms"] = "0"
	producer, err := cli.NewClient(ctx, cli.Producer, producerProps)
	if err != nil {
		return err
	}
	defer producer.Close()

	rng := rand.New(rand.NewPCG(0, 0))
	latencies := make([]time.Duration, 0, o.numRecords)
	var runErr error
	for i := 0; i < o.numRecords && ctx.Err() == nil; i++ {
		msg := bytes.Repeat([]byte{byte('A' + rng.IntN(26))}, o.recordSize)
		begin := time.Now()
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: o.topic, Value: msg}).FirstErr(); err != nil {
			if ctx.Err() == nil {
				runErr = fmt.Errorf("produce: %w", err)
			}
			break
		}
		recs, err := pollOne(ctx, consumer)
		elapsed := time.Since(begin)
		if err != nil {
			if ctx.Err() == nil {
				runErr = err
			}
			break
		}
		if len(recs) != 1 {
			runErr = fmt.Errorf("only one result was expected during this test. We found [%d]", len(recs))
			break
		}
		if !bytes.Equal(recs[0].Value, msg) {
			runErr = fmt.Errorf("the message read [%s] did not match the message sent [%s]", recs[0].Value, msg)
			break
		}
		if i%1000 == 0 {
			fmt.Fprintln(stdout, e2eProgressLine(i, elapsed))
		}
		latencies = append(latencies, elapsed)
	}
	if runErr != nil {
		return runErr
	}
	io.WriteString(stdout, e2eResults(latencies))
	return nil
}

// pollOne polls until records arrive or e2ePollTimeout passes.
func pollOne(ctx context.Context, cl *kgo.Client) ([]*kgo.Record, error) {
	pollCtx, cancel := context.WithTimeout(ctx, e2ePollTimeout)
	defer cancel()
	for {
		fetches := cl.PollFetches(pollCtx)
		if recs := fetches.Records(); len(recs) > 0 {
			return recs, nil
		}
		if pollCtx.Err() != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("poll() timed out before finding a result (timeout:[%d])", e2ePollTimeout.Milliseconds())
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("fetch %s-%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
	}
}
