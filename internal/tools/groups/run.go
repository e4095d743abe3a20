package groups

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

type options struct {
	p                                   *cli.Parser
	bootstrap, commandConfig            *string
	groups, topics                      *[]string
	allTopics, allGroups                *bool
	list, describe, del, reset          *bool
	deleteOffsets, export               *bool
	fromFile                            *string
	dryRun, execute                     *bool
	toOffset, shiftBy                   *int64
	toDatetime, byDuration              *string
	toEarliest, toLatest, toCurrent     *bool
	members, verbose, offsets, stateOpt *bool
	state, typ                          *string
	timeoutMs                           *int64
}

func parse(args []string, stdout io.Writer) (*options, error) {
	p := cli.NewParser("consumer-groups", "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.")
	p.Output = stdout
	o := &options{p: p}
	o.bootstrap = p.String("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to.", "")
	o.commandConfig = p.String("command-config", "command config property file", "Property file containing configs to be passed to Admin Client and Consumer.", "")
	o.groups = p.List("group", "consumer group", "The consumer group we wish to act on.")
	o.topics = p.List("topic", "topic", "The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process.")
	o.allTopics = p.Flag("all-topics", "Consider all topics assigned to a group in the `reset-offsets` process.")
	o.list = p.Flag("list", "List all consumer groups.")
	o.describe = p.Flag("describe", "Describe consumer group and list offset lag (number of messages not yet processed) related to given group.")
	o.allGroups = p.Flag("all-groups", "Apply to all consumer groups.")
	o.del = p.Flag("delete", "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group.")
	o.timeoutMs = p.Int64("timeout", "timeout (ms)", "The timeout that can be set for some use cases, e.g. the time to wait for the group to be described.", 5000)
	o.reset = p.Flag("reset-offsets", "Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets.")
	o.deleteOffsets = p.Flag("delete-offsets", "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.")
	o.dryRun = p.Flag("dry-run", "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets.")
	o.execute = p.Flag("execute", "Execute operation. Supported operations: reset-offsets.")
	o.export = p.Flag("export", "Export operation execution to a CSV file. Supported operations: reset-offsets.")
	o.toOffset = p.Int64("to-offset", "offset", "Reset offsets to a specific offset.", 0)
	o.fromFile = p.String("from-file", "path to CSV file", "Reset offsets to values defined in CSV file.", "")
	o.toDatetime = p.String("to-datetime", "datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'", "")
	o.byDuration = p.String("by-duration", "duration", "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'", "")
	o.toEarliest = p.Flag("to-earliest", "Reset offsets to earliest offset.")
	o.toLatest = p.Flag("to-latest", "Reset offsets to latest offset.")
	o.toCurrent = p.Flag("to-current", "Reset offsets to current offset.")
	o.shiftBy = p.Int64("shift-by", "number-of-offsets", "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.", 0)
	o.members = p.Flag("members", "Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only.")
	o.verbose = p.Flag("verbose", "Provide additional information, if any, when describing the group. This option may be used with '--offsets'/'--members'/'--state' and '--bootstrap-server' options only.")
	o.offsets = p.Flag("offsets", "Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and may be used with '--describe' and '--bootstrap-server' options only.")
	o.state = p.String("state", "state", "When specified with '--describe', includes the state of the group. When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states, e.g. --list --state Stable,Empty.", "")
	o.typ = p.String("type", "type", "When specified with '--list', it displays the types of all the groups. It can also be used to list groups with specific types.", "")
	if err := p.Parse(cli.OptionalValues(args, "--state", "--type")); err != nil {
		return nil, err
	}
	if len(p.Args()) > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return nil, err
	}
	if err := p.RequireOneOf("list", "describe", "delete", "reset-offsets", "delete-offsets"); err != nil {
		return nil, fmt.Errorf("command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets (%w)", err)
	}
	if (*o.describe || *o.del || *o.reset) && !p.Has("group") && !*o.allGroups {
		return nil, errors.New("option [describe|delete|reset-offsets] takes one of these options: [all-groups], [group]")
	}
	if *o.deleteOffsets && (len(*o.groups) != 1 || *o.allGroups || !p.Has("topic")) {
		return nil, errors.New("option [delete-offsets] takes the following options: [bootstrap-server], [group] (exactly one), [topic]")
	}
	if *o.export && !*o.reset {
		return nil, errors.New("option [export] can only be used with [reset-offsets]")
	}
	if p.Has("from-file") && !*o.reset {
		return nil, errors.New("option [from-file] can only be used with [reset-offsets]")
	}
	if *o.reset {
		if *o.dryRun && *o.execute {
			return nil, errors.New("option [reset-offsets] only accepts one of [execute, dry-run]")
		}
		n := 0
		for _, s := range []string{"to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current", "shift-by", "from-file"} {
			if p.Has(s) {
				n++
			}
		}
		if n != 1 {
			return nil, errors.New("option [reset-offsets] takes exactly one of these scenarios: [to-offset], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [shift-by], [from-file]")
		}
		if !*o.allTopics && !p.Has("topic") && !p.Has("from-file") {
			return nil, errors.New("one of the reset scopes should be defined: --all-topics, --topic")
		}
	}
	return o, nil
}

// Run is `silkworm consumer-groups` with Kafka's options.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout)
	if err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	cl, adm, err := cli.NewAdmin(ctx, *o.commandConfig, *o.bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(*o.timeoutMs)*time.Millisecond+10*time.Second)
	defer cancel()
	s := &service{o: o, adm: adm, out: stdout, errOut: stderr}
	switch {
	case *o.list:
		return s.listGroups(ctx)
	case *o.describe:
		return s.describeGroups(ctx)
	case *o.del:
		return s.deleteGroups(ctx)
	case *o.deleteOffsets:
		return s.deleteOffsets(ctx)
	default:
		return s.resetOffsets(ctx)
	}
}

type service struct {
	o           *options
	adm         *kadm.Client
	out, errOut io.Writer
	failed      []string // groups that did not exist, reported at exit
}

func (s *service) listGroups(ctx context.Context) error {
	var states []string
	if *s.o.state != "" {
		valid := map[string]string{}
		for _, v := range []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling"} {
			valid[strings.ToLower(v)] = v
		}
		for _, st := range strings.Split(*s.o.state, ",") {
			v, ok := valid[strings.ToLower(strings.TrimSpace(st))]
			if !ok {
				return fmt.Errorf("invalid state list '%s'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling", *s.o.state)
			}
			states = append(states, v)
		}
	}
	listed, err := s.adm.ListGroups(ctx, states...)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	withState, withType := s.o.p.Has("state"), s.o.p.Has("type")
	var rows []ListedGroup
	for _, g := range listed.Sorted() {
		if g.ProtocolType != "consumer" && g.ProtocolType != "" {
			continue
		}
		typ := g.GroupType
		if typ == "" {
			typ = "Classic"
		}
		typ = strings.ToUpper(typ[:1]) + typ[1:]
		if *s.o.typ != "" && !strings.EqualFold(*s.o.typ, typ) {
			continue
		}
		rows = append(rows, ListedGroup{Group: g.Group, Type: typ, State: g.State})
	}
	if withState || withType {
		WriteGroupList(s.out, rows, withType, withState)
		return nil
	}
	for _, r := range rows {
		fmt.Fprintln(s.out, r.Group)
	}
	return nil
}

func (s *service) groupIDs(ctx context.Context) ([]string, error) {
	if !*s.o.allGroups {
		return *s.o.groups, nil
	}
	listed, err := s.adm.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	return listed.Groups(), nil
}

// describedMember is one member of a described group, classic or
// consumer (KIP-848).
type describedMember struct {
	MemberID, ClientID, ClientHost string
	InstanceID                     *string
	Assigned                       map[string][]int32 // topic -> partitions
	// KIP-848 members only.
	Epoch  int32
	Target map[string][]int32
}

// describedGroup is a group as DescribeGroups (classic) or
// ConsumerGroupDescribe (consumer) describes it.
type describedGroup struct {
	Group       string
	Coordinator kadm.BrokerDetail
	State       string
	Protocol    string // the assignment strategy: classic protocol or server assignor
	Members     []describedMember
	Consumer    bool // a KIP-848 consumer group
	// KIP-848 groups only.
	Epoch, AssignmentEpoch int32
}

// describe returns the groups described, sorted by name; a group the
// coordinator does not know comes back in state Dead. Groups that are not
// classic groups are described again with ConsumerGroupDescribe, as
// Kafka's admin client does.
func (s *service) describe(ctx context.Context, ids []string) ([]describedGroup, error) {
	described, err := s.adm.DescribeGroups(ctx, ids...)
	if err != nil && len(described) == 0 {
		return nil, fmt.Errorf("describe groups: %w", err)
	}
	var out []describedGroup
	var retry []string
	for _, id := range ids {
		g, ok := described[id]
		switch {
		case !ok || errors.Is(g.Err, kerr.GroupIDNotFound) || (g.Err == nil && g.State == "Dead"):
			retry = append(retry, id)
			continue
		case g.Err != nil:
			return nil, fmt.Errorf("describe group %s: %w", id, g.Err)
		}
		dg := describedGroup{Group: g.Group, Coordinator: g.Coordinator, State: g.State, Protocol: g.Protocol}
		for _, m := range g.Members {
			dm := describedMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID, Assigned: map[string][]int32{}}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					dm.Assigned[t.Topic] = append(dm.Assigned[t.Topic], t.Partitions...)
				}
			}
			dg.Members = append(dg.Members, dm)
		}
		out = append(out, dg)
	}
	if len(retry) > 0 {
		cgs, err := s.adm.DescribeConsumerGroups(ctx, retry...)
		if err != nil && len(cgs) == 0 && !errors.Is(err, kerr.GroupIDNotFound) {
			return nil, fmt.Errorf("describe consumer groups: %w", err)
		}
		for _, id := range retry {
			g, ok := cgs[id]
			if !ok || g.Err != nil {
				out = append(out, describedGroup{Group: id, State: "Dead"})
				continue
			}
			dg := describedGroup{Group: g.Group, Coordinator: g.Coordinator, State: g.State, Protocol: g.AssignorName,
				Consumer: true, Epoch: g.Epoch, AssignmentEpoch: g.AssignmentEpoch}
			for _, m := range g.Members {
				dg.Members = append(dg.Members, describedMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost,
					InstanceID: m.InstanceID, Assigned: topicsSet(m.Assignment), Epoch: m.MemberEpoch, Target: topicsSet(m.TargetAssignment)})
			}
			out = append(out, dg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, nil
}

func topicsSet(ts kadm.TopicsSet) map[string][]int32 {
	out := map[string][]int32{}
	for t, ps := range ts {
		for p := range ps {
			out[t] = append(out[t], p)
		}
		slices.Sort(out[t])
	}
	return out
}

// printState writes Kafka's notes on a group's state; it reports whether
// the group has something to print.
func (s *service) printState(g *describedGroup, rows int) bool {
	switch g.State {
	case "Dead":
		fmt.Fprintf(s.out, "\nError: Consumer group '%s' does not exist.\n", g.Group)
		s.failed = append(s.failed, g.Group)
		return false
	case "Empty":
		fmt.Fprintf(s.errOut, "\nConsumer group '%s' has no active members.\n", g.Group)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		fmt.Fprintf(s.errOut, "\nWarning: Consumer group '%s' is rebalancing.\n", g.Group)
	}
	return rows > 0
}

func (s *service) notFound() error {
	if len(s.failed) == 0 {
		return nil
	}
	return fmt.Errorf("consumer group(s) %s do not exist", strings.Join(s.failed, ", "))
}

func (s *service) describeGroups(ctx context.Context) error {
	ids, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	groups, err := s.describe(ctx, ids)
	if err != nil {
		return err
	}
	switch {
	case *s.o.offsets || (!*s.o.members && !s.o.p.Has("state")):
		for i := range groups {
			rows, err := s.offsetRows(ctx, &groups[i])
			if err != nil {
				return err
			}
			if s.printState(&groups[i], len(rows)) {
				WriteOffsets(s.out, rows)
			}
		}
	case *s.o.members:
		for i := range groups {
			g := &groups[i]
			var ms []Member
			for _, m := range g.Members {
				mem := Member{Group: g.Group, ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID, Assignment: m.Assigned}
				if m.InstanceID != nil {
					mem.InstanceID = *m.InstanceID
				}
				if g.Consumer {
					mem.Epoch, mem.TargetEpoch, mem.Target = m.Epoch, g.AssignmentEpoch, m.Target
					if mem.Target == nil {
						mem.Target = map[string][]int32{}
					}
				}
				ms = append(ms, mem)
			}
			// Kafka prints the header even when there is nothing under it.
			s.printState(g, len(ms))
			WriteMembers(s.out, ms, *s.o.verbose)
		}
	default:
		for i := range groups {
			g := &groups[i]
			if s.printState(g, 1) {
				st := GroupState{Group: g.Group, CoordinatorHost: g.Coordinator.Host, CoordinatorPort: g.Coordinator.Port,
					CoordinatorID: g.Coordinator.NodeID, AssignmentStrategy: g.Protocol, State: g.State, NumMembers: len(g.Members),
					GroupEpoch: -1, AssignmentEpoch: -1}
				if g.Consumer {
					st.GroupEpoch, st.AssignmentEpoch = g.Epoch, g.AssignmentEpoch
				}
				WriteState(s.out, st, *s.o.verbose)
			}
		}
	}
	return s.notFound()
}

type tp struct {
	topic string
	part  int32
}

// offsetRows builds Kafka's describe rows: the partitions of each member
// (members with more partitions first), then committed partitions no member
// owns.
func (s *service) offsetRows(ctx context.Context, g *describedGroup) ([]OffsetRow, error) {
	if g.State == "Dead" {
		return nil, nil
	}
	committed, err := s.adm.FetchOffsets(ctx, g.Group)
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", g.Group, err)
	}
	type owned struct {
		m   describedMember
		tps []tp
	}
	var owners []owned
	assigned := map[tp]bool{}
	topics := map[string]bool{}
	for _, m := range g.Members {
		var tps []tp
		for topic, ps := range m.Assigned {
			for _, p := range ps {
				tps = append(tps, tp{topic, p})
				assigned[tp{topic, p}] = true
				topics[topic] = true
			}
		}
		if len(tps) > 0 {
			owners = append(owners, owned{m, tps})
		}
	}
	sort.SliceStable(owners, func(i, j int) bool { return len(owners[i].tps) > len(owners[j].tps) })
	var unowned []tp
	committed.Each(func(r kadm.OffsetResponse) {
		if r.Err == nil && !assigned[tp{r.Topic, r.Partition}] {
			unowned = append(unowned, tp{r.Topic, r.Partition})
			topics[r.Topic] = true
		}
	})
	var names []string
	for t := range topics {
		names = append(names, t)
	}
	ends := kadm.ListedOffsets{}
	if len(names) > 0 {
		ends, err = s.adm.ListEndOffsets(ctx, names...)
		if err != nil && len(ends) == 0 {
			return nil, fmt.Errorf("list end offsets: %w", err)
		}
	}
	row := func(t tp, id, host, client string) OffsetRow {
		r := OffsetRow{Group: g.Group, Topic: t.topic, Partition: t.part, Committed: -1, LogEnd: -1, ConsumerID: id, Host: host, ClientID: client}
		if c, ok := committed.Lookup(t.topic, t.part); ok && c.Err == nil {
			r.Committed = c.At
		}
		if e, ok := ends.Lookup(t.topic, t.part); ok && e.Err == nil {
			r.LogEnd = e.Offset
		}
		return r
	}
	sortTPs := func(tps []tp) {
		sort.Slice(tps, func(i, j int) bool {
			if tps[i].topic != tps[j].topic {
				return tps[i].topic < tps[j].topic
			}
			return tps[i].part < tps[j].part
		})
	}
	var rows []OffsetRow
	for _, ow := range owners {
		sortTPs(ow.tps)
		for _, t := range ow.tps {
			rows = append(rows, row(t, ow.m.MemberID, ow.m.ClientHost, ow.m.ClientID))
		}
	}
	sortTPs(unowned)
	for _, t := range unowned {
		rows = append(rows, row(t, "", "", ""))
	}
	// A member without partitions gets a row of its own when no partition
	// is listed, as in Kafka.
	if len(rows) == 0 {
		for _, m := range g.Members {
			rows = append(rows, OffsetRow{Group: g.Group, Partition: -1, Committed: -1, LogEnd: -1, ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID})
		}
	}
	return rows, nil
}

func (s *service) deleteGroups(ctx context.Context) error {
	ids, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	resps, err := s.adm.DeleteGroups(ctx, ids...)
	if err != nil && len(resps) == 0 {
		return fmt.Errorf("delete groups: %w", err)
	}
	var ok, failed []string
	for _, id := range ids {
		if r, found := resps[id]; found && r.Err == nil {
			ok = append(ok, id)
		} else {
			failed = append(failed, id)
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(s.out, "Deletion of requested consumer groups ('%s') was successful.\n", strings.Join(ok, ", "))
		return nil
	}
	fmt.Fprintln(s.out, "\nError: Deletion of some consumer groups failed:")
	for _, id := range failed {
		reason := "unknown error"
		if r, found := resps[id]; found && r.Err != nil {
			reason = r.Err.Error()
		}
		fmt.Fprintf(s.out, "* Group '%s' could not be deleted due to: %s\n", id, reason)
	}
	if len(ok) > 0 {
		fmt.Fprintf(s.out, "\nThese consumer groups were deleted successfully: '%s'\n", strings.Join(ok, "', '"))
	}
	return fmt.Errorf("could not delete consumer group(s) %s", strings.Join(failed, ", "))
}

// partitionsToReset resolves --all-topics or --topic t[:p,p] for a group.
func (s *service) partitionsToReset(ctx context.Context, group string, committed kadm.OffsetResponses) ([]tp, error) {
	var out []tp
	if *s.o.allTopics {
		committed.Each(func(r kadm.OffsetResponse) { out = append(out, tp{r.Topic, r.Partition}) })
		return out, nil
	}
	var whole []string
	for _, arg := range *s.o.topics {
		topic, parts, hasParts := strings.Cut(arg, ":")
		if !hasParts {
			whole = append(whole, arg)
			continue
		}
		for _, p := range strings.Split(parts, ",") {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("invalid partition '%s' specified in topic arg '%s'", p, arg)
			}
			out = append(out, tp{topic, int32(n)})
		}
	}
	if len(whole) > 0 {
		details, err := s.adm.ListTopics(ctx, whole...)
		if err != nil {
			return nil, fmt.Errorf("describe topics: %w", err)
		}
		for _, t := range whole {
			d, ok := details[t]
			if !ok || d.Err != nil {
				return nil, fmt.Errorf("topic '%s' does not exist", t)
			}
			for _, p := range d.Partitions.Sorted() {
				out = append(out, tp{t, p.Partition})
			}
		}
	}
	return out, nil
}

func (s *service) resetOffsets(ctx context.Context) error {
	ids, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	groups, err := s.describe(ctx, ids)
	if err != nil {
		return err
	}
	var fromFile map[string]map[tp]int64
	if s.o.p.Has("from-file") {
		data, err := os.ReadFile(*s.o.fromFile)
		if err != nil {
			return fmt.Errorf("read reset plan: %w", err)
		}
		single := ""
		if s.singleGroup() {
			single = (*s.o.groups)[0]
		}
		fromFile, err = parseResetPlan(string(data), single)
		if err != nil {
			return fmt.Errorf("reset plan %s: %w", *s.o.fromFile, err)
		}
	}
	var rows []ResetRow
	var inactive []string
	for i := range groups {
		g := &groups[i]
		if g.State != "Empty" && g.State != "Dead" {
			fmt.Fprintf(s.out, "\nError: Assignments can only be reset if the group '%s' is inactive, but the current state is %s.\n", g.Group, g.State)
			inactive = append(inactive, g.Group)
			continue
		}
		committed, err := s.adm.FetchOffsets(ctx, g.Group)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return fmt.Errorf("fetch offsets of group %s: %w", g.Group, err)
		}
		var tps []tp
		var requested map[tp]int64
		if fromFile != nil {
			requested = fromFile[g.Group]
			if requested == nil && len(fromFile) > 0 {
				fmt.Fprintf(s.out, "\nError: No reset plan for group %s found\n", g.Group)
			}
			for t := range requested {
				tps = append(tps, t)
			}
		} else if tps, err = s.partitionsToReset(ctx, g.Group, committed); err != nil {
			return err
		}
		planned, err := s.plan(ctx, tps, committed, requested)
		if err != nil {
			return err
		}
		sort.Slice(planned, func(i, j int) bool {
			if planned[i].Topic != planned[j].Topic {
				return planned[i].Topic < planned[j].Topic
			}
			return planned[i].Partition < planned[j].Partition
		})
		if *s.o.execute {
			os := kadm.Offsets{}
			for _, r := range planned {
				os.Add(kadm.Offset{Topic: r.Topic, Partition: r.Partition, At: r.NewOffset, LeaderEpoch: -1})
			}
			resps, err := s.adm.CommitOffsets(ctx, g.Group, os)
			if err != nil {
				return fmt.Errorf("commit offsets of group %s: %w", g.Group, err)
			}
			if err := resps.Error(); err != nil {
				return fmt.Errorf("commit offsets of group %s: %w", g.Group, err)
			}
		}
		for _, r := range planned {
			r.Group = g.Group
			rows = append(rows, r)
		}
	}
	if *s.o.export {
		WriteResetCSV(s.out, rows, s.singleGroup())
	} else {
		WriteResetOffsets(s.out, rows)
	}
	if len(inactive) > 0 {
		return fmt.Errorf("group(s) %s are active; stop their consumers first", strings.Join(inactive, ", "))
	}
	return nil
}

// plan computes the new offset of each partition for the chosen scenario,
// clamped to [log start, log end] where Kafka clamps.
// For --from-file, requested holds the offsets read from the file.
func (s *service) plan(ctx context.Context, tps []tp, committed kadm.OffsetResponses, requested map[tp]int64) ([]ResetRow, error) {
	topicSet := map[string]bool{}
	for _, t := range tps {
		topicSet[t.topic] = true
	}
	var topics []string
	for t := range topicSet {
		topics = append(topics, t)
	}
	if len(topics) == 0 {
		return nil, nil
	}
	starts, err := s.adm.ListStartOffsets(ctx, topics...)
	if err != nil && len(starts) == 0 {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := s.adm.ListEndOffsets(ctx, topics...)
	if err != nil && len(ends) == 0 {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	lookup := func(lo kadm.ListedOffsets, t tp, what string) (int64, error) {
		o, ok := lo.Lookup(t.topic, t.part)
		if !ok || o.Err != nil {
			return 0, fmt.Errorf("error getting %s offset of topic partition: %s-%d", what, t.topic, t.part)
		}
		return o.Offset, nil
	}
	clamp := func(t tp, off int64) (int64, error) {
		end, err := lookup(ends, t, "ending")
		if err != nil {
			return 0, err
		}
		start, err := lookup(starts, t, "starting")
		if err != nil {
			return 0, err
		}
		return min(max(off, start), end), nil
	}
	var byTime kadm.ListedOffsets
	if s.o.p.Has("to-datetime") || s.o.p.Has("by-duration") {
		var ts int64
		if s.o.p.Has("to-datetime") {
			t, err := parseDateTime(*s.o.toDatetime)
			if err != nil {
				return nil, err
			}
			ts = t.UnixMilli()
		} else {
			d, err := parseISODuration(*s.o.byDuration)
			if err != nil {
				return nil, err
			}
			ts = time.Now().Add(-d).UnixMilli()
		}
		byTime, err = s.adm.ListOffsetsAfterMilli(ctx, ts, topics...)
		if err != nil && len(byTime) == 0 {
			return nil, fmt.Errorf("list offsets by timestamp: %w", err)
		}
	}
	var rows []ResetRow
	for _, t := range tps {
		var off int64
		var err error
		cur, hasCur := committed.Lookup(t.topic, t.part)
		hasCur = hasCur && cur.Err == nil && cur.At >= 0
		switch {
		case requested != nil:
			off, err = clamp(t, requested[t])
		case s.o.p.Has("to-offset"):
			off, err = clamp(t, *s.o.toOffset)
		case *s.o.toEarliest:
			off, err = lookup(starts, t, "starting")
		case *s.o.toLatest:
			off, err = lookup(ends, t, "ending")
		case s.o.p.Has("shift-by"):
			if !hasCur {
				return nil, fmt.Errorf("cannot shift offset for partition %s-%d since there is no current committed offset", t.topic, t.part)
			}
			off, err = clamp(t, cur.At+*s.o.shiftBy)
		case *s.o.toCurrent:
			if hasCur {
				off = cur.At
			} else {
				off, err = lookup(ends, t, "ending")
			}
		default: // to-datetime, by-duration
			// kadm answers "no record at or after the time" with the end
			// offset and no timestamp; Kafka warns about that fallback.
			o, ok := byTime.Lookup(t.topic, t.part)
			if ok && o.Err == nil && o.Offset >= 0 {
				off = o.Offset
				if o.Timestamp < 0 {
					fmt.Fprintf(s.out, "\nWarn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", t.part, t.topic)
				}
			} else {
				fmt.Fprintf(s.out, "\nWarn: Partition %d from topic %s is empty. Falling back to latest known offset.\n", t.part, t.topic)
				off, err = lookup(ends, t, "ending")
			}
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, ResetRow{Topic: t.topic, Partition: t.part, NewOffset: off})
	}
	return rows, nil
}

// singleGroup reports whether the command names exactly one group, which
// selects Kafka's CSV format without the group column.
func (s *service) singleGroup() bool {
	return !*s.o.allGroups && len(*s.o.groups) == 1
}

// deleteOffsets is --delete-offsets: it deletes the committed offsets of the
// --topic partitions (all partitions of a topic given without ":p,p") from
// one group, and prints Kafka's TOPIC PARTITION STATUS table.
func (s *service) deleteOffsets(ctx context.Context) error {
	group := (*s.o.groups)[0]
	var topicNames []string
	status := map[tp]string{}
	set := kadm.TopicsSet{}
	var whole []string
	for _, arg := range *s.o.topics {
		topic, parts, hasParts := strings.Cut(arg, ":")
		topicNames = append(topicNames, arg)
		if !hasParts {
			whole = append(whole, topic)
			continue
		}
		for _, p := range strings.Split(parts, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return fmt.Errorf("invalid partition '%s' specified in topic arg '%s'", p, arg)
			}
			set.Add(topic, int32(n))
		}
	}
	if len(whole) > 0 {
		details, err := s.adm.ListTopics(ctx, whole...)
		if err != nil {
			return fmt.Errorf("describe topics: %w", err)
		}
		for _, t := range whole {
			d, ok := details[t]
			if !ok || d.Err != nil {
				status[tp{t, -1}] = "Error: " + kerr.UnknownTopicOrPartition.Error()
				continue
			}
			for _, p := range d.Partitions.Sorted() {
				set.Add(t, p.Partition)
			}
		}
	}
	resps, err := s.adm.DeleteOffsets(ctx, group, set)
	var topErr error
	switch {
	case err != nil && len(resps) == 0:
		topErr = err
		for t, ps := range set {
			for p := range ps {
				status[tp{t, p}] = "Error: " + err.Error()
			}
		}
	default:
		for t, ps := range set {
			for p := range ps {
				perr, ok := resps.Lookup(t, p)
				switch {
				case !ok:
					status[tp{t, p}] = "Error: no response for the partition"
				case perr != nil:
					status[tp{t, p}] = "Error: " + perr.Error()
					if topErr == nil {
						topErr = perr
					}
				default:
					status[tp{t, p}] = "Successful"
				}
			}
		}
	}
	if topErr == nil && len(status) > 0 {
		for _, st := range status {
			if st != "Successful" {
				topErr = kerr.UnknownTopicOrPartition
				break
			}
		}
	}
	switch {
	case topErr == nil:
		fmt.Fprintf(s.out, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(topicNames, ", "), group)
	case errors.Is(topErr, kerr.GroupIDNotFound):
		fmt.Fprintf(s.out, "Error: '%s' does not exist.\n", group)
	case errors.Is(topErr, kerr.InvalidGroupID):
		fmt.Fprintf(s.out, "Error: '%s' is not valid.\n", group)
	case errors.Is(topErr, kerr.GroupAuthorizationFailed):
		fmt.Fprintf(s.out, "Error: Access to '%s' is not authorized.\n", group)
	case errors.Is(topErr, kerr.NonEmptyGroup):
		fmt.Fprintf(s.out, "Error: Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.\n", group)
	case errors.Is(topErr, kerr.GroupSubscribedToTopic), errors.Is(topErr, kerr.TopicAuthorizationFailed), errors.Is(topErr, kerr.UnknownTopicOrPartition):
		fmt.Fprintln(s.out, "Error: Encounter some partition level error, see the follow-up details:")
	default:
		fmt.Fprintf(s.out, "Error: Encounter some unknown error: %v\n", topErr)
	}
	rows := make([]DeleteOffsetRow, 0, len(status))
	for t, st := range status {
		rows = append(rows, DeleteOffsetRow{Topic: t.topic, Partition: t.part, Status: st})
	}
	WriteDeleteOffsets(s.out, rows)
	if topErr != nil {
		return fmt.Errorf("delete offsets of group %s: %w", group, topErr)
	}
	return nil
}

// parseResetPlan reads a --from-file CSV as --export writes it: lines of
// group,topic,partition,offset, or topic,partition,offset when the command
// names the single group singleGroup (empty otherwise).
func parseResetPlan(csv string, singleGroup string) (map[string]map[tp]int64, error) {
	out := map[string]map[tp]int64{}
	for i, line := range strings.Split(csv, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		group := singleGroup
		switch {
		case len(f) == 3 && singleGroup != "":
		case len(f) == 4:
			group, f = f[0], f[1:]
		default:
			return nil, fmt.Errorf("line %d: expected group,topic,partition,offset or (with one --group) topic,partition,offset, got %q", i+1, line)
		}
		part, err := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: invalid partition %q", i+1, f[1])
		}
		off, err := strconv.ParseInt(strings.TrimSpace(f[2]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: invalid offset %q", i+1, f[2])
		}
		if out[group] == nil {
			out[group] = map[tp]int64{}
		}
		out[group][tp{strings.TrimSpace(f[0]), int32(part)}] = off
	}
	return out, nil
}

// parseDateTime reads Kafka's --to-datetime: yyyy-MM-ddTHH:mm:ss.SSS with an
// optional zone (Z or ±hh:mm); without one the local zone is used.
func parseDateTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.000", s, time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --to-datetime %q: expected yyyy-MM-ddTHH:mm:ss.SSS[Z|+hh:mm]", s)
	}
	return t, nil
}

var isoDuration = regexp.MustCompile(`^([-+]?)P(?:([-+]?[0-9]+)D)?(?:T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// parseISODuration reads the ISO-8601 durations Java's Duration.parse
// accepts: PnDTnHnMn.nS.
func parseISODuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(strings.ToUpper(s))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, fmt.Errorf("invalid --by-duration %q: expected an ISO-8601 duration such as PT1H or P1DT2H3M4.5S", s)
	}
	num := func(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
	d := time.Duration(num(m[2]))*24*time.Hour + time.Duration(num(m[3]))*time.Hour +
		time.Duration(num(m[4]))*time.Minute + time.Duration(num(m[5]))*time.Second
	if m[6] != "" {
		frac := m[6] + strings.Repeat("0", 9-len(m[6]))
		ns := time.Duration(num(frac))
		if strings.HasPrefix(m[5], "-") {
			ns = -ns
		}
		d += ns
	}
	if m[1] == "-" {
		d = -d
	}
	return d, nil
}
