package quota

import (
	"sync"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestRateThrottleIsKafkas(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{level("-", "", 1000)})
	// Ten seconds under the quota.
	for i := range int64(10) {
		if d := m.Record(ProduceBytes, "u", "c", 800, at(i*1000)); d != 0 {
			t.Fatalf("second %d: throttled %v under the quota", i, d)
		}
	}
	// A spike half way through the eleventh window: 8000+4600 bytes over
	// 10.5 s is 1200 B/s; (1200-1000)/1000 × 10.5 s = 2.1 s.
	if d := m.Record(ProduceBytes, "u", "c", 4600, at(10_500)); d != 2100*time.Millisecond {
		t.Fatalf("spike: throttle %v, want 2.1s", d)
	}
	// The spike keeps the client throttled until its sample leaves the
	// window (11 samples of 1 s), then it is free again.
	if d := m.Record(ProduceBytes, "u", "c", 0, at(12_600)); d == 0 {
		t.Fatalf("still inside the window: not throttled")
	}
	if d := m.Record(ProduceBytes, "u", "c", 0, at(22_000)); d != 0 {
		t.Fatalf("spike rolled out of the window: throttled %v", d)
	}
}

func TestRateFirstRecordCountsMinimumWindow(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{level("-", "", 1000)})
	// A first record is measured over (WindowNum-1) windows: 15000 B over
	// 10 s is 1500 B/s; (1500-1000)/1000 × 10 s = 5 s.
	if d := m.Record(ProduceBytes, "u", "c", 15_000, t0); d != 5*time.Second {
		t.Fatalf("throttle %v, want 5s", d)
	}
	// With quota.window.num=3 and 2 s windows, the minimum is 4 s:
	// 15000/4 = 3750 B/s; 2.75 × 4 s = 11 s.
	m = NewManager(Config{WindowNum: 3, WindowSize: 2 * time.Second})
	m.SetQuotas([]Entry{level("-", "", 1000)})
	if d := m.Record(ProduceBytes, "u", "c", 15_000, t0); d != 11*time.Second {
		t.Fatalf("small window: throttle %v, want 11s", d)
	}
	// A huge record is throttled for what Kafka computes, capped at the
	// int32 milliseconds of a response.
	if d := m.Record(ProduceBytes, "u", "c", 1e18, t0); d != time.Duration(1<<31-1)*time.Millisecond {
		t.Fatalf("huge record: throttle %v", d)
	}
}

func TestUnrecordTakesUsageBack(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{{Entity: Entity{client("")}, Values: map[string]float64{ConsumerByteRate: 1000}}})
	if d := m.Record(FetchBytes, "u", "c", 20_000, t0); d == 0 {
		t.Fatal("fetch over the quota not throttled")
	}
	m.Unrecord(FetchBytes, "u", "c", 20_000, t0)
	if d := m.Record(FetchBytes, "u", "c", 10_000, t0); d != 0 {
		t.Fatalf("after unrecord: throttled %v", d)
	}
	if got := m.MaxValueInQuotaWindow(FetchBytes, "u", "c"); got != 10_000 {
		t.Fatalf("MaxValueInQuotaWindow = %v, want 1000 × 10 s", got)
	}
	if got := m.MaxValueInQuotaWindow(ProduceBytes, "u", "c"); got < 1e300 {
		t.Fatalf("MaxValueInQuotaWindow without quota = %v", got)
	}
}

func TestRequestTimeIsPercentOfOneThreadCappedAtOneWindow(t *testing.T) {
	ms := func(v float64) float64 { return v * 1e6 } // handler time in ns
	m := NewManager(Config{})
	m.SetQuotas([]Entry{{Entity: Entity{user("u"), client("c")}, Values: map[string]float64{RequestPercentage: 1}}})
	// 1 % is 10 ms of handler time per second.
	for i := range int64(10) {
		if d := m.Record(RequestTime, "u", "c", ms(4), at(i*1000)); d != 0 {
			t.Fatalf("second %d: throttled %v", i, d)
		}
	}
	// 40 + 67.1 ms over 10.5 s is 10.2 ms/s: 0.02 × 10.5 s = 210 ms.
	if d := m.Record(RequestTime, "u", "c", ms(67.1), at(10_500)); d != 210*time.Millisecond {
		t.Fatalf("spike: throttle %v, want 210ms", d)
	}
	// A spike needing more than one window is throttled one window at a
	// time until it rolls out.
	m.SetQuotas([]Entry{{Entity: Entity{user("u"), client("d")}, Values: map[string]float64{RequestPercentage: 1}}})
	for i := range int64(11) {
		v := 0.0
		if i == 0 {
			v = ms(500)
		}
		if d := m.Record(RequestTime, "u", "d", v, at(100_000+i*1000)); d != time.Second {
			t.Fatalf("second %d after a 500 ms spike: throttle %v, want the 1s cap", i, d)
		}
	}
	if d := m.Record(RequestTime, "u", "d", 0, at(111_000)); d != 0 {
		t.Fatalf("spike rolled out: throttle %v", d)
	}
}

func TestSensorsExpireAfterAnHourIdle(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{level("", "", 1000)})
	m.Record(ProduceBytes, "idle", "c", 1, t0)
	m.Record(ProduceBytes, "busy", "c", 1, t0)
	for ms := int64(0); ms <= int64(time.Hour/time.Millisecond)+60_000; ms += 20_000 {
		m.Record(ProduceBytes, "busy", "c", 1, at(ms))
	}
	m.mu.RLock()
	_, idle := m.sensors[sensorKey{ProduceBytes, "idle", "c"}]
	_, busy := m.sensors[sensorKey{ProduceBytes, "busy", "c"}]
	m.mu.RUnlock()
	if idle || !busy {
		t.Fatalf("after an hour: idle sensor kept=%v, busy sensor kept=%v", idle, busy)
	}
	// An expired client starts afresh: 10 s of quota is accepted again.
	if d := m.Record(ProduceBytes, "idle", "c", 10_000, at(int64(2*time.Hour/time.Millisecond))); d != 0 {
		t.Fatalf("expired client: throttled %v", d)
	}
}

func TestConcurrentRecordsAreAllCounted(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{level("-", "", 1e12)})
	const goroutines, each = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m.Record(ProduceBytes, "u", "c", 1, at(int64(i%1000)))
				if g == 0 && i%100 == 0 {
					m.SetQuotas([]Entry{level("-", "", 1e12), level("other", "-", float64(i+1))})
				}
			}
		})
	}
	wg.Wait()
	s := m.lockedSensor(sensorKey{ProduceBytes, "", "c"}, 0)
	defer s.mu.Unlock()
	var sum float64
	for _, smp := range s.rate.samples {
		sum += smp.value
	}
	if sum != goroutines*each {
		t.Fatalf("recorded %v, want %d", sum, goroutines*each)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	for _, c := range []Config{{WindowNum: -1}, {WindowSize: 1500 * time.Millisecond}, {ControllerWindowSize: -time.Second}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if got := NewManager(Config{WindowNum: 5}).Config(); got.WindowNum != 5 || got.WindowSize != time.Second || got.ControllerWindowNum != 11 {
		t.Errorf("defaults not filled in: %+v", got)
	}
}
