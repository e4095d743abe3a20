package quota

import (
	"fmt"
	"testing"
	"time"
)

// level builds an entry with producer_byte_rate v at one of Kafka's eight
// places; "" is <default>, "-" means the part is absent.
func level(u, c string, v float64) Entry {
	var e Entity
	if u != "-" {
		e = append(e, user(u))
	}
	if c != "-" {
		e = append(e, client(c))
	}
	return Entry{Entity: e, Values: map[string]float64{ProducerByteRate: v}}
}

// allLevels is every level of Kafka's precedence list, highest first, for
// user alice and client id app; the limit is the level's rank.
func allLevels() []Entry {
	return []Entry{
		level("alice", "app", 1), // /users/alice/clients/app
		level("alice", "", 2),    // /users/alice/clients/<default>
		level("alice", "-", 3),   // /users/alice
		level("", "app", 4),      // /users/<default>/clients/app
		level("", "", 5),         // /users/<default>/clients/<default>
		level("", "-", 6),        // /users/<default>
		level("-", "app", 7),     // /clients/app
		level("-", "", 8),        // /clients/<default>
	}
}

func TestPrecedenceRemovingLevelsFallsBackToTheNext(t *testing.T) {
	m := NewManager(Config{})
	levels := allLevels()
	for removed := 0; removed <= len(levels); removed++ {
		m.SetQuotas(levels[removed:])
		limit, ok := m.Quota(ProduceBytes, "alice", "app")
		if removed == len(levels) {
			if ok {
				t.Fatalf("no quotas left: Quota = %v, want none", limit)
			}
			continue
		}
		if want := float64(removed + 1); !ok || limit != want {
			t.Errorf("levels %d..8 configured: Quota(alice, app) = %v, %v; want %v (%v)",
				removed+1, limit, ok, want, levels[removed].Entity)
		}
	}
}

func TestPrecedenceEachLevelAlone(t *testing.T) {
	// With one level configured, who does it apply to?
	clients := [][2]string{{"alice", "app"}, {"alice", "other"}, {"bob", "app"}, {"bob", "other"}}
	for i, l := range allLevels() {
		want := [][4]bool{
			{true, false, false, false}, // alice/app only
			{true, true, false, false},  // every client of alice
			{true, true, false, false},  // alice
			{true, false, true, false},  // app of every user
			{true, true, true, true},    // everyone
			{true, true, true, true},    // everyone
			{true, false, true, false},  // app
			{true, true, true, true},    // everyone
		}[i]
		m := NewManager(Config{})
		m.SetQuotas([]Entry{l})
		for j, c := range clients {
			limit, ok := m.Quota(ProduceBytes, c[0], c[1])
			if ok != want[j] || (ok && limit != float64(i+1)) {
				t.Errorf("only %v: Quota(%s, %s) = %v, %v; want applies=%v", l.Entity, c[0], c[1], limit, ok, want[j])
			}
		}
	}
}

func TestPrecedenceMixed(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas(allLevels())
	for _, tc := range []struct {
		user, client string
		want         float64
	}{
		{"alice", "app", 1},
		{"alice", "other", 2}, // /users/alice/clients/<default> beats /users/alice
		{"bob", "app", 4},     // /users/<default>/clients/app beats /users/<default>
		{"bob", "other", 5},
	} {
		if got, ok := m.Quota(ProduceBytes, tc.user, tc.client); !ok || got != tc.want {
			t.Errorf("Quota(%s, %s) = %v, %v; want %v", tc.user, tc.client, got, ok, tc.want)
		}
	}
	// A user quota beats a client quota, defaults included.
	m.SetQuotas([]Entry{level("", "-", 10), level("-", "app", 20)})
	if got, _ := m.Quota(ProduceBytes, "bob", "app"); got != 10 {
		t.Errorf("/users/<default> vs /clients/app: got %v, want 10", got)
	}
	// An empty client id is never limited by a client quota (Kafka's
	// quota callback treats an empty tag as absent).
	m.SetQuotas([]Entry{level("-", "", 8)})
	if got, ok := m.Quota(ProduceBytes, "bob", ""); ok {
		t.Errorf("/clients/<default> applied to an empty client id: %v", got)
	}
	// ... but a user quota still applies to it.
	m.SetQuotas([]Entry{level("", "", 5), level("", "-", 6)})
	if got, ok := m.Quota(ProduceBytes, "bob", ""); !ok || got != 6 {
		t.Errorf("empty client id under /users/<default>/clients/<default> and /users/<default>: %v, %v; want 6", got, ok)
	}
}

func TestQuotasAreSeparatePerKind(t *testing.T) {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{
		{Entity: Entity{user("alice")}, Values: map[string]float64{ProducerByteRate: 100, RequestPercentage: 50}},
		{Entity: Entity{client("")}, Values: map[string]float64{ConsumerByteRate: 200}},
		{Entity: Entity{ip("")}, Values: map[string]float64{ConnectionCreationRate: 5}},
	})
	for _, tc := range []struct {
		kind Kind
		want float64
		ok   bool
	}{
		{ProduceBytes, 100, true}, {FetchBytes, 200, true}, {RequestTime, 50, true}, {ControllerMutations, 0, false},
	} {
		got, ok := m.Quota(tc.kind, "alice", "app")
		if ok != tc.ok || got != tc.want {
			t.Errorf("Quota(%v) = %v, %v; want %v, %v", tc.kind, got, ok, tc.want, tc.ok)
		}
		if m.Enabled(tc.kind) != tc.ok {
			t.Errorf("Enabled(%v) = %v", tc.kind, !tc.ok)
		}
	}
}

// Who shares usage: clients resolving to the same sensor are limited
// together, others are not.
func TestSharingFollowsTheResolvedEntity(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		quota  Entry
		shared [][2]string // these share alice/a's usage
		apart  [][2]string // these do not
	}{
		{level("", "-", 1000), [][2]string{{"alice", "b"}}, [][2]string{{"bob", "a"}}},
		{level("alice", "-", 1000), [][2]string{{"alice", "b"}}, nil},
		{level("-", "", 1000), [][2]string{{"bob", "a"}}, [][2]string{{"alice", "b"}}},
		{level("-", "a", 1000), [][2]string{{"bob", "a"}}, nil},
		{level("", "", 1000), nil, [][2]string{{"alice", "b"}, {"bob", "a"}}},
		{level("alice", "", 1000), nil, [][2]string{{"alice", "b"}}},
		{level("", "a", 1000), nil, [][2]string{{"bob", "a"}}},
	} {
		run := func(other [2]string) time.Duration {
			m := NewManager(Config{})
			m.SetQuotas([]Entry{tc.quota})
			// 10 s worth of quota at once: exactly at the limit.
			if d := m.Record(ProduceBytes, "alice", "a", 10_000, t0); d != 0 {
				t.Fatalf("%v: first record throttled %v", tc.quota.Entity, d)
			}
			return m.Record(ProduceBytes, other[0], other[1], 1000, t0)
		}
		for _, o := range tc.shared {
			if d := run(o); d == 0 {
				t.Errorf("%v: %s/%s should share alice/a's usage", tc.quota.Entity, o[0], o[1])
			}
		}
		for _, o := range tc.apart {
			if d := run(o); d != 0 {
				t.Errorf("%v: %s/%s throttled %v by alice/a's usage", tc.quota.Entity, o[0], o[1], d)
			}
		}
	}
}

func TestQuotaChangeAppliesToTheNextRecord(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := NewManager(Config{})
	m.SetQuotas([]Entry{level("alice", "-", 1000)})
	if d := m.Record(ProduceBytes, "alice", "a", 5000, t0); d != 0 {
		t.Fatalf("under quota: throttled %v", d)
	}
	m.SetQuotas([]Entry{level("alice", "-", 250)})
	// Rate 6000 B / 10 s = 600 B/s against 250: (600-250)/250 × 10 s.
	if d, want := m.Record(ProduceBytes, "alice", "a", 1000, t0), 14*time.Second; d != want {
		t.Fatalf("after lowering the quota: throttle %v, want %v", d, want)
	}
	// Removing the user level falls back to /clients/<default>, a new
	// sensor (per client id) with no usage yet.
	m.SetQuotas([]Entry{level("-", "", 250)})
	if d := m.Record(ProduceBytes, "alice", "a", 2500, t0); d != 0 {
		t.Fatalf("after falling back to /clients/<default>: throttled %v", d)
	}
	m.SetQuotas(nil)
	if d := m.Record(ProduceBytes, "alice", "a", 1e12, t0); d != 0 {
		t.Fatalf("no quotas: throttled %v", d)
	}
	if n := sensorCount(m); n != 0 {
		t.Fatalf("%d sensors left after every quota was removed", n)
	}
}

func sensorCount(m *Manager) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.sensors)
}

func ExampleManager_Quota() {
	m := NewManager(Config{})
	m.SetQuotas([]Entry{
		{Entity: Entity{{Type: EntityUser}}, Values: map[string]float64{ProducerByteRate: 1 << 20}},
	})
	fmt.Println(m.Quota(ProduceBytes, "ANONYMOUS", "console-producer"))
	fmt.Println(m.Quota(FetchBytes, "ANONYMOUS", "console-producer"))
	// Output:
	// 1.048576e+06 true
	// 0 false
}
