package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// goodRun is a clean outcome: two named producers write round-robin to
// three partitions of "t"; every third record of producer b failed to the
// producer but was stored anyway (allowed once). Each log holds what the
// broker stored, in order.
func goodRun() (acked []Record, logs []Log) {
	logs = []Log{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	for seq := range 30 {
		for _, producer := range []string{"a", "b"} {
			p := int32(seq % 3)
			l := &logs[p]
			rec := Record{Topic: "t", Partition: p, Offset: l.HighWatermark,
				Key: fmt.Appendf(nil, "k%d", seq), Value: fmt.Appendf(nil, "%s-%03d", producer, seq)}
			l.Records = append(l.Records, rec)
			l.HighWatermark++
			if producer == "b" && seq%3 == 2 {
				continue // failed to the producer, stored anyway
			}
			rec.Producer = producer
			acked = append(acked, rec)
		}
	}
	return acked, logs
}

func cloneLogs(logs []Log) []Log {
	out := slices.Clone(logs)
	for i := range out {
		out[i].Records = slices.Clone(out[i].Records)
	}
	return out
}

func TestCompareGood(t *testing.T) {
	acked, logs := goodRun()
	r := Compare(acked, logs)
	if err := r.Err(); err != nil {
		t.Fatalf("a good read-back was reported as damaged: %v", err)
	}
	if r.Acked != len(acked) || r.Verified != len(acked) || r.Read != 60 {
		t.Errorf("report %s: want %d acknowledged and verified, 60 read", r, len(acked))
	}

	// Acknowledgements listed producer by producer (not interleaved) are
	// as good: order is kept per producer.
	var byProducer []Record
	for _, p := range []string{"b", "a"} {
		for _, a := range acked {
			if a.Producer == p {
				byProducer = append(byProducer, a)
			}
		}
	}
	if err := Compare(byProducer, logs).Err(); err != nil {
		t.Errorf("acknowledgements grouped by producer: %v", err)
	}

	// Without producer names the order is the acknowledged offsets'.
	unnamed := slices.Clone(acked)
	slices.Reverse(unnamed)
	for i := range unnamed {
		unnamed[i].Producer = ""
	}
	if err := Compare(unnamed, logs).Err(); err != nil {
		t.Errorf("unnamed acknowledgements in reverse: %v", err)
	}

	// The same content acknowledged twice may be stored twice.
	twice := Record{Topic: "t", Partition: 1, Key: []byte("same"), Value: []byte("same")}
	l := cloneLogs(logs)
	for range 2 {
		twice.Offset = l[1].HighWatermark
		l[1].Records = append(l[1].Records, twice)
		l[1].HighWatermark++
		acked = append(acked, twice)
	}
	if err := Compare(acked, l).Err(); err != nil {
		t.Errorf("a record acknowledged twice and stored twice: %v", err)
	}
}

// TestCompareCatchesDamage damages a good read-back in each way the check
// must report, and checks that it is reported as that kind, for the right
// record.
func TestCompareCatchesDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(acked []Record, logs []Log) ([]Record, []Log)
		kind   Kind
		// value of the record the problem must name
		value string
		count int
	}{
		{"lost at the end", func(a []Record, l []Log) ([]Record, []Log) {
			l[1].Records = l[1].Records[:len(l[1].Records)-1] // b-028
			return a, l
		}, Lost, "b-028", 1},
		{"lost in the middle, offset reused", func(a []Record, l []Log) ([]Record, []Log) {
			// b-004 (partition 1, offset 3) was overwritten by another
			// record: nothing else moved.
			l[1].Records[3].Value = []byte("intruder")
			return a, l
		}, Lost, "b-004", 1},
		{"lost below the log start offset", func(a []Record, l []Log) ([]Record, []Log) {
			l[0].Records = l[0].Records[2:]
			l[0].LogStartOffset = 2
			return a, l
		}, Lost, "a-000", 2},
		{"partition not read", func(a []Record, l []Log) ([]Record, []Log) {
			return a, slices.Delete(l, 2, 3)
		}, Lost, "a-002", 10},
		{"doubled acknowledged", func(a []Record, l []Log) ([]Record, []Log) {
			dup := l[0].Records[4] // a-006
			dup.Offset = l[2].HighWatermark
			l[2].Records = append(l[2].Records, dup)
			return a, l
		}, Duplicated, "a-006", 1},
		{"doubled unacknowledged", func(a []Record, l []Log) ([]Record, []Log) {
			dup := l[2].Records[1] // b-002: failed to the producer
			dup.Offset = l[2].HighWatermark
			l[2].Records = append(l[2].Records, dup)
			return a, l
		}, Duplicated, "b-002", 1},
		{"misplaced", func(a []Record, l []Log) ([]Record, []Log) {
			// a-003 acknowledged at offset 2 of partition 0 is
			// read back one offset later, behind a record
			// inserted before it.
			p := l[0].Records
			p = slices.Insert(p, 2, Record{Topic: "t", Partition: 0, Offset: 2, Value: []byte("intruder")})
			for i := 3; i < len(p); i++ {
				p[i].Offset++
			}
			l[0].Records = p
			return a, l
		}, Misplaced, "a-003", 18},
		{"reordered", func(a []Record, l []Log) ([]Record, []Log) {
			// a-000 and a-003 swap places in partition 0.
			p := l[0].Records
			p[0].Value, p[2].Value = p[2].Value, p[0].Value
			p[0].Key, p[2].Key = p[2].Key, p[0].Key
			return a, l
		}, Reordered, "a-000", 1},
		{"acknowledged out of order by the broker", func(a []Record, l []Log) ([]Record, []Log) {
			// The log is intact, but producer a was acknowledged a-006
			// before a-003: a-006 was sent first (franz-go runs a
			// partition's promises in produce order) yet stored after
			// a record sent later.
			i := slices.IndexFunc(a, func(r Record) bool { return string(r.Value) == "a-003" })
			j := slices.IndexFunc(a, func(r Record) bool { return string(r.Value) == "a-006" })
			a[i], a[j] = a[j], a[i]
			return a, l
		}, Reordered, "a-006", 1},
		{"moved to another partition", func(a []Record, l []Log) ([]Record, []Log) {
			moved := l[0].Records[0] // a-000
			moved.Offset = l[1].HighWatermark
			l[1].Records = append(l[1].Records, moved)
			l[0].Records[0].Value = []byte("intruder")
			return a, l
		}, Misplaced, "a-000", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acked, logs := goodRun()
			acked, logs = tt.damage(slices.Clone(acked), cloneLogs(logs))
			r := Compare(acked, logs)
			if r.Err() == nil {
				t.Fatalf("damage not reported: %s", r)
			}
			if got := r.Count(tt.kind); got != tt.count {
				t.Errorf("%d %s records, want %d: %v", got, tt.kind, tt.count, r.Err())
			}
			named := slices.ContainsFunc(r.Problems, func(p Problem) bool {
				return p.Kind == tt.kind && string(p.Record.Value) == tt.value
			})
			if !named {
				t.Errorf("no %s problem names %s: %v", tt.kind, tt.value, r.Err())
			}
			if r.Verified >= r.Acked && tt.kind != Duplicated && tt.kind != Reordered {
				t.Errorf("every record verified despite damage: %s", r)
			}
		})
	}
}

func TestReportErr(t *testing.T) {
	acked, logs := goodRun()
	logs[0].Records = nil
	logs[2].Records = nil
	r := Compare(acked, logs)
	err := r.Err()
	if err == nil {
		t.Fatal("no error for an empty partition")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, r.String()) || !strings.Contains(msg, "lost: t-0@0 key \"k0\" value \"a-000\" (producer a) not read back") {
		t.Errorf("error does not name the first lost record:\n%s", msg)
	}
	if n := strings.Count(msg, "\n"); n != maxListed+1 || !strings.HasSuffix(msg, fmt.Sprintf("and %d more", len(r.Problems)-maxListed)) {
		t.Errorf("error lists %d lines for %d problems, want the first %d and a count:\n%s", n, len(r.Problems), maxListed, msg)
	}
}
