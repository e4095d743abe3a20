package interop

import (
	"maps"
	"slices"
	"testing"
)

// TestChaosCheckCatchesDamage makes sure the chaos test's checks can fail:
// each kind of damage to a good read-back (checked by embed/check, whose
// own tests cover it in depth, plus the offset gaps of checkChaos), and to
// identical replica logs, must be reported.
func TestChaosCheckCatchesDamage(t *testing.T) {
	good := func() (map[string]chaosAck, map[int32][]chaosRecord) {
		acked := map[string]chaosAck{}
		logs := map[int32][]chaosRecord{}
		for seq := range 30 {
			for producer := range 2 {
				p := int32(seq % chaosPartitions)
				v := chaosValue(producer, seq)
				off := int64(len(logs[p]))
				logs[p] = append(logs[p], chaosRecord{Offset: off, Value: v})
				if seq != 7 { // an unacknowledged record that was stored anyway
					acked[v] = chaosAck{Partition: p, Offset: off}
				}
			}
		}
		return acked, logs
	}
	acked, logs := good()
	if r := checkChaos(acked, logs); len(r.problems) > 0 || r.checked != len(acked) || r.read != 60 {
		t.Fatalf("a good read was reported as damaged: checked %d of %d, read %d, problems %v", r.checked, len(acked), r.read, r.problems)
	}

	damage := map[string]struct {
		f     func(map[string]chaosAck, map[int32][]chaosRecord)
		count func(chaosReport) int
	}{
		"lost": {func(a map[string]chaosAck, l map[int32][]chaosRecord) {
			l[1] = l[1][:len(l[1])-1]
		}, func(r chaosReport) int { return r.lost }},
		"doubled": {func(a map[string]chaosAck, l map[int32][]chaosRecord) {
			l[2] = append(l[2], chaosRecord{Offset: int64(len(l[2])), Value: l[0][0].Value})
		}, func(r chaosReport) int { return r.doubled }},
		"misplaced": {func(a map[string]chaosAck, l map[int32][]chaosRecord) {
			v := l[0][4].Value
			a[v] = chaosAck{Partition: 0, Offset: 5}
		}, func(r chaosReport) int { return r.misplaced }},
		"reordered": {func(a map[string]chaosAck, l map[int32][]chaosRecord) {
			// records 0 and 2 of partition 0 are seq 0 and 3 of producer 0
			l[0][0].Value, l[0][2].Value = l[0][2].Value, l[0][0].Value
		}, func(r chaosReport) int { return r.outOfOrder }},
		"offset gap": {func(a map[string]chaosAck, l map[int32][]chaosRecord) {
			l[1][3].Offset++
		}, func(r chaosReport) int { return len(r.problems) }},
	}
	for _, name := range slices.Sorted(maps.Keys(damage)) {
		d := damage[name]
		a, l := good()
		d.f(a, l)
		r := checkChaos(a, l)
		if d.count(r) == 0 || len(r.problems) == 0 {
			t.Errorf("%s: not reported: %+v", name, r)
		}
	}

	batches := func() []batchInfo {
		return []batchInfo{
			{BaseOffset: 0, LastOffsetDelta: 4, RecordCount: 5, PartitionLeaderEpoch: 0, CRC: 1},
			{BaseOffset: 5, LastOffsetDelta: 2, RecordCount: 3, PartitionLeaderEpoch: 1, CRC: 2},
			{BaseOffset: 8, LastOffsetDelta: 1, RecordCount: 2, PartitionLeaderEpoch: 2, CRC: 3},
		}
	}
	same := map[int32][]batchInfo{1: batches(), 2: batches(), 3: batches()[:2]}
	if diff := replicaLogDiff(same, 8); diff != "" {
		t.Errorf("identical logs below the high watermark reported as different: %s", diff)
	}
	logDamage := map[string]func(map[int32][]batchInfo) int64{
		"crc":          func(r map[int32][]batchInfo) int64 { r[2][1].CRC = 9; return 10 },
		"leader epoch": func(r map[int32][]batchInfo) int64 { r[3][0].PartitionLeaderEpoch = 7; return 10 },
		"short":        func(r map[int32][]batchInfo) int64 { r[3] = r[3][:2]; return 10 },
		"gap":          func(r map[int32][]batchInfo) int64 { r[1] = slices.Delete(r[1], 1, 2); return 10 },
	}
	for name, f := range logDamage {
		r := map[int32][]batchInfo{1: batches(), 2: batches(), 3: batches()}
		hw := f(r)
		if diff := replicaLogDiff(r, hw); diff == "" {
			t.Errorf("replica damage %q not reported", name)
		}
	}
}
