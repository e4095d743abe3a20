package sharegroups

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

func pad(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

func width(min int, vals ...string) int {
	for _, v := range vals {
		min = max(min, len(v))
	}
	return min
}

func orMissing(v int64, known bool) string {
	if !known {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

// ListedGroup is one line of --list --state.
type ListedGroup struct{ Group, State string }

// WriteGroupList prints --list: names, or a GROUP STATE table.
func WriteGroupList(w io.Writer, groups []ListedGroup, withState bool) {
	if !withState {
		for _, g := range groups {
			fmt.Fprintln(w, g.Group)
		}
		return
	}
	gw := 15
	for _, g := range groups {
		gw = width(gw, g.Group)
	}
	fmt.Fprintf(w, "%s %s\n", pad("GROUP", gw), "STATE")
	for _, g := range groups {
		fmt.Fprintf(w, "%s %s\n", pad(g.Group, gw), g.State)
	}
}

// OffsetRow is one share-partition of --describe (--offsets).
type OffsetRow struct {
	Topic       string
	Partition   int32
	StartOffset int64 // -1: not known
	LeaderEpoch int32 // -1: not known
	Lag         int64 // -1: not known
}

// WriteOffsets prints the --describe table of one group.
func WriteOffsets(w io.Writer, group string, rows []OffsetRow, verbose bool) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "\nShare group '%s' has no offset information.\n", group)
		return
	}
	slices.SortFunc(rows, func(a, b OffsetRow) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	gw, tw := width(15, group), 15
	for _, r := range rows {
		tw = width(tw, r.Topic)
	}
	if verbose {
		fmt.Fprintf(w, "\n%s %s %s %s %s %s", pad("GROUP", gw), pad("TOPIC", tw), pad("PARTITION", 10), pad("LEADER-EPOCH", 13), pad("START-OFFSET", 13), "LAG")
	} else {
		fmt.Fprintf(w, "\n%s %s %s %s %s", pad("GROUP", gw), pad("TOPIC", tw), pad("PARTITION", 10), pad("START-OFFSET", 13), "LAG")
	}
	for _, r := range rows {
		start := orMissing(r.StartOffset, r.StartOffset >= 0)
		lag := orMissing(r.Lag, r.Lag >= 0 && r.StartOffset >= 0)
		p := strconv.Itoa(int(r.Partition))
		if verbose {
			fmt.Fprintf(w, "\n%s %s %s %s %s %s", pad(group, gw), pad(r.Topic, tw), pad(p, 10),
				pad(orMissing(int64(r.LeaderEpoch), r.LeaderEpoch >= 0 && r.StartOffset >= 0), 13), pad(start, 13), lag)
		} else {
			fmt.Fprintf(w, "\n%s %s %s %s %s", pad(group, gw), pad(r.Topic, tw), pad(p, 10), pad(start, 13), lag)
		}
	}
	fmt.Fprintln(w)
}

// GroupState is a group for --describe --state.
type GroupState struct {
	Group           string
	CoordinatorHost string
	CoordinatorPort int32
	CoordinatorID   int32
	State           string
	GroupEpoch      int32
	AssignmentEpoch int32
	Members         int
}

// WriteState prints the --describe --state table of one group.
func WriteState(w io.Writer, s GroupState, verbose bool) {
	gw := width(15, s.Group)
	coord := fmt.Sprintf("%s:%d  (%d)", s.CoordinatorHost, s.CoordinatorPort, s.CoordinatorID)
	cw := width(25, coord)
	if verbose {
		fmt.Fprintf(w, "\n%s %s %s %s %s %s", pad("GROUP", gw), pad("COORDINATOR (ID)", cw), pad("STATE", 15), pad("GROUP-EPOCH", 12), pad("ASSIGNMENT-EPOCH", 17), "#MEMBERS")
		fmt.Fprintf(w, "\n%s %s %s %s %s %d", pad(s.Group, gw), pad(coord, cw), pad(s.State, 15), pad(strconv.Itoa(int(s.GroupEpoch)), 12), pad(strconv.Itoa(int(s.AssignmentEpoch)), 17), s.Members)
	} else {
		fmt.Fprintf(w, "\n%s %s %s %s", pad("GROUP", gw), pad("COORDINATOR (ID)", cw), pad("STATE", 15), "#MEMBERS")
		fmt.Fprintf(w, "\n%s %s %s %d", pad(s.Group, gw), pad(coord, cw), pad(s.State, 15), s.Members)
	}
	fmt.Fprintln(w)
}

// Member is one member for --describe --members.
type Member struct {
	ConsumerID, Host, ClientID string
	Epoch                      int32
	Assignment                 map[string][]int32
}

func (m *Member) partitions() int {
	n := 0
	for _, ps := range m.Assignment {
		n += len(ps)
	}
	return n
}

// assignment is Kafka's "topic:0,1;other:2", topics sorted.
func (m *Member) assignment() string {
	var parts []string
	for t, ps := range m.Assignment {
		ps = slices.Sorted(slices.Values(ps))
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+":"+strings.Join(s, ","))
	}
	slices.Sort(parts)
	return strings.Join(parts, ";")
}

// WriteMembers prints the --describe --members table of one group.
func WriteMembers(w io.Writer, group string, members []Member, verbose bool) {
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.ConsumerID, b.ConsumerID) })
	gw, iw, hw, cw := width(15, group), 15, 15, 15
	for _, m := range members {
		iw, hw, cw = width(iw, m.ConsumerID), width(hw, m.Host), width(cw, m.ClientID)
	}
	if verbose {
		fmt.Fprintf(w, "\n%s %s %s %s %s %s %s", pad("GROUP", gw), pad("CONSUMER-ID", iw), pad("HOST", hw), pad("CLIENT-ID", cw), pad("#PARTITIONS", 12), pad("MEMBER-EPOCH", 13), "ASSIGNMENT")
	} else {
		fmt.Fprintf(w, "\n%s %s %s %s %s %s", pad("GROUP", gw), pad("CONSUMER-ID", iw), pad("HOST", hw), pad("CLIENT-ID", cw), pad("#PARTITIONS", 12), "ASSIGNMENT")
	}
	for _, m := range members {
		n := strconv.Itoa(m.partitions())
		if verbose {
			fmt.Fprintf(w, "\n%s %s %s %s %s %s %s", pad(group, gw), pad(m.ConsumerID, iw), pad(m.Host, hw), pad(m.ClientID, cw), pad(n, 12), pad(strconv.Itoa(int(m.Epoch)), 13), m.assignment())
		} else {
			fmt.Fprintf(w, "\n%s %s %s %s %s %s", pad(group, gw), pad(m.ConsumerID, iw), pad(m.Host, hw), pad(m.ClientID, cw), pad(n, 12), m.assignment())
		}
	}
	fmt.Fprintln(w)
}

// DeleteOffsetRow is one topic of --delete-offsets.
type DeleteOffsetRow struct {
	Topic string
	Err   error
}

// WriteDeleteOffsets prints the --delete-offsets table.
func WriteDeleteOffsets(w io.Writer, rows []DeleteOffsetRow) {
	slices.SortFunc(rows, func(a, b DeleteOffsetRow) int { return strings.Compare(a.Topic, b.Topic) })
	tw := 15
	for _, r := range rows {
		tw = width(tw, r.Topic)
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "\n%s %s", pad("TOPIC", tw), "STATUS")
	}
	for _, r := range rows {
		status := "Successful"
		if r.Err != nil {
			status = "Error: " + r.Err.Error()
		}
		fmt.Fprintf(w, "\n%s %s", pad(r.Topic, tw), status)
	}
	fmt.Fprintln(w)
}
