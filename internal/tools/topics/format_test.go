package topics

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func strp(s string) *string { return &s }

func sampleTopic() TopicDescription {
	return TopicDescription{
		Name: "orders", ID: [16]byte{0xfb, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		ReplicationFactor: 3,
		Configs: []ConfigEntry{
			{Name: "cleanup.policy", Value: strp("compact"), IsDefault: false},
			{Name: "retention.ms", Value: strp("604800000"), IsDefault: true},
			{Name: "min.insync.replicas", Value: strp("2"), IsDefault: false},
			{Name: "segment.bytes", Value: nil, IsDefault: false},
		},
		Partitions: []PartitionDescription{
			{Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
			{Partition: 1, Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2}},
			{Partition: 2, Leader: -1, Replicas: []int32{3, 1, 2}, ISR: nil},
			{Partition: 3, Leader: 4, Replicas: []int32{4, 1, 2}, ISR: []int32{4, 1}},
		},
	}
}

func TestDescribeGolden(t *testing.T) {
	live := map[int32]bool{1: true, 2: true, 3: true}
	for _, tc := range []struct {
		name string
		f    DescribeFilter
	}{
		{"describe", DescribeFilter{}},
		{"under-replicated", DescribeFilter{UnderReplicated: true}},
		{"unavailable", DescribeFilter{Unavailable: true, LiveBrokers: live}},
		{"under-min-isr", DescribeFilter{UnderMinISR: true}},
		{"at-min-isr", DescribeFilter{AtMinISR: true}},
		{"with-overrides", DescribeFilter{TopicsWithOverride: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := sampleTopic()
			var b bytes.Buffer
			WriteDescription(&b, &td, tc.f)
			plain := TopicDescription{Name: "plain", ReplicationFactor: 1,
				Configs:    []ConfigEntry{{Name: "retention.ms", Value: strp("1"), IsDefault: true}},
				Partitions: []PartitionDescription{{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}}
			WriteDescription(&b, &plain, tc.f)
			checkGolden(t, "describe-"+tc.name, b.Bytes())
		})
	}
}

func TestIncludeList(t *testing.T) {
	for _, tc := range []struct {
		expr, topic string
		want        bool
	}{
		{"t", "t", true},
		{"t", "t2", false},
		{"t.*", "t2", true},
		{"a,b", "b", true},
		{"\"a\"", "a", true},
		{"test\\.topic", "test_topic", false},
	} {
		re, err := includeList(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(tc.topic); got != tc.want {
			t.Errorf("includeList(%q).Match(%q) = %v, want %v", tc.expr, tc.topic, got, tc.want)
		}
	}
	if _, err := includeList("("); err == nil {
		t.Error("bad regex: want an error")
	}
}

func TestParseErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--list"},
		{"--bootstrap-server", "x:1"},
		{"--bootstrap-server", "x:1", "--list", "--describe"},
		{"--bootstrap-server", "x:1", "--create"},
		{"--bootstrap-server", "x:1", "--alter", "--topic", "t"},
		{"--bootstrap-server", "x:1", "--alter", "--topic", "t", "--partitions", "3", "--config", "a=b"},
		{"--bootstrap-server", "x:1", "--list", "--bogus"},
		{"--zookeeper", "x:2181", "--list"},
		{"--bootstrap-server", "x:1", "--create", "--topic", "t", "--partitions", "x"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parse(%q): want an error", args)
		}
	}
}
