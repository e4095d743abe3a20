package topics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// options are the parsed command line of `silkworm topics`.
type options struct {
	p                        *cli.Parser
	bootstrap, commandConfig string
	list, create, del        *bool
	alter, describe          *bool
	topic, topicID           *string
	configs                  *[]string
	partitions, rf           *int
	assignment               *string
	filter                   DescribeFilter
	underRep, unavail        *bool
	underMin, atMin          *bool
	overrides                *bool
	ifExists, ifNotExists    *bool
	excludeInternal          *bool
}

func parse(args []string, stdout io.Writer) (*options, error) {
	p := cli.NewParser("topics", "Create, delete, describe, or change a topic.")
	p.Output = stdout
	o := &options{p: p}
	bs := p.String("bootstrap-server", "String: server to connect to", "REQUIRED: The Kafka server to connect to.", "")
	cc := p.String("command-config", "command config property file", "Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs.", "")
	o.list = p.Flag("list", "List all available topics.")
	o.create = p.Flag("create", "Create a new topic.")
	o.del = p.Flag("delete", "Delete a topic")
	o.alter = p.Flag("alter", "Alter the number of partitions and replica assignment. (To alter topic configurations, the kafka-configs tool can be used.)")
	o.describe = p.Flag("describe", "List details for the given topics.")
	o.topic = p.String("topic", "topic", "The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option. Put topic name in double quotes and use the '\\' prefix to escape regular expression symbols; e.g. \"test\\.topic\".", "")
	o.topicID = p.String("topic-id", "topic-id", "The topic-id to describe. This is used only with --bootstrap-server option for describing topics.", "")
	o.configs = p.List("config", "name=value", "A topic configuration override for the topic being created. Repeat the option for several configs.")
	p.Ignored("delete-config", "name", "No longer supported; use the configs tool to delete topic configs.")
	o.partitions = p.Int("partitions", "# of partitions", "The number of partitions for the topic being created or altered. If not supplied for create, defaults to the cluster default.", 0)
	o.rf = p.Int("replication-factor", "replication factor", "The replication factor for each partition in the topic being created. If not supplied, defaults to the cluster default.", 0)
	o.assignment = p.String("replica-assignment", "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...", "A list of manual partition-to-broker assignments for the topic being created or altered.", "")
	o.underRep = p.Flag("under-replicated-partitions", "If set when describing topics, only show under replicated partitions")
	o.unavail = p.Flag("unavailable-partitions", "If set when describing topics, only show partitions whose leader is not available")
	o.underMin = p.Flag("under-min-isr-partitions", "If set when describing topics, only show partitions whose isr count is less than the configured minimum.")
	o.atMin = p.Flag("at-min-isr-partitions", "If set when describing topics, only show partitions whose isr count is equal to the configured minimum.")
	o.overrides = p.Flag("topics-with-overrides", "If set when describing topics, only show topics that have overridden configs")
	o.ifExists = p.Flag("if-exists", "If set when altering or deleting or describing topics, the action will only execute if the topic exists.")
	o.ifNotExists = p.Flag("if-not-exists", "If set when creating topics, the action will only execute if the topic does not already exist.")
	o.excludeInternal = p.Flag("exclude-internal", "Exclude internal topics when running list or describe command. The internal topics will be listed by default")
	p.Ignored("partition-size-limit-per-response", "maximum number of partitions in one response", "Accepted for compatibility; partitions are read with one Metadata request.")
	if err := p.Parse(args); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return nil, err
	}
	if err := p.RequireOneOf("list", "describe", "create", "alter", "delete"); err != nil {
		return nil, fmt.Errorf("command must include exactly one action: --list, --describe, --create, --alter or --delete (%w)", err)
	}
	o.bootstrap, o.commandConfig = *bs, *cc
	switch {
	case *o.create:
		if err := p.Require("topic"); err != nil {
			return nil, err
		}
		if p.Has("replica-assignment") && (p.Has("partitions") || p.Has("replication-factor")) {
			return nil, errors.New("option \"[replica-assignment]\" can't be used with option \"[partitions]\" or \"[replication-factor]\"")
		}
	case *o.alter:
		if err := p.Require("topic"); err != nil {
			return nil, err
		}
		if p.Has("config") {
			return nil, errors.New("option \"[alter]\" can't be used with option \"[config]\" (To alter topic configurations, the configs tool can be used.)")
		}
		if !p.Has("partitions") {
			return nil, errors.New("missing required argument \"[partitions]\" for --alter")
		}
	case *o.del:
		if err := p.Require("topic"); err != nil {
			return nil, err
		}
	}
	if p.Has("config") && !*o.create {
		return nil, errors.New("option \"[config]\" can only be used with option \"[create]\"")
	}
	if (p.Has("partitions") || p.Has("replication-factor")) && !*o.create && !*o.alter {
		return nil, errors.New("options \"[partitions]\" and \"[replication-factor]\" can only be used with \"[create]\" or \"[alter]\"")
	}
	if *o.ifNotExists && !*o.create {
		return nil, errors.New("option \"[if-not-exists]\" can only be used with option \"[create]\"")
	}
	if *o.ifExists && !(*o.alter || *o.del || *o.describe) {
		return nil, errors.New("option \"[if-exists]\" can only be used with \"[alter]\", \"[delete]\" or \"[describe]\"")
	}
	o.filter = DescribeFilter{UnderReplicated: *o.underRep, Unavailable: *o.unavail, UnderMinISR: *o.underMin,
		AtMinISR: *o.atMin, TopicsWithOverride: *o.overrides}
	return o, nil
}

// Run is `silkworm topics` with Kafka's kafka-topics.sh options.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout)
	if err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	cl, adm, err := cli.NewAdmin(ctx, o.commandConfig, o.bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	switch {
	case *o.create:
		err = o.createTopic(ctx, cl, stdout)
	case *o.list:
		err = o.listTopics(ctx, adm, stdout)
	case *o.describe:
		err = o.describeTopics(ctx, adm, stdout)
	case *o.alter:
		err = o.alterTopics(ctx, adm)
	case *o.del:
		err = o.deleteTopics(ctx, adm)
	}
	if err != nil {
		return fmt.Errorf("Error while executing topic command : %w", err)
	}
	return nil
}

// includeList is Kafka's TopicFilter.IncludeList: commas become
// alternatives, spaces and surrounding quotes are dropped, and the regular
// expression must match the whole name.
func includeList(expr string) (*regexp.Regexp, error) {
	e := strings.ReplaceAll(strings.TrimSpace(expr), ",", "|")
	e = strings.ReplaceAll(e, " ", "")
	e = strings.Trim(e, "\"'")
	re, err := regexp.Compile("^(?:" + e + ")$")
	if err != nil {
		return nil, fmt.Errorf("%s is an invalid regex: %w", expr, err)
	}
	return re, nil
}

func isInternal(topic string) bool {
	return topic == "__consumer_offsets" || topic == "__transaction_state"
}

// matchingTopics lists the topics the --topic option selects, sorted.
func (o *options) matchingTopics(ctx context.Context, adm *kadm.Client) ([]string, kadm.TopicDetails, error) {
	all, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list topics: %w", err)
	}
	var re *regexp.Regexp
	if o.p.Has("topic") {
		if re, err = includeList(*o.topic); err != nil {
			return nil, nil, err
		}
	}
	var names []string
	for name, d := range all {
		if d.Err != nil && !errors.Is(d.Err, kerr.LeaderNotAvailable) {
			continue
		}
		if *o.excludeInternal && (d.IsInternal || isInternal(name)) {
			continue
		}
		if re != nil && !re.MatchString(name) {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, all, nil
}

// ensureTopicExists is Kafka's check that the --topic given matched something.
func (o *options) ensureTopicExists(names []string) error {
	if len(names) == 0 && o.p.Has("topic") && !*o.ifExists {
		return fmt.Errorf("topic '%s' does not exist as expected", *o.topic)
	}
	return nil
}

func (o *options) listTopics(ctx context.Context, adm *kadm.Client, w io.Writer) error {
	names, _, err := o.matchingTopics(ctx, adm)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, strings.Join(names, "\n"))
	return nil
}

func (o *options) createTopic(ctx context.Context, cl *kgo.Client, w io.Writer) error {
	name := *o.topic
	if o.p.Has("replication-factor") && (*o.rf < 1 || *o.rf > 32767) {
		return errors.New("the replication factor must be between 1 and 32767 inclusive")
	}
	if o.p.Has("partitions") && *o.partitions < 1 {
		return errors.New("the partitions must be greater than 0")
	}
	if strings.ContainsAny(name, "._") {
		fmt.Fprintln(w, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.")
	}
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = name
	t.NumPartitions, t.ReplicationFactor = -1, -1
	if o.p.Has("partitions") {
		t.NumPartitions = int32(*o.partitions)
	}
	if o.p.Has("replication-factor") {
		t.ReplicationFactor = int16(*o.rf)
	}
	if o.p.Has("replica-assignment") {
		asg, err := parseReplicaAssignment(*o.assignment)
		if err != nil {
			return err
		}
		for i, replicas := range asg {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), replicas
			t.ReplicaAssignment = append(t.ReplicaAssignment, a)
		}
	}
	for _, kv := range *o.configs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("invalid topic config: all configs to be added must be in the format \"key=val\", got %q", kv)
		}
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = strings.TrimSpace(k), kmsg.StringPtr(strings.TrimSpace(v))
		t.Configs = append(t.Configs, c)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("create topic %s: the response has %d topics", name, len(resp.Topics))
	}
	rt := resp.Topics[0]
	if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
		if errors.Is(err, kerr.TopicAlreadyExists) && *o.ifNotExists {
			return nil
		}
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("topic '%s' already exists", name)
		}
		if rt.ErrorMessage != nil && *rt.ErrorMessage != "" {
			return fmt.Errorf("%w: %s", err, *rt.ErrorMessage)
		}
		return err
	}
	fmt.Fprintf(w, "Created topic %s.\n", name)
	return nil
}

// parseReplicaAssignment reads "1:2,2:3" (partitions separated by commas,
// replicas by colons).
func parseReplicaAssignment(s string) ([][]int32, error) {
	var out [][]int32
	for i, part := range strings.Split(s, ",") {
		var replicas []int32
		seen := map[int32]bool{}
		for _, r := range strings.Split(part, ":") {
			id, err := strconv.ParseInt(strings.TrimSpace(r), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("invalid replica assignment %q: %w", s, err)
			}
			if seen[int32(id)] {
				return nil, fmt.Errorf("partition replica lists may not contain duplicate entries: partition %d has %d twice", i, id)
			}
			seen[int32(id)] = true
			replicas = append(replicas, int32(id))
		}
		if i > 0 && len(replicas) != len(out[0]) {
			return nil, fmt.Errorf("partition %d has different replication factor: %v", i, replicas)
		}
		out = append(out, replicas)
	}
	return out, nil
}

func (o *options) alterTopics(ctx context.Context, adm *kadm.Client) error {
	names, all, err := o.matchingTopics(ctx, adm)
	if err != nil {
		return err
	}
	if err := o.ensureTopicExists(names); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	for _, n := range names {
		if cur := len(all[n].Partitions); *o.partitions <= cur {
			return fmt.Errorf("the number of partitions for a topic can only be increased. Topic %s currently has %d partitions, %d would not be an increase", n, cur, *o.partitions)
		}
	}
	resps, err := adm.UpdatePartitions(ctx, *o.partitions, names...)
	if err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("topic %s: %w: %s", r.Topic, r.Err, r.ErrMessage)
			}
			return fmt.Errorf("topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

func (o *options) deleteTopics(ctx context.Context, adm *kadm.Client) error {
	names, _, err := o.matchingTopics(ctx, adm)
	if err != nil {
		return err
	}
	if err := o.ensureTopicExists(names); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	resps, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			return fmt.Errorf("delete topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

func (o *options) describeTopics(ctx context.Context, adm *kadm.Client, w io.Writer) error {
	names, all, err := o.matchingTopics(ctx, adm)
	if err != nil {
		return err
	}
	if o.p.Has("topic-id") {
		names = names[:0]
		for name, d := range all {
			if uuidString(d.ID) == *o.topicID {
				names = append(names, name)
			}
		}
		if len(names) == 0 && !*o.ifExists {
			return fmt.Errorf("topicId '%s' does not exist as expected", *o.topicID)
		}
	} else if err := o.ensureTopicExists(names); err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("describe cluster: %w", err)
	}
	f := o.filter
	f.LiveBrokers = map[int32]bool{}
	for _, b := range brokers {
		f.LiveBrokers[b.NodeID] = true
	}
	for _, name := range names {
		d := all[name]
		td := TopicDescription{Name: name, ID: d.ID}
		rc, err := cfgs.On(name, nil)
		if err != nil {
			return fmt.Errorf("describe configs of topic %s: %w", name, err)
		}
		if rc.Err != nil {
			return fmt.Errorf("describe configs of topic %s: %w", name, rc.Err)
		}
		for _, c := range rc.Configs {
			td.Configs = append(td.Configs, ConfigEntry{Name: c.Key, Value: c.Value, IsDefault: c.Source == kmsg.ConfigSourceDefaultConfig})
		}
		for _, p := range d.Partitions.Sorted() {
			td.Partitions = append(td.Partitions, PartitionDescription{Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR})
		}
		if len(td.Partitions) > 0 {
			td.ReplicationFactor = len(td.Partitions[0].Replicas)
		}
		WriteDescription(w, &td, f)
	}
	return nil
}
