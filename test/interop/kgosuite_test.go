package interop

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// TestFranzGoSuite runs franz-go's own integration tests, the ones its
// author runs against Apache Kafka (package
// github.com/twmb/franz-go/pkg/kgo at the version in go.mod, from the
// module cache), against Silkworm: on one node (KGO_TEST_RF=1) and on a
// three-node cluster (KGO_TEST_RF=3). They cover producing, consuming,
// classic and KIP-848 groups, transactions (TestTxnEtl's
// read-process-write chains), share groups and the admin APIs these use,
// and found a deadlock of three nodes running transactions, a regex
// subscription that missed internal topics and a share group that
// AlterShareGroupOffsets did not create. The SCRAM and OAuth tests skip
// (they need KGO_TEST_SCRAM_SEEDS and KGO_TEST_OAUTH_SEEDS), as does
// TestIssueProduceBrokerTooOldFailsRecords (Silkworm still takes Produce
// v0-v2, for old clients). One racy test is left out (see below).
func TestFranzGoSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs franz-go's integration suite: minutes")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("franz-go's suite needs the go command: %v", err)
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		nodes int
	}{{"single", 1}, {"cluster", 3}} {
		t.Run(c.name, func(t *testing.T) {
			var seeds []string
			if c.nodes == 1 {
				seeds = []string{startProcessBroker(t).Addr()}
			} else {
				seeds = startProcessCluster(t, c.nodes).Seeds()
			}
			// Test848RegexBrokerResolves stops polling once it has seen as
			// many topics as it wants, counting __consumer_offsets, which its
			// regex also matches: when that topic's records come first it
			// misses pfx-orders (two of four cluster runs here), against
			// Kafka alike. Its point, the broker assigning an internal topic
			// to a regex, is internal/group's
			// TestConsumerGroupRegexMatchesInternalTopics.
			cmd := exec.Command(gobin, "test", "-count=1", "-timeout=15m",
				"-skip", "^Test848RegexBrokerResolves$", "github.com/twmb/franz-go/pkg/kgo")
			cmd.Dir = root
			cmd.Env = append(os.Environ(),
				"KGO_SEEDS="+strings.Join(seeds, ","),
				"KGO_TEST_RF="+map[int]string{1: "1", 3: "3"}[c.nodes],
				"KGO_TEST_RECORDS=20000",
			)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("franz-go's integration tests against %d node(s) failed (%v) after %v:\n%s",
					c.nodes, err, time.Since(start).Round(time.Second), failures(out))
			}
			t.Logf("franz-go's integration tests passed against %d node(s) in %v", c.nodes, time.Since(start).Round(time.Second))
		})
	}
}

// failures keeps the lines of go test's output about failures (without -v
// it prints only failing tests' logs), at most the last 200.
func failures(out []byte) string {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) > 200 {
		lines = lines[len(lines)-200:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
