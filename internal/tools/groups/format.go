package groups

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// missing is what Kafka prints for a value it does not know.
const missing = "-"

// OffsetRow is one line of --describe (--offsets).
type OffsetRow struct {
	Group      string
	Topic      string // "" when the member has no partitions
	Partition  int32  // -1 when the member has no partitions
	Committed  int64  // -1 when nothing is committed
	LogEnd     int64  // -1 when unknown
	ConsumerID string // "" when no member owns the partition
	Host       string
	ClientID   string
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

func (r *OffsetRow) cells() []string {
	topic, part, cur, end, lag := missing, missing, missing, missing, missing
	if r.Topic != "" {
		topic = r.Topic
	}
	if r.Partition >= 0 {
		part = strconv.Itoa(int(r.Partition))
	}
	if r.Committed >= 0 {
		cur = strconv.FormatInt(r.Committed, 10)
	}
	if r.LogEnd >= 0 {
		end = strconv.FormatInt(r.LogEnd, 10)
	}
	if r.Committed >= 0 && r.LogEnd >= 0 {
		lag = strconv.FormatInt(r.LogEnd-r.Committed, 10)
	}
	return []string{r.Group, topic, part, cur, end, lag, orMissing(r.ConsumerID), orMissing(r.Host), orMissing(r.ClientID)}
}

// pad left-justifies s in a field of width w, as Java's %-Ns.
func pad(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// WriteOffsets prints the --describe offsets table of one group.
func WriteOffsets(w io.Writer, rows []OffsetRow) {
	gw, tw, cw, hw := 15, 15, 15, 15
	cells := make([][]string, len(rows))
	for i := range rows {
		c := rows[i].cells()
		cells[i] = c
		gw, tw, cw, hw = max(gw, len(c[0])), max(tw, len(c[1])), max(cw, len(c[6])), max(hw, len(c[7]))
	}
	line := func(c []string) {
		fmt.Fprintf(w, "\n%s %s %s %s %s %s %s %s %s", pad(c[0], gw), pad(c[1], tw), pad(c[2], 10), pad(c[3], 15),
			pad(c[4], 15), pad(c[5], 15), pad(c[6], cw), pad(c[7], hw), c[8])
	}
	line([]string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"})
	for _, c := range cells {
		line(c)
	}
	fmt.Fprintln(w)
}

// Member is one line of --describe --members.
type Member struct {
	Group      string
	ConsumerID string
	InstanceID string // "" when static membership is not used
	Host       string
	ClientID   string
	Assignment map[string][]int32 // topic -> partitions
	// Epoch and Target are set for members of KIP-848 consumer groups
	// (Target non-nil): --verbose then prints Kafka 4's CURRENT-EPOCH,
	// CURRENT-ASSIGNMENT, TARGET-EPOCH and TARGET-ASSIGNMENT columns.
	Epoch       int32
	TargetEpoch int32
	Target      map[string][]int32
}

// assignmentText is Kafka's assignment column: "t1(0,1), t2(3)", sorted;
// "-" when empty.
func assignmentText(a map[string][]int32) string {
	m := Member{Assignment: a}
	return m.assignmentString()
}

func (m *Member) numPartitions() int {
	n := 0
	for _, ps := range m.Assignment {
		n += len(ps)
	}
	return n
}

// assignmentString is Kafka's verbose ASSIGNMENT column: "t1(0,1), t2(3)",
// sorted; "-" when empty.
func (m *Member) assignmentString() string {
	if m.numPartitions() == 0 {
		return missing
	}
	var groups []string
	for topic, ps := range m.Assignment {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		sort.Strings(s) // Kafka sorts the partition numbers as strings
		groups = append(groups, topic+"("+strings.Join(s, ",")+")")
	}
	sort.Strings(groups)
	return strings.Join(groups, ", ")
}

// WriteMembers prints the --describe --members table of one group.
func WriteMembers(w io.Writer, members []Member, verbose bool) {
	gw, cw, iw, hw, kw := 15, 15, 17, 15, 15
	withInstance := false
	for _, m := range members {
		gw, cw, iw = max(gw, len(m.Group)), max(cw, len(m.ConsumerID)), max(iw, len(m.InstanceID))
		hw, kw = max(hw, len(m.Host)), max(kw, len(m.ClientID))
		withInstance = withInstance || m.InstanceID != ""
	}
	row := func(group, id, inst, host, client, n string) {
		if withInstance {
			fmt.Fprintf(w, "%s %s %s %s %s %s ", pad(group, gw), pad(id, cw), pad(inst, iw), pad(host, hw), pad(client, kw), pad(n, 15))
		} else {
			fmt.Fprintf(w, "%s %s %s %s %s ", pad(group, gw), pad(id, cw), pad(host, hw), pad(client, kw), pad(n, 15))
		}
	}
	consumer := len(members) > 0 && members[0].Target != nil
	aw := 20
	for i := range members {
		aw = max(aw, len(members[i].assignmentString()))
	}
	fmt.Fprint(w, "\n")
	row("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
	switch {
	case verbose && consumer:
		fmt.Fprintf(w, "%s %s %s %s", pad("CURRENT-EPOCH", 15), pad("CURRENT-ASSIGNMENT", aw), pad("TARGET-EPOCH", 15), "TARGET-ASSIGNMENT")
	case verbose:
		fmt.Fprint(w, "ASSIGNMENT")
	}
	fmt.Fprintln(w)
	for i := range members {
		m := &members[i]
		row(m.Group, m.ConsumerID, m.InstanceID, m.Host, m.ClientID, strconv.Itoa(m.numPartitions()))
		switch {
		case verbose && consumer:
			// The target epoch is the member's epoch once it reached its
			// target; Kafka prints the group's assignment epoch there.
			fmt.Fprintf(w, "%s %s %s %s", pad(strconv.Itoa(int(m.Epoch)), 15), pad(m.assignmentString(), aw),
				pad(strconv.Itoa(int(m.TargetEpoch)), 15), assignmentText(m.Target))
		case verbose:
			fmt.Fprint(w, m.assignmentString())
		}
		fmt.Fprintln(w)
	}
}

// GroupState is the --describe --state line of one group.
type GroupState struct {
	Group              string
	CoordinatorHost    string
	CoordinatorPort    int32
	CoordinatorID      int32
	AssignmentStrategy string
	State              string
	NumMembers         int
	// GroupEpoch and AssignmentEpoch are a KIP-848 group's epochs, -1
	// for a classic group; --verbose prints them (Kafka 4's GROUP-EPOCH
	// and TARGET-ASSIGNMENT-EPOCH, "-" for classic groups).
	GroupEpoch, AssignmentEpoch int32
}

// WriteState prints the --describe --state table of one group. As in
// Kafka, the first column is as wide as the coordinator column.
func WriteState(w io.Writer, s GroupState, verbose bool) {
	coord := fmt.Sprintf("%s:%d  (%d)", s.CoordinatorHost, s.CoordinatorPort, s.CoordinatorID)
	cw := max(25, len(coord))
	epoch := func(e int32) string {
		if e < 0 {
			return missing
		}
		return strconv.Itoa(int(e))
	}
	line := func(a, b, c, d, e, f, g string) {
		if verbose {
			fmt.Fprintf(w, "\n%s %s %s %s %s %s %s", pad(a, cw), pad(b, 25), pad(c, 20), pad(d, 15), pad(e, 15), pad(f, 25), g)
			return
		}
		fmt.Fprintf(w, "\n%s %s %s %s %s", pad(a, cw), pad(b, 25), pad(c, 20), pad(d, 15), g)
	}
	line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS")
	line(s.Group, coord, s.AssignmentStrategy, s.State, epoch(s.GroupEpoch), epoch(s.AssignmentEpoch), strconv.Itoa(s.NumMembers))
	fmt.Fprintln(w)
}

// ResetRow is one line of the --reset-offsets table.
type ResetRow struct {
	Group     string
	Topic     string
	Partition int32
	NewOffset int64
}

// WriteResetOffsets prints the --reset-offsets table (nothing when empty).
func WriteResetOffsets(w io.Writer, rows []ResetRow) {
	if len(rows) == 0 {
		return
	}
	line := func(a, b, c, d string) {
		fmt.Fprintf(w, "\n%s %s %s %s", pad(a, 30), pad(b, 30), pad(c, 10), pad(d, 15))
	}
	line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
	for _, r := range rows {
		line(r.Group, r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.NewOffset, 10))
	}
	fmt.Fprintln(w)
}

// ListedGroup is one line of --list with --state or --type.
type ListedGroup struct {
	Group, Type, State string
}

// WriteGroupList prints --list with the columns asked for.
func WriteGroupList(w io.Writer, groups []ListedGroup, withType, withState bool) {
	gw := 15
	for _, g := range groups {
		gw = max(gw, len(g.Group))
	}
	gw += 10
	line := func(g ListedGroup) {
		s := pad(g.Group, gw)
		if withType {
			s += " " + pad(g.Type, 20)
		}
		if withState {
			s += " " + pad(g.State, 20)
		}
		fmt.Fprintln(w, s)
	}
	line(ListedGroup{"GROUP", "TYPE", "STATE"})
	for _, g := range groups {
		line(g)
	}
}

// DeleteOffsetRow is one line of the --delete-offsets table. Partition -1
// stands for a topic whose partitions could not be listed.
type DeleteOffsetRow struct {
	Topic     string
	Partition int32
	Status    string // "Successful" or "Error: ..."
}

// WriteDeleteOffsets prints the --delete-offsets table, sorted as Kafka
// sorts it (by topic name followed by the partition number, as a string).
func WriteDeleteOffsets(w io.Writer, rows []DeleteOffsetRow) {
	key := func(r DeleteOffsetRow) string { return r.Topic + strconv.Itoa(int(r.Partition)) }
	sort.Slice(rows, func(i, j int) bool { return key(rows[i]) < key(rows[j]) })
	fmt.Fprintf(w, "\n%s %s %s\n", pad("TOPIC", 30), pad("PARTITION", 15), pad("STATUS", 15))
	for _, r := range rows {
		part := "Not Provided"
		if r.Partition >= 0 {
			part = strconv.Itoa(int(r.Partition))
		}
		fmt.Fprintf(w, "%s %s %s\n", pad(r.Topic, 30), pad(part, 15), pad(r.Status, 15))
	}
}

// WriteResetCSV prints the --reset-offsets plan as --export does: one line
// topic,partition,offset per partition when a single group was named,
// group,topic,partition,offset otherwise, then an empty line (Kafka prints
// the CSV text with println).
func WriteResetCSV(w io.Writer, rows []ResetRow, singleGroup bool) {
	for _, r := range rows {
		if !singleGroup {
			fmt.Fprintf(w, "%s,", r.Group)
		}
		fmt.Fprintf(w, "%s,%d,%d\n", r.Topic, r.Partition, r.NewOffset)
	}
	fmt.Fprintln(w)
}
