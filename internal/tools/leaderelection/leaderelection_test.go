package leaderelection

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func TestResultsGolden(t *testing.T) {
	results := []Result{
		{TopicPartition: TopicPartition{"orders", 1}},
		{TopicPartition: TopicPartition{"audit", 0}, Code: kerr.ElectionNotNeeded.Code},
		{TopicPartition: TopicPartition{"orders", 0}},
		{TopicPartition: TopicPartition{"orders", 2}, Code: kerr.PreferredLeaderNotAvailable.Code,
			Message: "Failed to elect leader for partition orders-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy"},
		{TopicPartition: TopicPartition{"gone", 0}, Code: kerr.UnknownTopicOrPartition.Code},
	}
	var out bytes.Buffer
	err := WriteResults(&out, Preferred, results)
	if err == nil || err.Error() != "2 replica(s) could not be elected" {
		t.Errorf("error %v, want 2 replica(s) could not be elected", err)
	}
	golden.Check(t, filepath.Join("testdata", "results.golden"), out.Bytes())

	out.Reset()
	if err := WriteResults(&out, Unclean, results[:2]); err != nil {
		t.Fatal(err)
	}
	want := "Successfully completed leader election (UNCLEAN) for partitions orders-1\n" +
		"Valid replica already elected for partitions audit-0\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestParseJSON(t *testing.T) {
	got, err := ParseJSON([]byte(`{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (TopicPartition{"foo", 1}) || got[1] != (TopicPartition{"foobar", 2}) {
		t.Errorf("got %v", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"partition": []}`, `Replica election data is missing "partitions" field`},
		{`{"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 0}]}`, "Replica election data contains duplicate partitions: [a-0]"},
		{`null`, "Replica election data is empty"},
		{`{"partitions": [{"topic": "a"}]}`, `need "topic" and "partition"`},
	} {
		if _, err := ParseJSON([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--election-type <PREFERRED|UNCLEAN>") {
		t.Errorf("help:\n%s", out.String())
	}
	jsonPath := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(jsonPath, []byte(`{"x": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--all-topic-partitions"}, "Missing required option(s): bootstrap-server, election-type"},
		{[]string{"--bootstrap-server", "x:1", "--all-topic-partitions"}, "Missing required option(s): election-type"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "preferred"}, "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "preferred", "--topic", "t", "--all-topic-partitions"}, "One and only one of the following options is required"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "preferred", "--topic", "t"}, "Missing required option(s): partition"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "preferred", "--all-topic-partitions", "--partition", "1"}, "Option partition is only allowed if topic is used"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "sideways", "--all-topic-partitions"}, "expected one of PREFERRED|UNCLEAN"},
		{[]string{"--bootstrap-server", "x:1", "--election-type", "preferred", "--path-to-json-file", jsonPath}, `missing "partitions" field`},
	} {
		err := Run(context.Background(), tc.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
