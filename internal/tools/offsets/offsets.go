package offsets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Line is one output line of get-offsets.
type Line struct {
	Topic     string
	Partition int32
	Offset    int64
}

// WriteOffsets prints lines sorted by topic and partition, Kafka's way.
func WriteOffsets(w io.Writer, lines []Line) {
	sort.Slice(lines, func(i, j int) bool {
		if lines[i].Topic != lines[j].Topic {
			return lines[i].Topic < lines[j].Topic
		}
		return lines[i].Partition < lines[j].Partition
	})
	for _, l := range lines {
		fmt.Fprintf(w, "%s:%d:%d\n", l.Topic, l.Partition, l.Offset)
	}
}

// parseTime reads --time: -1/latest, -2/earliest, -3/max-timestamp or a
// timestamp in ms.
func parseTime(s string) (int64, error) {
	switch s {
	case "latest":
		return -1, nil
	case "earliest":
		return -2, nil
	case "max-timestamp":
		return -3, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -3 {
		return 0, fmt.Errorf("malformed time argument %s. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a specified long format timestamp", s)
	}
	return n, nil
}

// RunGetOffsets is `silkworm get-offsets`.
func RunGetOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("get-offsets", "An interactive shell for getting topic-partition offsets.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "HOST1:PORT1,...,HOST3:PORT3", "REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.", "")
	brokerList := p.String("broker-list", "HOST1:PORT1,...,HOST3:PORT3", "DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.", "")
	topicOpt := p.String("topic", "topic", "The topic to get the offsets for. It also accepts a regular expression. If not present, all authorized topics are queried. Cannot be used if --topic-partitions is present.", "")
	partitionsOpt := p.String("partitions", "partition ids", "Comma separated list of partition ids to get the offsets for. If not present, all partitions of the topics are queried. Cannot be used if --topic-partitions is present.", "")
	tpOpt := p.String("topic-partitions", "topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3", "Comma separated list of topic-partition patterns to get the offsets for, with the format of 'topic:partition'. The partition part may be a number, a range NUMBER-NUMBER (upper exclusive), NUMBER- or -NUMBER, or be omitted for all partitions.", "")
	timeOpt := p.String("time", "<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp", "Timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater than recently committed record timestamp is given.]", "-1")
	commandConfig := p.String("command-config", "config file", "Property file containing configs to be passed to Admin Client.", "")
	excludeInternal := p.Flag("exclude-internal-topics", "By default, internal topics are included. If specified, internal topics are excluded.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if *bootstrap == "" {
		*bootstrap = *brokerList
	}
	if *bootstrap == "" {
		return errors.New("missing required argument \"[bootstrap-server]\"")
	}
	if p.Has("topic-partitions") && (p.Has("topic") || p.Has("partitions")) {
		return errors.New("--topic-partitions cannot be used with --topic or --partitions")
	}
	ts, err := parseTime(*timeOpt)
	if err != nil {
		return err
	}
	filter, err := buildFilter(*topicOpt, *partitionsOpt, *tpOpt)
	if err != nil {
		return err
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	matched := false
	for _, name := range topics.Names() {
		d := topics[name]
		if *excludeInternal && d.IsInternal {
			continue
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = name
		for _, pd := range d.Partitions.Sorted() {
			if !filter(name, pd.Partition) {
				continue
			}
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = pd.Partition, ts, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			matched = true
			req.Topics = append(req.Topics, rt)
		}
	}
	if !matched {
		if p.Has("topic") || p.Has("topic-partitions") {
			return errors.New("could not match any topic-partitions with the specified filters")
		}
		return nil
	}
	var lines []Line
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			return fmt.Errorf("list offsets: %w", shard.Err)
		}
		resp := shard.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, pr := range t.Partitions {
				if pr.ErrorCode != 0 {
					fmt.Fprintf(stderr, "Skip getting offsets for topic-partition %s-%d due to error: error code %d\n", t.Topic, pr.Partition, pr.ErrorCode)
					continue
				}
				if pr.Offset < 0 {
					continue // no offset for that timestamp
				}
				lines = append(lines, Line{t.Topic, pr.Partition, pr.Offset})
			}
		}
	}
	WriteOffsets(stdout, lines)
	return nil
}

var partitionPattern = regexp.MustCompile(`^(\d+)?(-)?(\d+)?$`)

// buildFilter turns the topic/partition options into a predicate.
func buildFilter(topic, partitions, topicPartitions string) (func(string, int32) bool, error) {
	type rule struct {
		topic  *regexp.Regexp
		lo, hi int64 // [lo, hi)
	}
	compile := func(expr string) (*regexp.Regexp, error) {
		if expr == "" {
			expr = ".*"
		}
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid topic pattern %q: %w", expr, err)
		}
		return re, nil
	}
	var rules []rule
	if topicPartitions != "" {
		for _, tp := range strings.Split(topicPartitions, ",") {
			t, part, _ := strings.Cut(tp, ":")
			re, err := compile(t)
			if err != nil {
				return nil, err
			}
			r := rule{topic: re, lo: 0, hi: 1 << 31}
			if part != "" {
				m := partitionPattern.FindStringSubmatch(part)
				if m == nil || (m[1] == "" && m[3] == "") {
					return nil, fmt.Errorf("invalid partition pattern %q in %q", part, tp)
				}
				lo, _ := strconv.ParseInt(m[1], 10, 64)
				hi, _ := strconv.ParseInt(m[3], 10, 64)
				switch {
				case m[2] == "":
					r.lo, r.hi = lo, lo+1
				case m[1] == "":
					r.lo, r.hi = 0, hi
				case m[3] == "":
					r.lo = lo
				default:
					r.lo, r.hi = lo, hi
				}
			}
			rules = append(rules, r)
		}
	} else {
		re, err := compile(topic)
		if err != nil {
			return nil, err
		}
		if partitions == "" {
			rules = append(rules, rule{topic: re, lo: 0, hi: 1 << 31})
		}
		for _, ps := range strings.Split(partitions, ",") {
			if ps == "" {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("invalid partition id %q", ps)
			}
			rules = append(rules, rule{topic: re, lo: n, hi: n + 1})
		}
	}
	return func(t string, p int32) bool {
		for _, r := range rules {
			if r.topic.MatchString(t) && int64(p) >= r.lo && int64(p) < r.hi {
				return true
			}
		}
		return false
	}, nil
}

// RunDeleteRecords is `silkworm delete-records`.
func RunDeleteRecords(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("delete-records", "This tool helps to delete records of the given partitions down to the specified offset.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The server to connect to.", "")
	jsonFile := p.String("offset-json-file", "Offset json file path", "REQUIRED: The JSON file with offset per partition. The format to use is:\n{\"partitions\":\n  [{\"topic\": \"foo\", \"partition\": 1, \"offset\": 1}],\n \"version\":1\n}", "")
	commandConfig := p.String("command-config", "command config property file path", "A property file containing configs to be passed to Admin Client.", "")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := p.Require("bootstrap-server", "offset-json-file"); err != nil {
		return err
	}
	data, err := os.ReadFile(*jsonFile)
	if err != nil {
		return fmt.Errorf("read offset json file: %w", err)
	}
	os, err := ParseOffsetJSON(data)
	if err != nil {
		return err
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	fmt.Fprintln(stdout, "Executing records delete operation")
	resps, err := adm.DeleteRecords(ctx, os)
	if err != nil && len(resps) == 0 {
		return fmt.Errorf("delete records: %w", err)
	}
	fmt.Fprintln(stdout, "Records delete operation completed:")
	failed := 0
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			failed++
			fmt.Fprintf(stdout, "partition: %s-%d\terror: %v\n", r.Topic, r.Partition, r.Err)
			continue
		}
		fmt.Fprintf(stdout, "partition: %s-%d\tlow_watermark: %d\n", r.Topic, r.Partition, r.LowWatermark)
	}
	if failed > 0 {
		return fmt.Errorf("records of %d partition(s) could not be deleted", failed)
	}
	return nil
}

// ParseOffsetJSON reads Kafka's delete-records file (version 1).
func ParseOffsetJSON(data []byte) (kadm.Offsets, error) {
	var f struct {
		Version    *int `json:"version"`
		Partitions []struct {
			Topic     string `json:"topic"`
			Partition *int32 `json:"partition"`
			Offset    *int64 `json:"offset"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse offset json file: %w", err)
	}
	if f.Version != nil && *f.Version != 1 {
		return nil, fmt.Errorf("not supported version field value %d", *f.Version)
	}
	if len(f.Partitions) == 0 {
		return nil, errors.New("offset json file doesn't contain any partition")
	}
	os := kadm.Offsets{}
	for _, p := range f.Partitions {
		if p.Topic == "" || p.Partition == nil || p.Offset == nil {
			return nil, errors.New("offset json file: every partition needs topic, partition and offset")
		}
		if _, dup := os.Lookup(p.Topic, *p.Partition); dup {
			return nil, fmt.Errorf("offset json file contains duplicate topic partitions: %s-%d", p.Topic, *p.Partition)
		}
		os.Add(kadm.Offset{Topic: p.Topic, Partition: *p.Partition, At: *p.Offset, LeaderEpoch: -1})
	}
	return os, nil
}
