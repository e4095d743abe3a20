package replicaverify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

// batch is a v2 record batch header (and a little body) for offsets
// base..last with the given CRC; the verifier reads nothing else.
func batch(base, last int64, crc uint32) []byte {
	b := make([]byte, 61+8)
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	b[16] = 2
	binary.BigEndian.PutUint32(b[17:], crc)
	binary.BigEndian.PutUint32(b[23:], uint32(last-base))
	return b
}

func join(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// fixedClock reads 2024-01-02 03:04:05.006 local time, then 1 s later
// each time.
func fixedClock() func() time.Time {
	t := time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.Local)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// TestVerifierGolden drives the verifier through rounds of replica answers
// and checks Kafka's lines: the max lag, a checksum mismatch (verification
// goes on), and an offset mismatch (it ends).
func TestVerifierGolden(t *testing.T) {
	var out bytes.Buffer
	a, b := topicPartition{"orders", 0}, topicPartition{"orders", 1}
	v := newVerifier(&out, fixedClock(), 0, map[topicPartition]int{a: 3, b: 2}, map[topicPartition]int64{a: 0, b: 5})

	// Round 1: orders-0's replica 3 has only the first batch; orders-1
	// agrees on everything below its high watermark.
	b1, b2 := batch(0, 4, 111), batch(5, 9, 222)
	v.add(a, 1, fetched{highWatermark: 10, batches: join(b1, b2)})
	v.add(a, 2, fetched{highWatermark: 10, batches: join(b1, b2)})
	v.add(a, 3, fetched{highWatermark: 5, batches: b1})
	v.add(b, 1, fetched{highWatermark: 8, batches: join(batch(5, 7, 9), batch(8, 8, 10))})
	v.add(b, 2, fetched{highWatermark: 8, batches: join(batch(5, 7, 9), batch(8, 8, 10))})
	if err := v.verify(); err != nil {
		t.Fatal(err)
	}
	if v.offset(a) != 5 || v.offset(b) != 8 {
		t.Errorf("after round 1: offsets %d, %d; want 5, 8", v.offset(a), v.offset(b))
	}

	// Round 2: replica 3 caught up, but its second batch differs; a
	// replica that answered with an error holds orders-1 back.
	v.add(a, 1, fetched{highWatermark: 10, batches: b2})
	v.add(a, 2, fetched{highWatermark: 10, batches: b2})
	v.add(a, 3, fetched{highWatermark: 10, batches: join(batch(5, 9, 223), batch(10, 10, 1)[:20])})
	v.add(b, 1, fetched{highWatermark: 9, batches: batch(8, 8, 10)})
	v.add(b, 2, fetched{highWatermark: -1})
	if err := v.verify(); err != nil {
		t.Fatal(err)
	}
	if v.offset(a) != 10 || v.offset(b) != 8 {
		t.Errorf("after round 2: offsets %d, %d; want 10, 8", v.offset(a), v.offset(b))
	}

	// Round 3: the replicas' batches end at different offsets.
	v.add(a, 1, fetched{highWatermark: 20, batches: batch(10, 14, 5)})
	v.add(a, 2, fetched{highWatermark: 20, batches: batch(10, 15, 5)})
	v.add(a, 3, fetched{highWatermark: 20, batches: batch(10, 14, 5)})
	v.add(b, 1, fetched{highWatermark: 9})
	v.add(b, 2, fetched{highWatermark: 9})
	if err := v.verify(); !errors.Is(err, errOffsetMismatch) {
		t.Fatalf("round 3: error %v, want an offset mismatch", err)
	}
	golden.Check(t, "testdata/verifier-lines.golden", out.Bytes())
}

// TestVerifierReportInterval checks that the lag is printed only once the
// report interval has passed since the last report.
func TestVerifierReportInterval(t *testing.T) {
	var out bytes.Buffer
	tp := topicPartition{"t", 0}
	v := newVerifier(&out, fixedClock(), 2500*time.Millisecond, map[topicPartition]int{tp: 1}, nil)
	for range 5 {
		v.add(tp, 1, fetched{highWatermark: 0})
		if err := v.verify(); err != nil {
			t.Fatal(err)
		}
	}
	// Clock reads: start, then one per round, 1 s apart: reports at the
	// 3rd round (3 s > 2.5 s) and not again until the 6th.
	if n := bytes.Count(out.Bytes(), []byte("max lag is 0 for partition t-0 at offset 0 among 1 partitions")); n != 1 {
		t.Errorf("%d reports in 5 s with a 2.5 s interval, want 1:\n%s", n, out.String())
	}
}

func TestIncludeRegexp(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		topic string
		match bool
	}{
		{".*", "__consumer_offsets", true},
		{"orders", "orders", true},
		{"orders", "orders-2", false},
		{"orders,payments", "payments", true},
		{`"ord.*"`, "orders", true},
	} {
		re, err := includeRegexp(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if re.MatchString(tc.topic) != tc.match {
			t.Errorf("--topics-include %s on %s: match %v, want %v", tc.expr, tc.topic, !tc.match, tc.match)
		}
	}
	if _, err := includeRegexp("(a"); err == nil || err.Error() != "(a is an invalid regex" {
		t.Errorf("invalid regex: error %v", err)
	}
}
