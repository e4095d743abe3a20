package groups

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestFormatsGolden(t *testing.T) {
	var b bytes.Buffer
	WriteOffsets(&b, []OffsetRow{
		{Group: "g1", Topic: "orders", Partition: 0, Committed: 5, LogEnd: 12, ConsumerID: "client-1-6f1c2d1e-aaaa-bbbb-cccc-0123456789ab", Host: "/127.0.0.1", ClientID: "client-1"},
		{Group: "g1", Topic: "orders", Partition: 1, Committed: -1, LogEnd: 3, ConsumerID: "client-1-6f1c2d1e-aaaa-bbbb-cccc-0123456789ab", Host: "/127.0.0.1", ClientID: "client-1"},
		{Group: "g1", Topic: "a-much-longer-topic-name", Partition: 2, Committed: 7, LogEnd: -1},
	})
	checkGolden(t, "describe-offsets", b.Bytes())

	b.Reset()
	WriteOffsets(&b, []OffsetRow{{Group: "g2", Partition: -1, Committed: -1, LogEnd: -1, ConsumerID: "m1", Host: "/10.0.0.1", ClientID: "c"}})
	checkGolden(t, "describe-offsets-no-partitions", b.Bytes())

	members := []Member{
		{Group: "g1", ConsumerID: "c-1-abc", Host: "/127.0.0.1", ClientID: "c-1", Assignment: map[string][]int32{"t2": {3}, "t1": {10, 2, 0}}},
		{Group: "g1", ConsumerID: "c-2-def", Host: "/127.0.0.1", ClientID: "c-2", Assignment: map[string][]int32{}},
	}
	b.Reset()
	WriteMembers(&b, members, false)
	checkGolden(t, "describe-members", b.Bytes())
	b.Reset()
	WriteMembers(&b, members, true)
	checkGolden(t, "describe-members-verbose", b.Bytes())
	b.Reset()
	members[0].InstanceID = "static-instance-1"
	WriteMembers(&b, members, true)
	checkGolden(t, "describe-members-instance", b.Bytes())

	b.Reset()
	WriteState(&b, GroupState{Group: "g1", CoordinatorHost: "127.0.0.1", CoordinatorPort: 9092, CoordinatorID: 1, AssignmentStrategy: "range", State: "Stable", NumMembers: 2}, false)
	checkGolden(t, "describe-state", b.Bytes())

	// A KIP-848 consumer group: epochs with --verbose.
	b.Reset()
	WriteState(&b, GroupState{Group: "g848", CoordinatorHost: "127.0.0.1", CoordinatorPort: 9092, CoordinatorID: 1, AssignmentStrategy: "uniform",
		State: "Reconciling", NumMembers: 2, GroupEpoch: 7, AssignmentEpoch: 7}, true)
	checkGolden(t, "describe-state-consumer-verbose", b.Bytes())
	b.Reset()
	WriteMembers(&b, []Member{
		{Group: "g848", ConsumerID: "Xk2mQ9v1TfGm8yJc0a1b2c", Host: "/127.0.0.1", ClientID: "c-1", Epoch: 6,
			Assignment: map[string][]int32{"orders": {0, 1, 2}}, TargetEpoch: 7, Target: map[string][]int32{"orders": {0, 1}}},
		{Group: "g848", ConsumerID: "Pq7rS2t3UvWx4yZa5b6c7d", Host: "/127.0.0.1", ClientID: "c-2", Epoch: 7,
			Assignment: map[string][]int32{}, TargetEpoch: 7, Target: map[string][]int32{"orders": {2}}},
	}, true)
	checkGolden(t, "describe-members-consumer-verbose", b.Bytes())

	b.Reset()
	WriteResetOffsets(&b, []ResetRow{{"g1", "orders", 0, 0}, {"g1", "orders", 1, 42}})
	checkGolden(t, "reset-offsets", b.Bytes())

	b.Reset()
	WriteDeleteOffsets(&b, []DeleteOffsetRow{{"orders", 10, "Successful"}, {"orders", 2, "Error: GROUP_SUBSCRIBED_TO_TOPIC"}, {"missing", -1, "Error: UNKNOWN_TOPIC_OR_PARTITION"}})
	checkGolden(t, "delete-offsets", b.Bytes())

	b.Reset()
	WriteResetCSV(&b, []ResetRow{{"g1", "orders", 0, 0}, {"g1", "orders", 1, 42}}, true)
	WriteResetCSV(&b, []ResetRow{{"g1", "orders", 0, 0}, {"g2", "orders", 1, 42}}, false)
	checkGolden(t, "reset-offsets-csv", b.Bytes())

	b.Reset()
	WriteGroupList(&b, []ListedGroup{{"g1", "Classic", "Stable"}, {"a-very-long-group-name-here", "Classic", "Empty"}}, false, true)
	checkGolden(t, "list-state", b.Bytes())
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT1H":         time.Hour,
		"P1DT2H3M4.5S": 26*time.Hour + 3*time.Minute + 4500*time.Millisecond,
		"PT0.001S":     time.Millisecond,
		"-PT10M":       -10 * time.Minute,
		"pt15m":        15 * time.Minute,
	} {
		got, err := parseISODuration(in)
		if err != nil || got != want {
			t.Errorf("parseISODuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1H", "PT1X"} {
		if _, err := parseISODuration(bad); err == nil {
			t.Errorf("parseISODuration(%q): want an error", bad)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	got, err := parseDateTime("2024-03-01T10:20:30.400Z")
	if err != nil || got.UnixMilli() != 1709288430400 {
		t.Errorf("got %v, %v", got.UnixMilli(), err)
	}
	got, err = parseDateTime("2024-03-01T12:20:30.400+02:00")
	if err != nil || got.UnixMilli() != 1709288430400 {
		t.Errorf("with offset: got %v, %v", got.UnixMilli(), err)
	}
	if _, err := parseDateTime("yesterday"); err == nil {
		t.Error("want an error")
	}
}

func TestParseErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--list"},
		{"--bootstrap-server", "x:1"},
		{"--bootstrap-server", "x:1", "--describe"},
		{"--bootstrap-server", "x:1", "--reset-offsets", "--group", "g", "--all-topics"},
		{"--bootstrap-server", "x:1", "--reset-offsets", "--group", "g", "--to-earliest"},
		{"--bootstrap-server", "x:1", "--reset-offsets", "--group", "g", "--to-earliest", "--to-latest", "--all-topics"},
		{"--bootstrap-server", "x:1", "--reset-offsets", "--group", "g", "--to-earliest", "--all-topics", "--dry-run", "--execute"},
		{"--bootstrap-server", "x:1", "--list", "--nope"},
		{"--zookeeper", "z:2181", "--list"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parse(%q): want an error", args)
		}
	}
	if _, err := parse([]string{"--bootstrap-server", "x:1", "--describe", "--group", "g", "--state"}, &bytes.Buffer{}); err != nil {
		t.Errorf("--state without a value: %v", err)
	}
}

func TestParseResetPlan(t *testing.T) {
	got, err := parseResetPlan("orders,0,5\n\norders,1,7\n", "g1")
	if err != nil || len(got) != 1 || got["g1"][tp{"orders", 0}] != 5 || got["g1"][tp{"orders", 1}] != 7 {
		t.Errorf("single-group plan: %v, %v", got, err)
	}
	got, err = parseResetPlan("g1,orders,0,5\ng2,orders,1,7\n", "")
	if err != nil || len(got) != 2 || got["g1"][tp{"orders", 0}] != 5 || got["g2"][tp{"orders", 1}] != 7 {
		t.Errorf("group-column plan: %v, %v", got, err)
	}
	for _, bad := range []string{"orders,0,5\n", "g,orders,x,5\n", "g,orders,0,x\n", "a,b\n"} {
		if _, err := parseResetPlan(bad, ""); err == nil {
			t.Errorf("parseResetPlan(%q) without a single group: want an error", bad)
		}
	}
}
