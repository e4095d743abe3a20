package quota

import (
	"testing"
	"time"
)

// recordCases are the hot-path situations of Record: no quota of the kind
// at all, quotas configured but none for this client, and a client with a
// quota whose sensor exists.
func recordCases() []struct {
	name   string
	quotas []Entry
	user   string
} {
	one := []Entry{{Entity: Entity{user("limited")}, Values: map[string]float64{ProducerByteRate: 1e12}}}
	return []struct {
		name   string
		quotas []Entry
		user   string
	}{
		{"no-quotas", nil, "limited"},
		{"quota-for-another-client", one, "unlimited"},
		{"one-quota", one, "limited"},
	}
}

func BenchmarkRecord(b *testing.B) {
	for _, c := range recordCases() {
		b.Run(c.name, func(b *testing.B) {
			m := NewManager(Config{})
			m.SetQuotas(c.quotas)
			now := t0
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.Record(ProduceBytes, c.user, "producer-1", 1024, now.Add(time.Duration(i)*time.Microsecond))
			}
		})
	}
}

func BenchmarkRecordParallel(b *testing.B) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{{Entity: Entity{client("")}, Values: map[string]float64{ProducerByteRate: 1e12}}})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Record(ProduceBytes, "ANONYMOUS", "producer-1", 1024, t0)
		}
	})
}

func TestRecordDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range recordCases() {
		m := NewManager(Config{})
		m.SetQuotas(c.quotas)
		m.Record(ProduceBytes, c.user, "producer-1", 1024, t0) // creates the sensor
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			i++
			m.Record(ProduceBytes, c.user, "producer-1", 1024, t0.Add(time.Duration(i)*time.Millisecond))
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Record", c.name, allocs)
		}
	}
}
