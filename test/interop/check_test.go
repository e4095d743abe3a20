package interop

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheckCatchesDamage makes sure the scenario's checks can fail: each
// kind of damage to a good read must be reported.
func TestCheckCatchesDamage(t *testing.T) {
	c := scriptClient{clientName: "self-check"}
	want := makeRecords(c)
	from := time.UnixMilli(1_700_000_000_000)
	to := from.Add(time.Minute)
	good := make([]record, len(want))
	next := map[int32]int64{}
	for i, w := range want {
		p := int32(i % numPartitions)
		good[i] = record{Partition: p, Offset: next[p], Key: w.Key, Value: w.Value, Headers: w.Headers, Timestamp: from.UnixMilli() + int64(i%1000)}
		next[p]++
	}
	if problems := check(want, good, from, to); len(problems) > 0 {
		t.Fatalf("a good read was reported as damaged:\n%s", strings.Join(problems, "\n"))
	}

	damage := map[string]func([]record) []record{
		"missing record": func(rs []record) []record { return rs[:len(rs)-1] },
		"doubled record": func(rs []record) []record { return append(rs, rs[len(rs)-3]) },
		"offset gap": func(rs []record) []record {
			rs[len(rs)-1].Offset++
			return rs
		},
		"reordered in partition": func(rs []record) []record {
			rs[0].Key, rs[3].Key = rs[3].Key, rs[0].Key
			rs[0].Value, rs[3].Value = rs[3].Value, rs[0].Value
			rs[0].Headers, rs[3].Headers = rs[3].Headers, rs[0].Headers
			return rs
		},
		"wrong value":     func(rs []record) []record { rs[5].Value += "!"; return rs },
		"lost header":     func(rs []record) []record { rs[6].Headers = rs[6].Headers[:1]; return rs },
		"changed header":  func(rs []record) []record { rs[7].Headers = []header{{"seq", "x"}}; return rs },
		"timestamp early": func(rs []record) []record { rs[8].Timestamp = from.UnixMilli() - 1; return rs },
		"timestamp late":  func(rs []record) []record { rs[9].Timestamp = to.UnixMilli() + 1; return rs },
		"unused partition": func(rs []record) []record {
			return slices.DeleteFunc(rs, func(r record) bool { return r.Partition == 2 })
		},
	}
	for name, f := range damage {
		got := f(cloneRecords(good))
		if problems := check(want, got, from, to); len(problems) == 0 {
			t.Errorf("%s: not reported", name)
		}
		if name == "unused partition" {
			continue
		}
		if diffs := diffRecords(good, got); len(diffs) == 0 {
			t.Errorf("%s: diffRecords saw no difference", name)
		}
	}
	if diffs := diffRecords(good, cloneRecords(good)); len(diffs) > 0 {
		t.Errorf("identical reads differ: %v", diffs)
	}
}

func cloneRecords(rs []record) []record {
	out := make([]record, len(rs))
	for i, r := range rs {
		r.Headers = slices.Clone(r.Headers)
		out[i] = r
	}
	return out
}
