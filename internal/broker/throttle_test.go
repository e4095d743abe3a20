package broker

import (
	"math"
	"testing"
	"time"
)

func TestRateLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newRateLimiter(func() time.Time { return now })
	l.record(1 << 30)
	if l.exceeded() {
		t.Fatal("unlimited limiter exceeded")
	}
	l.setRate(1000) // a full bucket: 1000 bytes
	l.record(900)
	if l.exceeded() {
		t.Fatal("exceeded after 900 of 1000 bytes")
	}
	l.record(600) // 500 over
	if !l.exceeded() {
		t.Fatal("not exceeded 500 bytes over")
	}
	now = now.Add(400 * time.Millisecond) // +400: still 100 over
	if !l.exceeded() {
		t.Fatal("not exceeded 100 bytes over")
	}
	now = now.Add(200 * time.Millisecond) // +200: 100 under
	if l.exceeded() {
		t.Fatal("exceeded after the debt was paid")
	}
	now = now.Add(time.Hour) // the bucket holds one second at most
	l.record(1001)
	if !l.exceeded() {
		t.Fatal("an idle hour allowed more than one second's burst")
	}
	l.setRate(math.MaxInt64)
	if l.exceeded() {
		t.Fatal("exceeded after the rate was removed")
	}
}

func TestListsReplica(t *testing.T) {
	for _, tc := range []struct {
		value     string
		partition int32
		broker    int32
		want      bool
	}{
		{"", 0, 1, false},
		{"*", 7, 3, true},
		{"0:1,0:2,10:3", 0, 2, true},
		{"0:1,0:2,10:3", 10, 3, true},
		{"0:1,0:2,10:3", 1, 0, false},
		{"0:1, 1:2", 1, 2, true},
		{"0:1", 0, 11, false},
	} {
		if got := listsReplica(tc.value, tc.partition, tc.broker); got != tc.want {
			t.Errorf("listsReplica(%q, %d, %d) = %v", tc.value, tc.partition, tc.broker, got)
		}
	}
}
