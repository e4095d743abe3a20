package reassign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The throttle configs a reassignment sets (Kafka's QuotaConfig names).
const (
	LeaderThrottledRate       = "leader.replication.throttled.rate"
	FollowerThrottledRate     = "follower.replication.throttled.rate"
	LogDirThrottledRate       = "replica.alter.log.dirs.io.max.bytes.per.second"
	LeaderThrottledReplicas   = "leader.replication.throttled.replicas"
	FollowerThrottledReplicas = "follower.replication.throttled.replicas"
)

// brokerThrottles and topicThrottles are what --verify and --cancel delete.
var (
	brokerThrottles = []string{LeaderThrottledRate, FollowerThrottledRate, LogDirThrottledRate}
	topicThrottles  = []string{LeaderThrottledReplicas, FollowerThrottledReplicas}
)

const (
	msgExistingReassignment = "Cannot execute because there is an existing partition assignment.  Use --additional to " +
		"override this and create a new partition assignment in addition to the existing one. The --additional flag " +
		"can also be used to change the throttle by resubmitting the current reassignment."
	msgRunVerify = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the " +
		"throttle is removed."
)

// Admin runs the tool's actions against a cluster, printing to Out as
// Kafka's tool prints to stdout. It is safe for concurrent use only if Out
// is.
type Admin struct {
	Client *kadm.Client
	Kafka  *kgo.Client // the client under Client, for requests kadm cannot make
	Out    io.Writer
	// Rand returns a random int in [0, n); Generate uses it for Kafka's
	// random start of the replica placement. Nil means 0.
	Rand func(n int) int
	// Poll is the pause between AlterReplicaLogDirs attempts; 0 means
	// 100ms, as Kafka.
	Poll time.Duration
}

func (a *Admin) printf(format string, args ...any) { fmt.Fprintf(a.Out, format, args...) }

// describeTopics returns the replica assignment of every partition of
// topics; a topic that does not exist is Kafka's "Topic x not found.".
func (a *Admin) describeTopics(ctx context.Context, topics []string) (Assignment, error) {
	details, err := a.Client.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	out := Assignment{}
	for _, t := range topics {
		d, ok := details[t]
		if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("Topic %s not found.", t)
		}
		if d.Err != nil {
			return nil, fmt.Errorf("describe topic %s: %w", t, d.Err)
		}
		for _, p := range d.Partitions {
			out[Partition{t, p.Partition}] = slices.Clone(p.Replicas)
		}
	}
	return out, nil
}

// brokers returns the cluster's brokers sorted by id.
func (a *Admin) brokers(ctx context.Context) ([]Broker, error) {
	m, err := a.Client.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	var out []Broker
	for _, b := range m.Brokers {
		br := Broker{ID: b.NodeID}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		out = append(out, br)
	}
	slices.SortFunc(out, func(x, y Broker) int { return int(x.ID) - int(y.ID) })
	return out, nil
}

// Generate is --generate: it proposes a placement of every partition of
// the topics in topicsJSON on the brokers of brokerList ("1,2,3"), keeping
// each topic's replication factor, prints the current and the proposed
// assignment, and returns them.
func (a *Admin) Generate(ctx context.Context, topicsJSON, brokerList string, rackAware bool) (current, proposed Assignment, err error) {
	var ids []int32
	for _, s := range strings.Split(brokerList, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("For input string: \"%s\"", s)
		}
		ids = append(ids, int32(id))
	}
	if d := duplicates(ids); len(d) > 0 {
		return nil, nil, fmt.Errorf("Broker list contains duplicate entries: %s", javaList(d))
	}
	topics, err := ParseTopicsJSON(topicsJSON)
	if err != nil {
		return nil, nil, err
	}
	var dupTopics []string
	seen := map[string]int{}
	for _, t := range topics {
		if seen[t]++; seen[t] == 2 {
			dupTopics = append(dupTopics, t)
		}
	}
	if len(dupTopics) > 0 {
		slices.Sort(dupTopics)
		return nil, nil, fmt.Errorf("List of topics to reassign contains duplicate entries: %s", javaStrings(dupTopics))
	}
	current, err = a.describeTopics(ctx, topics)
	if err != nil {
		return nil, nil, err
	}
	all, err := a.brokers(ctx)
	if err != nil {
		return nil, nil, err
	}
	var chosen []Broker
	racked := 0
	for _, b := range all {
		if !slices.Contains(ids, b.ID) {
			continue
		}
		if !rackAware {
			b.Rack = ""
		}
		if b.Rack != "" {
			racked++
		}
		chosen = append(chosen, b)
	}
	if rackAware && racked != 0 && racked != len(chosen) {
		return nil, nil, errors.New("Not all brokers have rack information. Add --disable-rack-aware in command line " +
			"to make replica assignment without rack information.")
	}
	proposed, err = proposeAssignment(current, chosen, a.Rand)
	if err != nil {
		return nil, nil, err
	}
	a.printf("Current partition replica assignment\n%s\n\n", FormatReassignmentJSON(current, nil))
	a.printf("Proposed partition reassignment configuration\n%s\n", FormatReassignmentJSON(proposed, nil))
	return current, proposed, nil
}

// proposeAssignment places every topic of current anew on brokers with
// the replication factor of its first partition (Kafka's
// calculateAssignment).
func proposeAssignment(current Assignment, brokers []Broker, rnd func(int) int) (Assignment, error) {
	if rnd == nil {
		rnd = func(int) int { return 0 }
	}
	byTopic := map[string][]Partition{}
	for _, p := range current.sortedPartitions() {
		byTopic[p.Topic] = append(byTopic[p.Topic], p)
	}
	topics := make([]string, 0, len(byTopic))
	for t := range byTopic {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	out := Assignment{}
	for _, t := range topics {
		parts := byTopic[t]
		n := max(len(brokers), 1)
		placed, err := AssignReplicas(brokers, len(parts), len(current[parts[0]]), rnd(n), rnd(n))
		if err != nil {
			return nil, err
		}
		for id, replicas := range placed {
			out[Partition{t, id}] = replicas
		}
	}
	return out, nil
}

// ExecuteOptions are --execute's options: Throttle and LogDirThrottle in
// bytes/s, negative for none.
type ExecuteOptions struct {
	Additional     bool
	Throttle       int64
	LogDirThrottle int64
	Timeout        time.Duration
}

// currentReassignments lists the reassignments in progress, of every
// partition when only is nil. (kadm's ListPartitionReassignments cannot ask
// for all: it answers an empty set without asking.)
func (a *Admin) currentReassignments(ctx context.Context, only kadm.TopicsSet) (map[Partition]kadm.ListPartitionReassignmentsResponse, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 30000
	for t, ps := range only {
		rt := kmsg.NewListPartitionReassignmentsRequestTopic()
		rt.Topic = t
		for p := range ps {
			rt.Partitions = append(rt.Partitions, p)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, a.Kafka)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err != nil && resp.ErrorMessage != nil {
			err = fmt.Errorf("%w: %s", err, *resp.ErrorMessage)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", err)
	}
	out := map[Partition]kadm.ListPartitionReassignmentsResponse{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			out[Partition{rt.Topic, rp.Partition}] = kadm.ListPartitionReassignmentsResponse{Topic: rt.Topic, Partition: rp.Partition,
				Replicas: rp.Replicas, AddingReplicas: rp.AddingReplicas, RemovingReplicas: rp.RemovingReplicas}
		}
	}
	return out, nil
}

// Execute is --execute: it starts the reassignment of reassignmentJSON,
// printing the current assignment for a rollback first and setting the
// throttles of opts.
func (a *Admin) Execute(ctx context.Context, reassignmentJSON string, opts ExecuteOptions) error {
	plan, err := ParseReassignmentJSON(reassignmentJSON)
	if err != nil {
		return err
	}
	proposed, err := checkExecutePlan(plan)
	if err != nil {
		return err
	}
	ongoing, err := a.currentReassignments(ctx, nil)
	if err != nil {
		return err
	}
	if !opts.Additional && len(ongoing) > 0 {
		return errors.New(msgExistingReassignment)
	}
	all, err := a.brokers(ctx)
	if err != nil {
		return err
	}
	known := map[int32]bool{}
	for _, b := range all {
		known[b.ID] = true
	}
	for _, t := range plan.Targets {
		for _, id := range t.Replicas {
			if !known[id] {
				return fmt.Errorf("Unknown broker id %d", id)
			}
		}
	}
	current, err := a.currentOf(ctx, proposed)
	if err != nil {
		return err
	}
	a.printf("%s\n", formatRollback(current))
	if opts.Throttle >= 0 || opts.LogDirThrottle >= 0 {
		a.printf("%s\n", msgRunVerify)
		if opts.Throttle >= 0 {
			moves := proposedMoves(ongoing, proposed, current)
			if err := a.setReassignmentThrottle(ctx, moves, opts.Throttle); err != nil {
				return err
			}
		}
		if opts.LogDirThrottle >= 0 {
			var moving []int32
			for r := range plan.LogDirs {
				if !slices.Contains(moving, r.Broker) {
					moving = append(moving, r.Broker)
				}
			}
			slices.Sort(moving)
			if len(moving) > 0 {
				v := strconv.FormatInt(opts.LogDirThrottle, 10)
				if err := a.alterBrokerConfigs(ctx, moving, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: LogDirThrottledRate, Value: &v}}); err != nil {
					return err
				}
			}
			a.printf("The replica-alter-dir throttle limit was set to %d B/s\n", opts.LogDirThrottle)
		}
	}
	var req kadm.AlterPartitionAssignmentsReq
	for p, replicas := range proposed {
		req.Assign(p.Topic, p.Partition, replicas)
	}
	resps, err := a.Client.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return fmt.Errorf("alter partition reassignments: %w", err)
	}
	if failed := partitionErrors(resps); len(failed) > 0 {
		return fmt.Errorf("Error reassigning partition(s):\n%s", strings.Join(failed, "\n"))
	}
	ps := proposed.sortedPartitions()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	a.printf("Successfully started partition reassignment%s for %s\n", plural(len(ps)), strings.Join(names, ","))
	if len(plan.LogDirs) > 0 {
		return a.executeMoves(ctx, plan.LogDirs, opts.Timeout)
	}
	return nil
}

// currentOf returns the current replicas of the partitions of proposed;
// a partition that does not exist is Kafka's "Unable to find partition".
func (a *Admin) currentOf(ctx context.Context, proposed Assignment) (Assignment, error) {
	var topics []string
	for p := range proposed {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	slices.Sort(topics)
	all, err := a.describeTopics(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := Assignment{}
	var missing []string
	for _, p := range proposed.sortedPartitions() {
		if r, ok := all[p]; ok {
			out[p] = r
		} else {
			missing = append(missing, p.String())
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("Unable to find partition: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// partitionErrors formats the failed partitions of an
// AlterPartitionReassignments response as Kafka's tool does, sorted.
func partitionErrors(resps kadm.AlterPartitionAssignmentsResponses) []string {
	type failure struct {
		p   Partition
		msg string
	}
	var fs []failure
	resps.Each(func(r kadm.AlterPartitionAssignmentsResponse) {
		if r.Err == nil {
			return
		}
		msg := r.ErrMessage
		if msg == "" {
			msg = kafkaMessage(r.Err)
		}
		fs = append(fs, failure{Partition{r.Topic, r.Partition}, msg})
	})
	slices.SortFunc(fs, func(x, y failure) int { return comparePartitions(x.p, y.p) })
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.p.String() + ": " + f.msg
	}
	return out
}

// kafkaMessage is the default message of a Kafka error code, as the Java
// client's exception carries it.
func kafkaMessage(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Description
	}
	return err.Error()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Move is the sources and destinations of one partition's reassignment
// (Kafka's PartitionMove).
type Move struct {
	Sources, Destinations []int32
}

// proposedMoves is Kafka's calculateProposedMoveMap: the moves in progress
// plus, for each proposed partition, the sources (those of its move in
// progress, else its current replicas) and the destinations not among
// them.
func proposedMoves(ongoing map[Partition]kadm.ListPartitionReassignmentsResponse, proposed, current Assignment) map[Partition]Move {
	moves := map[Partition]Move{}
	for p, r := range ongoing {
		var src []int32
		for _, id := range r.Replicas {
			if !slices.Contains(r.AddingReplicas, id) {
				src = append(src, id)
			}
		}
		moves[p] = Move{Sources: sortedSet(src), Destinations: sortedSet(r.AddingReplicas)}
	}
	for p, replicas := range proposed {
		var src []int32
		if m, ok := moves[p]; ok {
			src = m.Sources
		} else {
			src = current[p]
		}
		var dst []int32
		for _, id := range replicas {
			if !slices.Contains(src, id) {
				dst = append(dst, id)
			}
		}
		moves[p] = Move{Sources: sortedSet(src), Destinations: sortedSet(dst)}
	}
	return moves
}

func sortedSet(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// ThrottledReplicas returns Kafka's topic throttle values for moves
// (calculateLeaderThrottles / calculateFollowerThrottles): per topic, the
// sorted "partition:broker" strings of the sources (leader) and of the
// destinations that are not sources (follower). Every topic of moves has an
// entry in both, possibly empty.
func ThrottledReplicas(moves map[Partition]Move) (leader, follower map[string]string) {
	lead, follow := map[string][]string{}, map[string][]string{}
	for p, m := range moves {
		if _, ok := lead[p.Topic]; !ok {
			lead[p.Topic], follow[p.Topic] = nil, nil
		}
		for _, s := range m.Sources {
			lead[p.Topic] = append(lead[p.Topic], fmt.Sprintf("%d:%d", p.Partition, s))
		}
		for _, d := range m.Destinations {
			if !slices.Contains(m.Sources, d) {
				follow[p.Topic] = append(follow[p.Topic], fmt.Sprintf("%d:%d", p.Partition, d))
			}
		}
	}
	join := func(in map[string][]string) map[string]string {
		out := map[string]string{}
		for t, cs := range in {
			slices.Sort(cs) // Kafka keeps them in a TreeSet of strings
			out[t] = strings.Join(slices.Compact(cs), ",")
		}
		return out
	}
	return join(lead), join(follow)
}

// setReassignmentThrottle sets the topic throttled-replicas configs of
// moves and the rate on every broker involved.
func (a *Admin) setReassignmentThrottle(ctx context.Context, moves map[Partition]Move, rate int64) error {
	leader, follower := ThrottledReplicas(moves)
	topics := make([]string, 0, len(leader))
	for t := range leader {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, t := range topics {
		l, f := leader[t], follower[t]
		ops := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: LeaderThrottledReplicas, Value: &l},
			{Op: kadm.SetConfig, Name: FollowerThrottledReplicas, Value: &f}}
		rs, err := a.Client.AlterTopicConfigs(ctx, ops, t)
		if err = alterErr(rs, err); err != nil {
			return fmt.Errorf("set throttled replicas of topic %s: %w", t, err)
		}
	}
	var brokers []int32
	for _, m := range moves {
		brokers = append(brokers, m.Sources...)
		brokers = append(brokers, m.Destinations...)
	}
	v := strconv.FormatInt(rate, 10)
	if err := a.alterBrokerConfigs(ctx, sortedSet(brokers), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: LeaderThrottledRate, Value: &v},
		{Op: kadm.SetConfig, Name: FollowerThrottledRate, Value: &v}}); err != nil {
		return err
	}
	a.printf("The inter-broker throttle limit was set to %d B/s\n", rate)
	return nil
}

// alterBrokerConfigs applies ops to each broker's own (per-broker) config.
func (a *Admin) alterBrokerConfigs(ctx context.Context, brokers []int32, ops []kadm.AlterConfig) error {
	for _, b := range brokers {
		rs, err := a.Client.AlterBrokerConfigs(ctx, ops, b)
		if err = alterErr(rs, err); err != nil {
			return fmt.Errorf("alter configs of broker %d: %w", b, err)
		}
	}
	return nil
}

func alterErr(rs kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
			return r.Err
		}
	}
	return nil
}

// clearAllThrottles is Kafka's clearAllThrottles: it deletes the broker
// throttles on every broker of the cluster and of targets, and the topic
// throttles on every topic of targets.
func (a *Admin) clearAllThrottles(ctx context.Context, targets []Target) error {
	all, err := a.brokers(ctx)
	if err != nil {
		return err
	}
	var brokers []int32
	for _, b := range all {
		brokers = append(brokers, b.ID)
	}
	var topics []string
	for _, t := range targets {
		brokers = append(brokers, t.Replicas...)
		if !slices.Contains(topics, t.Topic) {
			topics = append(topics, t.Topic)
		}
	}
	brokers = sortedSet(brokers)
	slices.Sort(topics)
	a.printf("Clearing broker-level throttles on broker%s %s\n", plural(len(brokers)), joinIDs(brokers))
	var del []kadm.AlterConfig
	for _, n := range brokerThrottles {
		del = append(del, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: n})
	}
	if err := a.alterBrokerConfigs(ctx, brokers, del); err != nil {
		return err
	}
	a.printf("Clearing topic-level throttles on topic%s %s\n", plural(len(topics)), strings.Join(topics, ","))
	del = del[:0]
	for _, n := range topicThrottles {
		del = append(del, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: n})
	}
	if len(topics) > 0 {
		rs, err := a.Client.AlterTopicConfigs(ctx, del, topics...)
		if err = alterErr(rs, err); err != nil {
			return fmt.Errorf("clear topic throttles: %w", err)
		}
	}
	return nil
}

// State is one partition's reassignment state for --verify (Kafka's
// PartitionReassignmentState): Done when no reassignment of it is in
// progress, Current its replicas (empty when it does not exist).
type State struct {
	Current, Target []int32
	Done            bool
}

// VerifyResult is what --verify found: PartitionsOngoing is true while any
// reassignment of the cluster is in progress, MovesOngoing while a log dir
// move of the file is.
type VerifyResult struct {
	States            map[Partition]State
	Moves             map[Replica]MoveState
	PartitionsOngoing bool
	MovesOngoing      bool
}

// Verify is --verify: it prints the state of each partition and log dir
// move of reassignmentJSON and, when nothing is in progress any more and
// preserveThrottles is false, clears the throttles.
func (a *Admin) Verify(ctx context.Context, reassignmentJSON string, preserveThrottles bool) (*VerifyResult, error) {
	plan, err := ParseReassignmentJSON(reassignmentJSON)
	if err != nil {
		return nil, err
	}
	states, ongoing, err := a.partitionStates(ctx, plan.Targets)
	if err != nil {
		return nil, err
	}
	a.printf("%s\n", FormatStatus(states))
	moves, err := a.logDirStates(ctx, plan.LogDirs)
	if err != nil {
		return nil, err
	}
	a.printf("%s\n", FormatMoveStates(moves))
	res := &VerifyResult{States: states, Moves: moves, PartitionsOngoing: ongoing}
	for _, m := range moves {
		if !m.Done() {
			res.MovesOngoing = true
		}
	}
	if !res.PartitionsOngoing && !res.MovesOngoing && !preserveThrottles {
		if err := a.clearAllThrottles(ctx, plan.Targets); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// partitionStates is Kafka's findPartitionReassignmentStates.
func (a *Admin) partitionStates(ctx context.Context, targets []Target) (map[Partition]State, bool, error) {
	ongoing, err := a.currentReassignments(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	states := map[Partition]State{}
	var lookUp []string
	for _, t := range targets {
		if r, ok := ongoing[t.Partition]; ok {
			states[t.Partition] = State{Current: slices.Clone(r.Replicas), Target: t.Replicas}
		} else if !slices.Contains(lookUp, t.Topic) {
			lookUp = append(lookUp, t.Topic)
		}
	}
	if len(lookUp) > 0 {
		details, err := a.Client.ListTopics(ctx, lookUp...)
		if err != nil {
			return nil, false, fmt.Errorf("describe topics: %w", err)
		}
		for _, t := range targets {
			if _, ok := states[t.Partition]; ok {
				continue
			}
			st := State{Target: t.Replicas, Done: true, Current: []int32{}}
			if d, ok := details[t.Topic]; ok && d.Err == nil {
				if p, ok := d.Partitions[t.Partition.Partition]; ok {
					st.Current = slices.Clone(p.Replicas)
				}
			}
			states[t.Partition] = st
		}
	}
	return states, len(ongoing) > 0, nil
}

// FormatStatus is Kafka's partitionReassignmentStatesToString (without a
// final newline).
func FormatStatus(states map[Partition]State) string {
	lines := []string{"Status of partition reassignment:"}
	ps := make([]Partition, 0, len(states))
	for p := range states {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, comparePartitions)
	for _, p := range ps {
		s := states[p]
		switch {
		case !s.Done:
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is still in progress.", p))
		case slices.Equal(s.Current, s.Target):
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is completed.", p))
		default:
			lines = append(lines, fmt.Sprintf("There is no active reassignment of partition %s, but replica set is %s rather than %s.",
				p, joinIDs(s.Current), joinIDs(s.Target)))
		}
	}
	return strings.Join(lines, "\n")
}

// formatRollback is Kafka's currentPartitionReplicaAssignmentToString.
func formatRollback(current Assignment) string {
	return "Current partition replica assignment\n\n" + FormatReassignmentJSON(current, nil) +
		"\n\nSave this to use as the --reassignment-json-file option during rollback"
}

// Cancel is --cancel: it cancels the reassignments in progress of the
// file's partitions, moves back the log dir moves in progress and, unless
// preserveThrottles, clears the throttles.
func (a *Admin) Cancel(ctx context.Context, reassignmentJSON string, preserveThrottles bool, timeout time.Duration) error {
	plan, err := ParseReassignmentJSON(reassignmentJSON)
	if err != nil {
		return err
	}
	only := kadm.TopicsSet{}
	for _, t := range plan.Targets {
		only.Add(t.Topic, t.Partition.Partition)
	}
	var cancelling []Partition
	if len(plan.Targets) > 0 {
		ongoing, err := a.currentReassignments(ctx, only)
		if err != nil {
			return err
		}
		for p, r := range ongoing {
			if !only.Lookup(p.Topic, p.Partition) {
				continue
			}
			if len(r.AddingReplicas) == 0 || len(r.RemovingReplicas) > 0 {
				cancelling = append(cancelling, p)
			}
		}
	}
	slices.SortFunc(cancelling, comparePartitions)
	if len(cancelling) > 0 {
		var req kadm.AlterPartitionAssignmentsReq
		for _, p := range cancelling {
			req.CancelAssign(p.Topic, p.Partition)
		}
		resps, err := a.Client.AlterPartitionAssignments(ctx, req)
		if err != nil {
			return fmt.Errorf("cancel partition reassignments: %w", err)
		}
		if failed := partitionErrors(resps); len(failed) > 0 {
			return fmt.Errorf("Error cancelling partition reassignment%s for:\n%s", plural(len(failed)), strings.Join(failed, "\n"))
		}
		names := make([]string, len(cancelling))
		for i, p := range cancelling {
			names[i] = p.String()
		}
		a.printf("Successfully cancelled partition reassignment%s for: %s\n", plural(len(cancelling)), strings.Join(names, ","))
	} else {
		a.printf("None of the specified partition reassignments are active.\n")
	}
	moves, err := a.logDirStates(ctx, plan.LogDirs)
	if err != nil {
		return err
	}
	back := map[Replica]string{}
	for r, m := range moves {
		if m.Kind == MoveActive {
			back[r] = m.Current
		}
	}
	if len(back) == 0 {
		// Kafka prints this one without a line break.
		a.printf("None of the specified partition moves are active.")
	} else if err := a.executeMoves(ctx, back, timeout); err != nil {
		return err
	}
	if !preserveThrottles {
		return a.clearAllThrottles(ctx, plan.Targets)
	}
	return nil
}

// List is --list: it prints the reassignments in progress.
func (a *Admin) List(ctx context.Context) error {
	ongoing, err := a.currentReassignments(ctx, nil)
	if err != nil {
		return err
	}
	var rs []kadm.ListPartitionReassignmentsResponse
	for _, r := range ongoing {
		rs = append(rs, r)
	}
	a.printf("%s\n", FormatList(rs))
	return nil
}

// FormatList is Kafka's curReassignmentsToString (without a final
// newline).
func FormatList(rs []kadm.ListPartitionReassignmentsResponse) string {
	if len(rs) == 0 {
		return "No partition reassignments found."
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(x, y kadm.ListPartitionReassignmentsResponse) int {
		return comparePartitions(Partition{x.Topic, x.Partition}, Partition{y.Topic, y.Partition})
	})
	lines := []string{"Current partition reassignments:"}
	for _, r := range rs {
		line := fmt.Sprintf("%s: replicas: %s.", Partition{r.Topic, r.Partition}, joinIDs(r.Replicas))
		if len(r.AddingReplicas) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinIDs(r.AddingReplicas))
		}
		if len(r.RemovingReplicas) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinIDs(r.RemovingReplicas))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
