package logdirs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Replica is one partition's replica in a log dir.
type Replica struct {
	Topic     string
	Partition int32
	Size      int64
	OffsetLag int64
	IsFuture  bool
}

// LogDir is one log directory of a broker. ErrorCode is the broker's
// error for the whole dir (KAFKA_STORAGE_ERROR for an offline dir).
type LogDir struct {
	Path      string
	ErrorCode int16
	Replicas  []Replica
}

// Broker is one broker's answer.
type Broker struct {
	ID      int32
	LogDirs []LogDir
}

// Describe sends DescribeLogDirs for every partition to each of brokers
// and returns their answers in the order of brokers.
func Describe(ctx context.Context, cl *kgo.Client, brokers []int32) ([]Broker, error) {
	out := make([]Broker, 0, len(brokers))
	for _, id := range brokers {
		req := kmsg.NewPtrDescribeLogDirsRequest()
		resp, err := req.RequestWith(ctx, cl.Broker(int(id)))
		if err != nil {
			return nil, fmt.Errorf("describe log dirs of broker %d: %w", id, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, fmt.Errorf("describe log dirs of broker %d: %w", id, err)
		}
		b := Broker{ID: id}
		for _, d := range resp.Dirs {
			ld := LogDir{Path: d.Dir, ErrorCode: d.ErrorCode}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					ld.Replicas = append(ld.Replicas, Replica{Topic: t.Topic, Partition: p.Partition, Size: p.Size,
						OffsetLag: p.OffsetLag, IsFuture: p.IsFuture})
				}
			}
			b.LogDirs = append(b.LogDirs, ld)
		}
		out = append(out, b)
	}
	return out, nil
}

// WriteJSON prints the JSON document of kafka-log-dirs.sh for brokers,
// keeping only the partitions of topics (all when topics is empty).
func WriteJSON(w io.Writer, brokers []Broker, topics []string) error {
	brokers = javaHashOrder(brokers, func(b Broker) int32 { return b.ID })
	var b strings.Builder
	b.WriteString(`{"brokers":[`)
	for i, br := range brokers {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"broker":%d,"logDirs":[`, br.ID)
		dirs := javaHashOrder(br.LogDirs, func(d LogDir) int32 { return javaStringHash(d.Path) })
		for j, d := range dirs {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"partitions":[`)
			var rs []Replica
			for _, r := range d.Replicas {
				if len(topics) == 0 || slices.Contains(topics, r.Topic) {
					rs = append(rs, r)
				}
			}
			rs = javaHashOrder(rs, func(r Replica) int32 { return 31*(31+r.Partition) + javaStringHash(r.Topic) })
			for k, r := range rs {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"partition":%s,"size":%d,"offsetLag":%d,"isFuture":%t}`,
					jsonString(r.Topic+"-"+strconv.Itoa(int(r.Partition))), r.Size, r.OffsetLag, r.IsFuture)
			}
			b.WriteString(`],"error":`)
			if d.ErrorCode == 0 {
				b.WriteString("null")
			} else {
				b.WriteString(jsonString("org.apache.kafka.common.errors." + cli.JavaErrorClass(d.ErrorCode)))
			}
			b.WriteString(`,"logDir":` + jsonString(d.Path) + "}")
		}
		b.WriteString("]}")
	}
	b.WriteString(`],"version":1}` + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func jsonString(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

// javaStringHash is Java's String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, c := range s {
		if c > 0xFFFF { // a surrogate pair in UTF-16
			c -= 0x10000
			h = 31*h + int32(0xD800+(c>>10))
			h = 31*h + int32(0xDC00+(c&0x3FF))
			continue
		}
		h = 31*h + int32(c)
	}
	return h
}

// javaHashOrder returns items in the order a java.util.HashMap (or
// HashSet) holding them, inserted in the given order, iterates: by bucket
// of the spread hash in a table of the size the map grows to, then by
// insertion within a bucket.
func javaHashOrder[T any](items []T, hash func(T) int32) []T {
	size := 16
	for float64(len(items)) > 0.75*float64(size) {
		size *= 2
	}
	bucket := func(x T) int {
		h := hash(x)
		return int((h ^ int32(uint32(h)>>16)) & int32(size-1))
	}
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return bucket(a) - bucket(b) })
	return out
}

// JoinIDs is Kafka's comma-joined id set in hash order: 1,2,3.
func JoinIDs(ids []int32) string {
	ids = javaHashOrder(ids, func(id int32) int32 { return id })
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// Run runs `silkworm log-dirs` with args (without the command name),
// writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("log-dirs", "This tool helps to query log directory usage on the specified brokers.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "The server(s) to use for bootstrapping", "REQUIRED: the server(s) to use for bootstrapping", "")
	commandConfig := p.String("command-config", "Admin client property file", "Property file containing configs to be passed to Admin Client.", "")
	p.Flag("describe", "Describe the specified log directories on the specified brokers.")
	topicList := p.String("topic-list", "Topic list", `The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be queried if no topic list is specified`, "")
	brokerList := p.String("broker-list", "Broker list", `The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be queried if no broker list is specified`, "")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if rest := p.Args(); len(rest) > 0 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest, " "))
	}
	if err := p.Require("bootstrap-server", "describe"); err != nil {
		return err
	}
	var topics []string
	for _, t := range strings.Split(*topicList, ",") {
		if t != "" && !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	var asked []int32
	for _, s := range strings.Split(*brokerList, ",") {
		if s == "" {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return fmt.Errorf("For input string: \"%s\"", s)
		}
		if !slices.Contains(asked, int32(id)) {
			asked = append(asked, int32(id))
		}
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	var inCluster []int32
	for _, b := range meta.Brokers {
		inCluster = append(inCluster, b.NodeID)
	}
	brokers := inCluster
	if len(asked) > 0 {
		var missing []int32
		brokers = nil
		for _, id := range asked {
			if slices.Contains(inCluster, id) {
				brokers = append(brokers, id)
			} else {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("ERROR: The given brokers do not exist from --broker-list: %s. Current existent brokers: %s",
				JoinIDs(missing), JoinIDs(inCluster))
		}
	}
	brokers = javaHashOrder(brokers, func(id int32) int32 { return id })
	fmt.Fprintln(stdout, "Querying brokers for log directories information")
	described, err := Describe(ctx, cl, brokers)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Received log directory information from brokers %s\n", JoinIDs(brokers))
	return WriteJSON(stdout, described, topics)
}
