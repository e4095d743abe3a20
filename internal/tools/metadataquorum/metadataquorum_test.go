package metadataquorum

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/embed"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

// sample is a three-voter quorum with one observer whose follower 3 lags.
func sample() *Quorum {
	return &Quorum{
		ClusterID: "MkU3OEVBNTcwNTJENDM2Qk", LeaderID: 1, LeaderEpoch: 4, HighWatermark: 118,
		Voters: []Replica{
			{NodeID: 1, LogEndOffset: 120, LastFetchTimestamp: 1700000010000, LastCaughtUpTimestamp: 1700000010000},
			{NodeID: 2, LogEndOffset: 120, LastFetchTimestamp: 1700000009950, LastCaughtUpTimestamp: 1700000009950},
			{NodeID: 3, DirectoryID: [16]byte{0x2c, 0x1e, 0x4f}, LogEndOffset: 112, LastFetchTimestamp: 1700000009000, LastCaughtUpTimestamp: 1700000007500},
		},
		Observers: []Replica{{NodeID: 4, LogEndOffset: -1, LastFetchTimestamp: -1, LastCaughtUpTimestamp: -1}},
		Nodes: map[int32][]Endpoint{
			1: {{Name: "CONTROLLER", Host: "localhost", Port: 9093}},
			2: {{Name: "CONTROLLER", Host: "::1", Port: 9094}},
			3: {{Name: "CONTROLLER", Host: "localhost", Port: 9095}},
		},
	}
}

func TestStatusGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteStatus(&out, sample()); err != nil {
		t.Fatal(err)
	}
	check(t, "status", out.Bytes())
}

func TestReplicationGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteReplication(&out, sample(), false, time.UnixMilli(1700000010000)); err != nil {
		t.Fatal(err)
	}
	check(t, "replication", out.Bytes())
	out.Reset()
	if err := WriteReplication(&out, sample(), true, time.UnixMilli(1700000010000)); err != nil {
		t.Fatal(err)
	}
	check(t, "replication-human", out.Bytes())
	// A time after now is clock drift, as Kafka says.
	q := sample()
	q.Voters[1].LastFetchTimestamp = 1700000020000
	if err := WriteReplication(&out, q, true, time.UnixMilli(1700000010000)); err == nil || !strings.Contains(err.Error(), "possible drift in system clock") {
		t.Errorf("drift: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	check(t, "help", out.Bytes())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"describe", "--status"}, "exactly one of --bootstrap-server, --bootstrap-controller"},
		{[]string{"--bootstrap-server", "x:1", "--bootstrap-controller", "y:1", "describe", "--status"}, "only one of"},
		{[]string{"--bootstrap-server", "x:1", "describe"}, "One of --status or --replication must be specified with describe sub-command"},
		{[]string{"--bootstrap-server", "x:1", "describe", "--status", "--replication"}, "Only one of --status or --replication should be specified with describe sub-command"},
		{[]string{"--bootstrap-server", "x:1", "describe", "--status", "--human-readable"}, "The option --human-readable is only supported along with --replication"},
		{[]string{"--bootstrap-server", "x:1", "add-controller"}, "not supported"},
		{[]string{"--bootstrap-server", "x:1"}, "a command is required"},
	} {
		err := Run(context.Background(), tc.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestDescribeThreeNodes runs the tool against an embedded three-node
// cluster (each node a controller and a broker).
func TestDescribeThreeNodes(t *testing.T) {
	c, err := embed.NewCluster(embed.Dir(t.TempDir()), embed.Brokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := Run(ctx, append([]string{"--bootstrap-server", c.Addr(2)}, args...), &out, &errOut); err != nil {
			t.Fatalf("%q: %v (%s)", args, err, errOut.String())
		}
		return out.String()
	}
	status := run("describe", "--status")
	re := regexp.MustCompile(`(?m)\AClusterId:              \S+\nLeaderId:               [123]\nLeaderEpoch:            \d+\nHighWatermark:          \d+\nMaxFollowerLag:         \d+\nMaxFollowerLagTimeMs:   -?\d+\nCurrentVoters:          \[\{"id": 1, "directoryId": null, "endpoints": \["CONTROLLER://[^"]+"\]\}, \{"id": 2, .*\{"id": 3, .*\]\nCurrentObservers:       \[\]\n\z`)
	if !re.MatchString(status) {
		t.Errorf("status output:\n%s", status)
	}
	// Poll until every follower has caught up: the table then shows a
	// leader, two followers and no lag.
	var repl string
	deadline := time.Now().Add(30 * time.Second)
	for {
		repl = run("describe", "--replication")
		lines := strings.Split(strings.TrimSuffix(repl, "\n"), "\n")
		ok := len(lines) == 4 && strings.HasPrefix(lines[0], "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t")
		for i, l := range lines[1:] {
			f := strings.Split(l, "\t")
			want := map[int]string{0: "Leader", 1: "Follower", 2: "Follower"}[i]
			ok = ok && len(f) == 8 && strings.TrimSpace(f[1]) == zeroDirectoryID && strings.TrimSpace(f[3]) == "0" &&
				strings.TrimSpace(f[6]) == want && strings.TrimSpace(f[4]) != "-1"
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replication output never showed a caught-up quorum:\n%s", repl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Log("\n" + repl)
}
