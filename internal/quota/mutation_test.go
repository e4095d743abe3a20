package quota

import (
	"errors"
	"testing"
	"time"
)

func mutationQuota(v float64) []Entry {
	return []Entry{{Entity: Entity{user("u")}, Values: map[string]float64{ControllerMutationRate: v}}}
}

func TestStrictMutationQuota(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas(mutationQuota(10)) // burst: 11 windows × 1 s × 10 = 110
	q := m.MutationQuota("u", "c", true)
	// A full bucket accepts 100 (10 left), then 100 more because it is
	// not yet empty (-90), then refuses.
	for i := range 2 {
		if err := q.Record(100, t0); err != nil || q.Exceeded() {
			t.Fatalf("record %d: %v, exceeded=%v", i, err, q.Exceeded())
		}
	}
	if d := q.ThrottleTime(t0); d != 0 {
		t.Fatalf("throttle %v before any refusal", d)
	}
	err := q.Record(100, t0)
	var te *ThrottlingError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottlingQuotaExceeded) || !q.Exceeded() {
		t.Fatalf("third record: err=%v exceeded=%v", err, q.Exceeded())
	}
	if te.ThrottleTime != 9*time.Second || err.Error() != "The throttling quota has been exceeded." {
		t.Fatalf("refusal: %v, %q; want 9s (90 tokens at 10/s)", te.ThrottleTime, err)
	}
	if d := q.ThrottleTime(t0.Add(5 * time.Second)); d != 4*time.Second {
		t.Fatalf("throttle 5 s later: %v, want 4s", d)
	}
	// The refused record took nothing: after 9 s the bucket is at 0 and
	// accepts again.
	q2 := m.MutationQuota("u", "other-client", true) // same user-level bucket
	if err := q2.Record(100, t0.Add(9*time.Second)); err != nil {
		t.Fatalf("after refilling: %v", err)
	}
	// The generic Record is strict too.
	if d := m.Record(ControllerMutations, "u", "c", 1, t0.Add(9*time.Second)); d != 10*time.Second {
		t.Fatalf("Record: throttle %v, want 10s", d)
	}
}

func TestPermissiveMutationQuota(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas(mutationQuota(10))
	q := m.MutationQuota("u", "c", false)
	for i, want := range []time.Duration{0, 9 * time.Second, 19 * time.Second} {
		if err := q.Record(100, t0); err != nil || q.Exceeded() {
			t.Fatalf("record %d: %v, exceeded=%v", i, err, q.Exceeded())
		}
		if d := q.ThrottleTime(t0); d != want {
			t.Fatalf("record %d: throttle %v, want %v", i, d, want)
		}
	}
	if d := q.ThrottleTime(t0.Add(5 * time.Second)); d != 14*time.Second {
		t.Fatalf("5 s later: %v", d)
	}
}

func TestMutationQuotaWithoutQuota(t *testing.T) {
	m := NewManager(Config{})
	q := m.MutationQuota("u", "c", true)
	for range 10 {
		if err := q.Record(1_000_000, t0); err != nil {
			t.Fatal(err)
		}
	}
	if q.Exceeded() || q.ThrottleTime(t0) != 0 {
		t.Fatal("unbounded quota throttled")
	}
	m.SetQuotas(mutationQuota(10))
	if q := m.MutationQuota("someone-else", "c", true); q.Record(1000, t0) != nil || q.Record(1000, t0) != nil {
		t.Fatal("a user without a quota was refused")
	}
}

func TestMutationBucketBurstFollowsConfig(t *testing.T) {
	m := NewManager(Config{ControllerWindowNum: 2, ControllerWindowSize: 3 * time.Second})
	m.SetQuotas(mutationQuota(5)) // burst 2 × 3 s × 5 = 30
	if d := m.Record(ControllerMutations, "u", "c", 40, t0); d != 0 {
		t.Fatalf("full bucket refused: %v", d)
	}
	// 30 - 40 = -10 tokens: 2 s at 5/s.
	if d := m.Record(ControllerMutations, "u", "c", 1, t0); d != 2*time.Second {
		t.Fatalf("throttle %v, want 2s", d)
	}
}
