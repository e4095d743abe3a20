package quota

import (
	"testing"
	"time"
)

// A producer sending as fast as it can, waiting out each throttle time
// before its next request (as a client does under KIP-219), gets its
// quota; a client without a quota on the same broker is never throttled.
//
// Kafka's windowed rate lets a new client send (WindowNum−1) windows of
// quota at once, and a greedy client then sends in waves as that first
// burst leaves the window and is replaced by another, damping over a few
// periods: over the very first minute a client can get up to ~10 % more
// than its quota. So the test runs two simulated minutes and checks the
// second minute alone within 10 % and both together within 5 %.
func TestThrottledClientConvergesToItsQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		quota float64 // bytes per second
		batch float64 // bytes per request
		rtt   time.Duration
	}{
		{"defaults", Config{}, 1 << 20, 16 << 10, time.Millisecond},
		{"slower client", Config{}, 1 << 20, 100 << 10, 7 * time.Millisecond},
		{"small batches", Config{}, 100_000, 1000, 200 * time.Microsecond},
		{"batch of one second", Config{}, 1 << 20, 1 << 20, time.Millisecond},
		{"three windows", Config{WindowNum: 3}, 500_000, 8 << 10, time.Millisecond},
		{"five second windows", Config{WindowSize: 5 * time.Second}, 200_000, 4 << 10, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(tc.cfg)
			m.SetQuotas([]Entry{{Entity: Entity{user("alice")}, Values: map[string]float64{ProducerByteRate: tc.quota}}})
			var sent, firstMinute float64
			var throttled int
			now := t0
			for end := t0.Add(2 * time.Minute); now.Before(end); {
				if firstMinute == 0 && !now.Before(t0.Add(time.Minute)) {
					firstMinute = sent
				}
				d := m.Record(ProduceBytes, "alice", "producer", tc.batch, now)
				sent += tc.batch
				if d > 0 {
					throttled++
				}
				// The client without a quota records at the same instants.
				if d := m.Record(ProduceBytes, "bob", "producer", 10*tc.batch, now); d != 0 {
					t.Fatalf("client without a quota throttled %v at %v", d, now.Sub(t0))
				}
				now = now.Add(tc.rtt + d)
			}
			secondMinute := (sent - firstMinute) / 60 / tc.quota
			overall := sent / now.Sub(t0).Seconds() / tc.quota
			t.Logf("second minute %+.2f%%, two minutes %+.2f%%, %d throttled requests",
				100*(secondMinute-1), 100*(overall-1), throttled)
			if secondMinute < 0.9 || secondMinute > 1.1 {
				t.Errorf("second minute: %.3f × the quota, want within 10%%", secondMinute)
			}
			if overall < 0.95 || overall > 1.05 {
				t.Errorf("two minutes: %.3f × the quota, want within 5%%", overall)
			}
			if throttled == 0 {
				t.Error("never throttled")
			}
		})
	}
}
