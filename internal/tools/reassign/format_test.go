package reassign

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func TestHelpGolden(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/help.golden", out.Bytes())
}

// TestFormatsGolden prints every output format of the tool into one golden
// file, from fixed inputs.
func TestFormatsGolden(t *testing.T) {
	var b strings.Builder
	current := Assignment{{"orders", 1}: {2, 3, 1}, {"orders", 0}: {1, 2, 3}, {"audit", 0}: {3}}
	b.WriteString("# reassignment JSON\n" + FormatReassignmentJSON(current, nil) + "\n")
	b.WriteString("# reassignment JSON with log dirs\n" + FormatReassignmentJSON(
		Assignment{{"orders", 0}: {1, 2}}, map[Replica]string{{Partition{"orders", 0}, 2}: "/data/b"}) + "\n")
	b.WriteString("# rollback\n" + formatRollback(current) + "\n")
	b.WriteString("# status\n" + FormatStatus(map[Partition]State{
		{"orders", 0}: {Current: []int32{1, 2, 3, 4}, Target: []int32{2, 3, 4}},
		{"orders", 1}: {Current: []int32{2, 3, 1}, Target: []int32{2, 3, 1}, Done: true},
		{"audit", 0}:  {Current: []int32{3}, Target: []int32{1}, Done: true},
		{"gone", 0}:   {Current: []int32{}, Target: []int32{1}, Done: true},
	}) + "\n")
	b.WriteString("# moves\n" + FormatMoveStates(map[Replica]MoveState{
		{Partition{"t", 0}, 1}: {Kind: MoveCompleted, Current: "/a", Target: "/a"},
		{Partition{"t", 0}, 2}: {Kind: MoveActive, Current: "/a", Future: "/b", Target: "/b"},
		{Partition{"t", 1}, 2}: {Kind: MoveActive, Current: "/a", Future: "/c", Target: "/b"},
		{Partition{"t", 1}, 3}: {Kind: MoveCancelled, Current: "/a", Target: "/b"},
		{Partition{"t", 2}, 3}: {Kind: MoveMissingReplica, Target: "/b"},
		{Partition{"t", 3}, 3}: {Kind: MoveMissingLogDir, Target: "/b"},
	}) + "\n")
	b.WriteString("# list\n" + FormatList([]kadm.ListPartitionReassignmentsResponse{
		{Topic: "orders", Partition: 1, Replicas: []int32{2, 3, 4, 1}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
		{Topic: "orders", Partition: 0, Replicas: []int32{2, 3, 1}},
	}) + "\n")
	b.WriteString("# list, nothing\n" + FormatList(nil) + "\n")
	golden.Check(t, "testdata/formats.golden", []byte(b.String()))
}

func TestThrottledReplicas(t *testing.T) {
	moves := proposedMoves(
		map[Partition]kadm.ListPartitionReassignmentsResponse{
			{"a", 2}: {Topic: "a", Partition: 2, Replicas: []int32{1, 2, 5}, AddingReplicas: []int32{5}, RemovingReplicas: []int32{2}},
		},
		Assignment{{"a", 0}: {2, 3, 4}, {"a", 10}: {2, 3, 1}, {"b", 0}: {3}},
		Assignment{{"a", 0}: {1, 2, 3}, {"a", 10}: {1, 2, 3}, {"b", 0}: {1}},
	)
	leader, follower := ThrottledReplicas(moves)
	// Kafka sorts the pairs as strings ("10:1" before "2:1").
	wantLeader := map[string]string{"a": "0:1,0:2,0:3,10:1,10:2,10:3,2:1,2:2", "b": "0:1"}
	wantFollower := map[string]string{"a": "0:4,2:5", "b": "0:3"}
	for topic, want := range wantLeader {
		if leader[topic] != want {
			t.Errorf("leader throttle of %s = %q, want %q", topic, leader[topic], want)
		}
		if follower[topic] != wantFollower[topic] {
			t.Errorf("follower throttle of %s = %q, want %q", topic, follower[topic], wantFollower[topic])
		}
	}
}

func TestParseReassignmentJSON(t *testing.T) {
	plan, err := ParseReassignmentJSON(FormatReassignmentJSON(
		Assignment{{"x", 1}: {3, 1}, {"x", 0}: {1, 2}}, map[Replica]string{{Partition{"x", 1}, 1}: "/d"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Targets) != 2 || plan.Targets[0].Partition != (Partition{"x", 0}) || plan.Targets[1].Replicas[0] != 3 {
		t.Errorf("targets %+v", plan.Targets)
	}
	if len(plan.LogDirs) != 1 || plan.LogDirs[Replica{Partition{"x", 1}, 1}] != "/d" {
		t.Errorf("log dirs %v", plan.LogDirs)
	}
	for _, tc := range []struct{ json, err string }{
		{`{"version":1,"partitions":[]}`, "Partition reassignment list cannot be empty"},
		{`{"partitions":[{"topic":"x","partition":0,"replicas":[]}]}`, "Partition replica list cannot be empty"},
		{`{"partitions":[{"topic":"x","partition":0,"replicas":[1]},{"topic":"x","partition":0,"replicas":[2]}]}`,
			"Partition reassignment contains duplicate topic partitions: x-0"},
		{`{"partitions":[{"topic":"x","partition":0,"replicas":[1,2,1,2]},{"topic":"y","partition":3,"replicas":[4,4]}]}`,
			"Partition replica lists may not contain duplicate entries: x-0 contains multiple entries for 1,2. y-3 contains multiple entries for 4"},
		{`{"partitions":[{"topic":"x","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`,
			"Size of replicas list [1, 2] is different from size of log dirs list [any] for partition x-0"},
		{`{"version":2,"partitions":[]}`, "Not supported version field value 2"},
		{`{"partitions":`, "The input string is not a valid JSON"},
	} {
		plan, err := ParseReassignmentJSON(tc.json)
		if err == nil {
			_, err = checkExecutePlan(plan)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.json, err, tc.err)
		}
	}
}

func TestAssignReplicas(t *testing.T) {
	// Rack-unaware, Kafka's AdminUtils example: 5 brokers, 10 partitions,
	// 3 replicas, start 0 and shift 0.
	got, err := AssignReplicas([]Broker{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}}, 10, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2}}
	if !equalAssign(got, want) {
		t.Errorf("rack-unaware: %v, want %v", got, want)
	}
	// Rack-aware, Kafka's example: racks r1:{0,3}, r2:{1,5}, r3:{2,4};
	// alternated list 0,1,2,3,5,4; every partition on three racks.
	brokers := []Broker{{0, "r1"}, {1, "r2"}, {2, "r3"}, {3, "r1"}, {4, "r3"}, {5, "r2"}}
	got, err = AssignReplicas(brokers, 6, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = map[int32][]int32{0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 5}, 3: {3, 5, 4}, 4: {5, 4, 0}, 5: {4, 0, 1}}
	if !equalAssign(got, want) {
		t.Errorf("rack-aware: %v, want %v", got, want)
	}
	if _, err := AssignReplicas(brokers[:2], 1, 3, 0, 0); err == nil || err.Error() != "Replication factor: 3 larger than available brokers: 2." {
		t.Errorf("too few brokers: %v", err)
	}
	if _, err := AssignReplicas([]Broker{{0, "r1"}, {1, ""}}, 1, 1, 0, 0); err == nil {
		t.Error("mixed racks: want an error")
	}
}

func equalAssign(a, b map[int32][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slicesEqual(v, b[k]) {
			return false
		}
	}
	return true
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUsageErrors checks Kafka's argument checks, which fail before any
// connection is made.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--bootstrap-server", "x:1"}, "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"},
		{[]string{"--bootstrap-server", "x:1", "--list", "--verify"}, "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"},
		{[]string{"--list"}, "Please specify either --bootstrap-server or --bootstrap-controller"},
		{[]string{"--list", "--bootstrap-server", "x:1", "--bootstrap-controller", "y:1"}, "Please don't specify both --bootstrap-server and --bootstrap-controller"},
		{[]string{"--bootstrap-server", "x:1", "--execute"}, `Missing required argument "[reassignment-json-file]"`},
		{[]string{"--bootstrap-server", "x:1", "--generate", "--broker-list", "1"}, `Missing required argument "[topics-to-move-json-file]"`},
		{[]string{"--bootstrap-server", "x:1", "--verify", "--reassignment-json-file", "f", "--throttle", "5"},
			`Option "[throttle]" can't be used with action "[verify]"`},
		{[]string{"--bootstrap-controller", "x:1", "--execute", "--reassignment-json-file", "f"},
			`Option "[bootstrap-controller]" can't be used with action "[execute]"`},
		{[]string{"--bootstrap-server", "x:1", "--list", "--preserve-throttles"}, `Option "[preserve-throttles]" can't be used with action "[list]"`},
	} {
		var out bytes.Buffer
		err := Run(context.Background(), tc.args, &out, &out)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
		}
	}
}
