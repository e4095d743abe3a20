package sharegroups

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

	"github.com/silkworm/silkworm/internal/tools/cli"
	"github.com/silkworm/silkworm/internal/tools/groups"
)

type options struct {
	p                                      *cli.Parser
	bootstrap, commandConfig               *string
	groups, topics                         *[]string
	allTopics, allGroups                   *bool
	list, describe, del, reset, delOffsets *bool
	dryRun, execute                        *bool
	toOffset                               *int64
	toDatetime                             *string
	toEarliest, toLatest                   *bool
	members, verbose, offsets, stateOpt    *bool
	state                                  *string
	timeoutMs                              *int64
}

func parse(args []string, stdout io.Writer) (*options, error) {
	p := cli.NewParser("share-groups", "This tool helps to list, describe, reset and delete share groups.")
	p.Output = stdout
	o := &options{p: p}
	o.bootstrap = p.String("bootstrap-server", "server to connect to", "REQUIRED: The server(s) to connect to.", "")
	o.commandConfig = p.String("command-config", "command config property file", "Property file containing configs to be passed to Admin Client.", "")
	o.groups = p.List("group", "share group", "The share group we wish to act on.")
	o.topics = p.List("topic", "topic", "The topic whose share group information should be deleted or topic which should be included in the reset offset process. When resetting offsets, partitions can be specified using this format: 'topic1:0,1,2', where 0,1,2 are the partitions to be included.")
	o.allTopics = p.Flag("all-topics", "Consider all topics assigned to a share group in the 'reset-offsets' process.")
	o.list = p.Flag("list", "List all share groups.")
	o.describe = p.Flag("describe", "Describe share group, members and offset information.")
	o.allGroups = p.Flag("all-groups", "Apply to all share groups.")
	o.del = p.Flag("delete", "Delete share group.")
	o.delOffsets = p.Flag("delete-offsets", "Delete offsets of share group. Supports one share group at the time, and multiple topics.")
	o.timeoutMs = p.Int64("timeout", "timeout (ms)", "The timeout that can be set for some use cases. For example, it can be used when describing the group to specify the maximum amount of time in milliseconds to wait before the group stabilizes.", 5000)
	o.reset = p.Flag("reset-offsets", "Reset offsets of share group. Supports one share group at a time, and instances must be inactive. Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to reset the offsets.")
	o.dryRun = p.Flag("dry-run", "Only show results without executing changes on share groups. Supported operations: reset-offsets.")
	o.execute = p.Flag("execute", "Execute operation. Supported operations: reset-offsets.")
	o.toOffset = p.Int64("to-offset", "offset", "Reset offsets to a specific offset.", 0)
	o.toDatetime = p.String("to-datetime", "datetime", "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'", "")
	o.toEarliest = p.Flag("to-earliest", "Reset offsets to earliest offset.")
	o.toLatest = p.Flag("to-latest", "Reset offsets to latest offset.")
	o.members = p.Flag("members", "Describe members of the group. This option may be used with the '--describe' option only.")
	o.offsets = p.Flag("offsets", "Describe the group and list all topic partitions in the group along with their offset information. This is the default sub-action and may be used with the '--describe' option only.")
	o.verbose = p.Flag("verbose", "Use with --describe --state to show group epoch and target assignment epoch. Use with --describe --members to show for each member the member epoch. Use with --describe --offsets to show leader epochs for each partition.")
	o.state = p.String("state", "state", "When specified with '--describe', includes the state of the group. When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states. Valid values are Empty, Stable and Dead.", "")
	if err := p.Parse(cli.OptionalValues(args, "--state")); err != nil {
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
	if (*o.describe || *o.del) && !p.Has("group") && !*o.allGroups {
		return nil, errors.New("option [describe|delete] takes one of these options: [all-groups], [group]")
	}
	if (*o.reset || *o.delOffsets) && len(*o.groups) != 1 {
		return nil, errors.New("option [reset-offsets|delete-offsets] takes exactly one [group]")
	}
	if *o.delOffsets && !p.Has("topic") {
		return nil, errors.New("option [delete-offsets] takes the following options: [bootstrap-server], [group], [topic]")
	}
	if *o.reset {
		if *o.dryRun && *o.execute {
			return nil, errors.New("option [reset-offsets] only accepts one of [execute, dry-run]")
		}
		n := 0
		for _, s := range []string{"to-offset", "to-datetime", "to-earliest", "to-latest"} {
			if p.Has(s) {
				n++
			}
		}
		if n != 1 {
			return nil, errors.New("option [reset-offsets] takes exactly one of these scenarios: [to-offset], [to-datetime], [to-earliest], [to-latest]")
		}
		if !*o.allTopics && !p.Has("topic") {
			return nil, errors.New("one of the reset scopes should be defined: --all-topics, --topic")
		}
	}
	return o, nil
}

// Run is `silkworm share-groups` with Kafka's options.
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
		return s.list(ctx)
	case *o.describe:
		return s.describeGroups(ctx)
	case *o.del:
		return s.deleteGroups(ctx)
	case *o.delOffsets:
		return s.deleteOffsets(ctx)
	default:
		return s.resetOffsets(ctx)
	}
}

type service struct {
	o           *options
	adm         *kadm.Client
	out, errOut io.Writer
}

func (s *service) listed(ctx context.Context) ([]ListedGroup, error) {
	listed, err := s.adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	var out []ListedGroup
	for _, g := range listed.Sorted() {
		if g.GroupType != "" && g.GroupType != "share" {
			continue
		}
		out = append(out, ListedGroup{Group: g.Group, State: g.State})
	}
	return out, nil
}

func (s *service) list(ctx context.Context) error {
	rows, err := s.listed(ctx)
	if err != nil {
		return err
	}
	if *s.o.state != "" {
		want := map[string]bool{}
		for _, st := range strings.Split(*s.o.state, ",") {
			st = strings.ToLower(strings.TrimSpace(st))
			if st != "empty" && st != "stable" && st != "dead" {
				return fmt.Errorf("invalid state list '%s'. Valid states are: Empty, Stable, Dead", *s.o.state)
			}
			want[st] = true
		}
		rows = slices.DeleteFunc(rows, func(g ListedGroup) bool { return !want[strings.ToLower(g.State)] })
	}
	WriteGroupList(s.out, rows, s.o.p.Has("state"))
	return nil
}

func (s *service) groupIDs(ctx context.Context) ([]string, error) {
	if !*s.o.allGroups {
		return *s.o.groups, nil
	}
	rows, err := s.listed(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.Group
	}
	return ids, nil
}

// emptyOrDead prints Kafka's note for an empty or missing group and
// reports whether to print its table.
func (s *service) emptyOrDead(group, state string, rows int) bool {
	switch state {
	case "Dead", "":
		fmt.Fprintf(s.out, "\nError: Share group '%s' does not exist.\n", group)
		return false
	case "Empty":
		fmt.Fprintf(s.errOut, "\nShare group '%s' has no active members.\n", group)
	}
	return rows > 0
}

func (s *service) describeGroups(ctx context.Context) error {
	ids, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	slices.Sort(ids)
	described, err := s.adm.DescribeShareGroups(ctx, ids...)
	if err != nil && len(described) == 0 {
		return fmt.Errorf("describe share groups: %w", err)
	}
	for _, id := range ids {
		g, ok := described[id]
		state := g.GroupState
		if !ok || g.Err != nil {
			state = "Dead"
		}
		switch {
		case *s.o.members:
			if !s.emptyOrDead(id, state, len(g.Members)) {
				continue
			}
			var ms []Member
			for _, m := range g.Members {
				a := map[string][]int32{}
				for t, ps := range m.Assignment {
					for p := range ps {
						a[t] = append(a[t], p)
					}
				}
				ms = append(ms, Member{ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID, Epoch: m.MemberEpoch, Assignment: a})
			}
			WriteMembers(s.out, id, ms, *s.o.verbose)
		case s.o.p.Has("state"):
			if state == "Dead" {
				s.emptyOrDead(id, state, 1)
				continue
			}
			s.emptyOrDead(id, state, 1)
			WriteState(s.out, GroupState{Group: id, CoordinatorHost: g.Coordinator.Host, CoordinatorPort: g.Coordinator.Port,
				CoordinatorID: g.Coordinator.NodeID, State: state, GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch,
				Members: len(g.Members)}, *s.o.verbose)
		default:
			if state == "Dead" {
				s.emptyOrDead(id, state, 1)
				continue
			}
			offs, err := s.adm.DescribeShareGroupOffsets(ctx, id)
			if err != nil {
				return fmt.Errorf("describe share group offsets of %s: %w", id, err)
			}
			var rows []OffsetRow
			offs[id].Offsets.Each(func(o kadm.ShareOffset) {
				rows = append(rows, OffsetRow{Topic: o.Topic, Partition: o.Partition, StartOffset: o.StartOffset, LeaderEpoch: o.LeaderEpoch, Lag: o.Lag})
			})
			WriteOffsets(s.out, id, rows, *s.o.verbose)
		}
	}
	return nil
}

func (s *service) deleteGroups(ctx context.Context) error {
	ids, err := s.groupIDs(ctx)
	if err != nil {
		return err
	}
	listed, err := s.listed(ctx)
	if err != nil {
		return err
	}
	states := map[string]string{}
	for _, g := range listed {
		states[g.Group] = g.State
	}
	failed := map[string]string{}
	var toDelete []string
	for _, id := range ids {
		st, ok := states[id]
		switch {
		case !ok:
			failed[id] = fmt.Sprintf("org.apache.kafka.common.errors.GroupIdNotFoundException: Group '%s' is not a share group.", id)
		case st == "Dead":
			failed[id] = fmt.Sprintf("java.lang.IllegalStateException: Share group '%s' group state is DEAD.", id)
		case st != "Empty":
			failed[id] = fmt.Sprintf("org.apache.kafka.common.errors.GroupNotEmptyException: Share group '%s' is not EMPTY.", id)
		default:
			toDelete = append(toDelete, id)
		}
	}
	var ok []string
	if len(toDelete) > 0 {
		resps, err := s.adm.DeleteGroups(ctx, toDelete...)
		if err != nil {
			return fmt.Errorf("delete groups: %w", err)
		}
		for _, r := range resps.Sorted() {
			if r.Err != nil {
				failed[r.Group] = r.Err.Error()
			} else {
				ok = append(ok, r.Group)
			}
		}
	}
	quote := func(gs []string) string {
		q := make([]string, len(gs))
		for i, g := range gs {
			q[i] = "'" + g + "'"
		}
		return strings.Join(q, ", ")
	}
	if len(failed) == 0 {
		fmt.Fprintf(s.out, "Deletion of requested share groups (%s) was successful.\n", quote(ok))
		return nil
	}
	fmt.Fprintf(s.out, "\nError: Deletion of some share groups failed:\n")
	for _, g := range slices.Sorted(func(yield func(string) bool) {
		for g := range failed {
			if !yield(g) {
				return
			}
		}
	}) {
		fmt.Fprintf(s.out, "* Group '%s' could not be deleted due to: %s\n", g, failed[g])
	}
	if len(ok) > 0 {
		fmt.Fprintf(s.out, "\nThese share groups were deleted successfully: %s\n", quote(ok))
	}
	return errors.New("deletion of some share groups failed")
}

func (s *service) deleteOffsets(ctx context.Context) error {
	group := (*s.o.groups)[0]
	resps, err := s.adm.DeleteShareGroupOffsets(ctx, group, *s.o.topics...)
	if err != nil && len(resps) == 0 {
		fmt.Fprintf(s.out, "\nError: %v\n", err)
		return err
	}
	var rows []DeleteOffsetRow
	for _, t := range *s.o.topics {
		e, _ := resps.Lookup(t)
		rows = append(rows, DeleteOffsetRow{Topic: t, Err: e})
	}
	WriteDeleteOffsets(s.out, rows)
	return nil
}

func (s *service) resetOffsets(ctx context.Context) error {
	group := (*s.o.groups)[0]
	described, err := s.adm.DescribeShareGroups(ctx, group)
	if err == nil {
		if g := described[group]; g.Err == nil && g.GroupState != "Empty" && g.GroupState != "Dead" {
			return fmt.Errorf("share group '%s' is not empty", group)
		}
	}
	parts := map[string][]int32{}
	if *s.o.allTopics {
		offs, err := s.adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil {
			return fmt.Errorf("describe share group offsets: %w", err)
		}
		offs[group].Offsets.Each(func(o kadm.ShareOffset) { parts[o.Topic] = append(parts[o.Topic], o.Partition) })
	} else {
		for _, t := range *s.o.topics {
			name, ps, hasParts := strings.Cut(t, ":")
			if !hasParts {
				parts[name] = nil
				continue
			}
			for _, p := range strings.Split(ps, ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
				if err != nil {
					return fmt.Errorf("invalid partition %q in %q", p, t)
				}
				parts[name] = append(parts[name], int32(n))
			}
		}
	}
	topics := slices.Sorted(func(yield func(string) bool) {
		for t := range parts {
			if !yield(t) {
				return
			}
		}
	})
	var listed kadm.ListedOffsets
	switch {
	case *s.o.toEarliest:
		listed, err = s.adm.ListStartOffsets(ctx, topics...)
	case *s.o.toLatest:
		listed, err = s.adm.ListEndOffsets(ctx, topics...)
	case s.o.p.Has("to-datetime"):
		at, perr := time.ParseInLocation("2006-01-02T15:04:05.000", *s.o.toDatetime, time.Local)
		if perr != nil {
			return fmt.Errorf("error parsing timestamp %q: %w", *s.o.toDatetime, perr)
		}
		listed, err = s.adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...)
	default:
		listed, err = s.adm.ListEndOffsets(ctx, topics...) // for the partition list
	}
	if err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	var rows []groups.ResetRow
	offsets := kadm.Offsets{}
	for _, t := range topics {
		ps := parts[t]
		if ps == nil {
			for p := range listed[t] {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		for _, p := range ps {
			lo, ok := listed[t][p]
			if !ok || lo.Err != nil {
				return fmt.Errorf("topic %s partition %d: not found", t, p)
			}
			at := lo.Offset
			if s.o.p.Has("to-offset") {
				at = *s.o.toOffset
			}
			rows = append(rows, groups.ResetRow{Group: group, Topic: t, Partition: p, NewOffset: at})
			offsets.AddOffset(t, p, at, -1)
		}
	}
	if *s.o.execute {
		resps, err := s.adm.AlterShareGroupOffsets(ctx, group, offsets)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			return fmt.Errorf("alter share group offsets: %w", err)
		}
	}
	groups.WriteResetOffsets(s.out, rows)
	return nil
}
