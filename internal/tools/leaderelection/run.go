package leaderelection

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Election types as Kafka's ElectionType prints them.
const (
	Preferred = "PREFERRED"
	Unclean   = "UNCLEAN"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's TopicPartition.toString: topic-partition.
func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// Result is the outcome of the election of one partition: Code 0 for a
// new leader, ELECTION_NOT_NEEDED for a partition whose leader was
// already the one the election would choose, any other code a failure
// with the broker's message.
type Result struct {
	TopicPartition
	Code    int16
	Message string
}

// Elect sends ElectLeaders (to the controller, through cl) for partitions,
// or for every partition when partitions is nil, and returns one result
// per partition the response names.
func Elect(ctx context.Context, cl *kgo.Client, electionType string, partitions []TopicPartition) ([]Result, error) {
	req := kmsg.NewPtrElectLeadersRequest()
	req.TimeoutMillis = 30000
	if electionType == Unclean {
		req.ElectionType = 1
	}
	if partitions != nil {
		byTopic := map[string]int{}
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, tp := range partitions {
			i, ok := byTopic[tp.Topic]
			if !ok {
				i = len(req.Topics)
				byTopic[tp.Topic] = i
				t := kmsg.NewElectLeadersRequestTopic()
				t.Topic = tp.Topic
				req.Topics = append(req.Topics, t)
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, errTimeout
		}
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.ClusterAuthorizationFailed) {
			return nil, errNotAuthorized
		}
		return nil, err
	}
	var out []Result
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			r := Result{TopicPartition: TopicPartition{t.Topic, p.Partition}, Code: p.ErrorCode}
			if p.ErrorMessage != nil {
				r.Message = *p.ErrorMessage
			}
			out = append(out, r)
		}
	}
	return out, nil
}

var (
	errTimeout       = errors.New("Timeout waiting for election results")
	errNotAuthorized = errors.New("Not authorized to perform leader election")
)

// WriteResults prints the results as Kafka does (successes, then
// partitions that needed no election, then each failure) and returns
// Kafka's "N replica(s) could not be elected" when any failed.
func WriteResults(w io.Writer, electionType string, results []Result) error {
	results = slices.Clone(results)
	slices.SortFunc(results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var ok, noop []string
	var failed []Result
	for _, r := range results {
		switch r.Code {
		case 0:
			ok = append(ok, r.String())
		case kerr.ElectionNotNeeded.Code:
			noop = append(noop, r.String())
		default:
			failed = append(failed, r)
		}
	}
	var b strings.Builder
	if len(ok) > 0 {
		fmt.Fprintf(&b, "Successfully completed leader election (%s) for partitions %s\n", electionType, strings.Join(ok, ", "))
	}
	if len(noop) > 0 {
		fmt.Fprintf(&b, "Valid replica already elected for partitions %s\n", strings.Join(noop, ", "))
	}
	for _, r := range failed {
		fmt.Fprintf(&b, "Error completing leader election (%s) for partition: %s: %s\n", electionType, r, javaException(r.Code, r.Message))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d replica(s) could not be elected", len(failed))
	}
	return nil
}

// javaException is how Java prints the exception the admin client makes
// of an error code: its class, then the broker's message or the error's
// default description.
func javaException(code int16, message string) string {
	if message == "" {
		var ke *kerr.Error
		if errors.As(kerr.ErrorForCode(code), &ke) {
			message = ke.Description
		}
	}
	return "org.apache.kafka.common.errors." + cli.JavaErrorClass(code) + ": " + message
}

// ParseJSON reads Kafka's election JSON: {"partitions": [{"topic": "t",
// "partition": 0}, ...]}, refusing duplicates as Kafka does.
func ParseJSON(data []byte) ([]TopicPartition, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse replica election data: %w", err)
	}
	if doc == nil {
		return nil, errors.New("Replica election data is empty")
	}
	raw, ok := doc["partitions"]
	if !ok {
		return nil, errors.New(`Replica election data is missing "partitions" field`)
	}
	var entries []struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("parse replica election data: %w", err)
	}
	var out []TopicPartition
	seen := map[TopicPartition]int{}
	var dups []string
	for _, e := range entries {
		if e.Topic == nil || e.Partition == nil {
			return nil, errors.New(`Replica election data entries need "topic" and "partition"`)
		}
		tp := TopicPartition{*e.Topic, *e.Partition}
		seen[tp]++
		if seen[tp] == 2 {
			dups = append(dups, tp.String())
		}
		if seen[tp] == 1 {
			out = append(out, tp)
		}
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("Replica election data contains duplicate partitions: [%s]", strings.Join(dups, ", "))
	}
	return out, nil
}

// Run runs `silkworm leader-election` with args (without the command
// name), writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("leader-election", "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "host:port", "A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED.", "")
	commandConfig := p.String("command-config", "config file", "Property file containing configs to be passed to Admin Client.", "")
	adminConfig := p.String("admin.config", "config file", "DEPRECATED: Configuration properties files to pass to the admin client. Use --command-config instead.", "")
	jsonFile := p.String("path-to-json-file", "Path to JSON file", `The JSON file with the list of partition for which leader elections should be performed. This is an example format. {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}] } Not allowed if --all-topic-partitions or --topic flags are specified.`, "")
	topic := p.String("topic", "topic name", "Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified.", "")
	partition := p.Int("partition", "partition id", "Partition id for which to perform an election. REQUIRED if --topic is specified.", 0)
	all := p.Flag("all-topic-partitions", "Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.")
	electionType := p.Choice("election-type", []string{Preferred, Unclean}, `Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. If preferred election is selection, the election is only performed if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the election is only performed if there are no leader for the topic partition. REQUIRED.`, "")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if rest := p.Args(); len(rest) > 0 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest, " "))
	}
	var missing []string
	if !p.Has("bootstrap-server") {
		missing = append(missing, "bootstrap-server")
	}
	if !p.Has("election-type") {
		missing = append(missing, "election-type")
	}
	if len(missing) > 0 {
		return fmt.Errorf("Missing required option(s): %s", strings.Join(missing, ", "))
	}
	n := 0
	for _, o := range []string{"topic", "all-topic-partitions", "path-to-json-file"} {
		if p.Has(o) {
			n++
		}
	}
	switch {
	case n != 1:
		return errors.New("One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file")
	case p.Has("topic") && !p.Has("partition"):
		return errors.New("Missing required option(s): partition")
	case !p.Has("topic") && p.Has("partition"):
		return errors.New("Option partition is only allowed if topic is used")
	case p.Has("command-config") && p.Has("admin.config"):
		return errors.New("Option \"[command-config]\" can't be used with option \"[admin.config]\"")
	}
	var partitions []TopicPartition
	switch {
	case p.Has("topic"):
		partitions = []TopicPartition{{*topic, int32(*partition)}}
	case p.Has("path-to-json-file"):
		data, err := os.ReadFile(*jsonFile)
		if err != nil {
			return err
		}
		if partitions, err = ParseJSON(data); err != nil {
			return err
		}
	}
	_ = *all
	cl, _, err := cli.NewAdmin(ctx, cmp.Or(*commandConfig, *adminConfig), *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	results, err := Elect(ctx, cl, *electionType, partitions)
	if err != nil {
		if errors.Is(err, errTimeout) || errors.Is(err, errNotAuthorized) {
			fmt.Fprintln(stdout, err)
		}
		return err
	}
	return WriteResults(stdout, *electionType, results)
}
