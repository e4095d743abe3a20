package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

const (
	compactKeys   = 40 // distinct keys c-000..c-039
	compactRounds = 25 // values per key; the last round's is the one kept
)

// compactRecords returns what c produces on the compacted topic: every key
// once per round, in round order, with values long enough to fill several
// small segments.
func compactRecords(c client) []outRecord {
	recs := make([]outRecord, 0, compactKeys*compactRounds)
	for round := range compactRounds {
		for k := range compactKeys {
			seq := round*compactKeys + k
			recs = append(recs, outRecord{
				Key:     fmt.Sprintf("c-%03d", k),
				Value:   fmt.Sprintf("round-%02d-c-%03d-%s", round, k, strings.Repeat("x", 100)),
				Headers: c.headers(seq),
			})
		}
	}
	return recs
}

// TestCompaction has each client produce rounds of values for the same
// keys to a compacted topic (cleanup.policy=compact, small segments,
// min.cleanable.dirty.ratio=0.01) and, once the cleaner has been over it,
// read it from the start: it must hold exactly the last value of each key.
func TestCompaction(t *testing.T) {
	t.Parallel()
	b := startBroker(t, groupBrokerOverrides...)
	python := scriptClient{"kafka-python", []string{pythonInterpreter(), scriptPath(t, "python/interop_client.py")}}
	js := scriptClient{"kafkajs", []string{"node", scriptPath(t, "js/interop_client.js")}}
	for _, tc := range []struct {
		c       client
		missing func() error
		install string
	}{
		{franzGo{"none", kgo.NoCompression()}, func() error { return nil }, ""},
		{kcat{}, kcatMissing, "apt-get install -y kcat"},
		{python, kafkaPythonMissing, "apt-get install -y python3-kafka"},
		{js, kafkaJSMissing, "apt-get install -y nodejs npm && (cd test/interop/js && npm ci)"},
	} {
		t.Run(tc.c.name(), func(t *testing.T) {
			t.Parallel()
			requireClient(t, tc.missing(), tc.install)
			compactScenario(t, b.Addr(), tc.c)
		})
	}
}

func compactScenario(t *testing.T, addr string, c client) {
	topic := "compacted-" + c.name()
	str := func(s string) *string { return &s }
	createTopicWith(t, addr, topic, numPartitions, map[string]*string{
		"cleanup.policy":            str("compact"),
		"segment.bytes":             str("4096"),
		"segment.ms":                str("100"),
		"min.cleanable.dirty.ratio": str("0.01"),
	})
	recs := compactRecords(c)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	if err := c.produce(ctx, t, addr, topic, recs); err != nil {
		t.Fatalf("%s produce: %v", c.name(), err)
	}
	last := map[string]string{}
	for _, r := range recs {
		last[r.Key] = r.Value
	}

	// The cleaner never touches the active segment, and a segment rolls
	// (segment.ms) only when a record arrives: write a tick record to each
	// partition now and then until a full read shows every key once.
	ticks := 0
	var lastTick time.Time
	err := testcluster.Poll(groupWaitTimeout, func() error {
		if time.Since(lastTick) > 300*time.Millisecond { // pacing, not an assertion
			produceTicks(t, addr, topic, ticks)
			ticks++
			lastTick = time.Now()
		}
		got, err := kgoRead(ctx, addr, topic)
		if err != nil {
			return testcluster.GiveUp(err)
		}
		if problems := checkCompacted(got, last); len(problems) > 0 {
			return fmt.Errorf("not compacted yet (%d records read): %s", len(got), problems[0])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("franz-go read of the compacted topic: %v", err)
	}

	got, err := c.consume(ctx, t, addr, topic)
	if err != nil {
		t.Fatalf("%s consume: %v", c.name(), err)
	}
	if problems := checkCompacted(got, last); len(problems) > 0 {
		t.Errorf("%s read of the compacted topic:\n  %s", c.name(), strings.Join(problems, "\n  "))
	}
	t.Logf("%s read %d records (%d data keys) after %d rounds of %d keys", c.name(), len(got), compactKeys, compactRounds, compactKeys)
}

// produceTicks writes record tick-<partition> = n to every partition.
func produceTicks(t *testing.T, addr, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatalf("franz-go producer: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var rs []*kgo.Record
	for p := range int32(numPartitions) {
		rs = append(rs, &kgo.Record{Partition: p, Key: fmt.Appendf(nil, "tick-%d", p), Value: fmt.Appendf(nil, "%d", n)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce ticks: %v", err)
	}
}

// checkCompacted returns what is wrong with a full read of the compacted
// topic: each data key c-NNN must appear exactly once, with its last
// value, and offsets must increase within each partition. The tick-*
// keys are left out: their latest record sits in the active segment,
// which is never cleaned, next to an older one that may not be cleaned yet.
func checkCompacted(got []record, last map[string]string) []string {
	var problems []string
	seen := map[string]int{}
	lastOffset := map[int32]int64{}
	for _, r := range got {
		if o, ok := lastOffset[r.Partition]; ok && r.Offset <= o {
			problems = append(problems, fmt.Sprintf("partition %d: offset %d after %d", r.Partition, r.Offset, o))
		}
		lastOffset[r.Partition] = r.Offset
		if strings.HasPrefix(r.Key, "tick-") {
			continue
		}
		want, ok := last[r.Key]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("unexpected key: %v", r))
		case r.Value != want:
			problems = append(problems, fmt.Sprintf("key %s: value %.12q..., want only the last, %.12q...", r.Key, r.Value, want))
		}
		seen[r.Key]++
	}
	for k := range last {
		if n := seen[k]; n != 1 {
			problems = append(problems, fmt.Sprintf("key %s read %d times, want once", k, n))
		}
	}
	if len(problems) > 10 {
		problems = append(problems[:10], "...")
	}
	return problems
}

// TestCheckCompactedCatchesDamage makes sure checkCompacted can fail.
func TestCheckCompactedCatchesDamage(t *testing.T) {
	last := map[string]string{"c-000": "b", "c-001": "d"}
	good := []record{
		{Partition: 0, Offset: 3, Key: "c-000", Value: "b"},
		{Partition: 0, Offset: 7, Key: "tick-0", Value: "1"},
		{Partition: 0, Offset: 9, Key: "tick-0", Value: "2"},
		{Partition: 1, Offset: 5, Key: "c-001", Value: "d"},
	}
	if problems := checkCompacted(good, last); len(problems) > 0 {
		t.Fatalf("a compacted read was reported as damaged: %v", problems)
	}
	for name, bad := range map[string][]record{
		"older value kept": append(slices.Clone(good), record{Partition: 1, Offset: 2, Key: "c-001", Value: "c"}),
		"stale value":      {good[0], {Partition: 1, Offset: 5, Key: "c-001", Value: "c"}},
		"key lost":         good[:3],
		"unknown key":      append(slices.Clone(good), record{Partition: 1, Offset: 6, Key: "zz", Value: "x"}),
		"offsets go back":  {good[0], {Partition: 0, Offset: 2, Key: "c-001", Value: "d"}},
	} {
		if problems := checkCompacted(bad, last); len(problems) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}
