package metadata

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func brokersWithRacks(racks ...string) []Broker {
	var out []Broker
	for i, r := range racks {
		b := Broker{NodeID: int32(i + 1)}
		if r != "" {
			b.Rack = &r
		}
		out = append(out, b)
	}
	return out
}

func TestAssignReplicasSpreadsLeadersAndReplicas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		brokers []Broker
		n       int32
		rf      int
	}{
		{"no racks", brokersWithRacks("", "", "", "", ""), 10, 3},
		{"rf 1", brokersWithRacks("", "", ""), 6, 1},
		{"racks", brokersWithRacks("a", "a", "b", "b", "c", "c"), 12, 3},
		{"uneven racks", brokersWithRacks("a", "a", "a", "b"), 8, 2},
	} {
		for start := range len(tc.brokers) {
			for shift := range len(tc.brokers) {
				t.Run(fmt.Sprintf("%s/%d/%d", tc.name, start, shift), func(t *testing.T) {
					got := assignReplicas(tc.brokers, tc.n, tc.rf, 0, start, shift)
					leaders := map[int32]int{}
					replicas := map[int32]int{}
					for _, rs := range got {
						if len(rs) != tc.rf {
							t.Fatalf("replicas %v, want %d", rs, tc.rf)
						}
						for i, r := range rs {
							if slices.Contains(rs[:i], r) {
								t.Fatalf("replicas %v repeat a broker", rs)
							}
							replicas[r]++
						}
						leaders[rs[0]]++
						if tc.brokers[0].Rack != nil {
							racks := map[string]bool{}
							for _, r := range rs {
								racks[*tc.brokers[r-1].Rack] = true
							}
							if want := min(tc.rf, 2+boolInt(tc.name == "racks")); len(racks) < want {
								t.Fatalf("replicas %v on %d racks, want %d", rs, len(racks), want)
							}
						}
					}
					per := int(tc.n) / len(tc.brokers)
					for _, b := range tc.brokers {
						if l := leaders[b.NodeID]; l < per || l > per+1 {
							t.Fatalf("leaders per broker %v", leaders)
						}
					}
				})
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestArrangeByRackAlternates(t *testing.T) {
	ids, ok := arrangeByRack(brokersWithRacks("a", "a", "b", "c", "b"))
	if !ok || !slices.Equal(ids, []int32{1, 3, 4, 2, 5}) {
		t.Fatalf("arranged %v %v", ids, ok)
	}
	if _, ok := arrangeByRack(brokersWithRacks("a", "")); ok {
		t.Fatal("rack-aware with a broker without rack")
	}
}

// TestApplyIsDeterministic applies the same records to two copies and
// checks they agree, and that the source image is never modified.
func TestApplyIsDeterministic(t *testing.T) {
	base := &Image{Topics: map[string]*Topic{}}
	recs := []*record{
		{Type: recRegisterBroker, Broker: &Broker{NodeID: 1, Incarnation: "x"}},
		{Type: recRegisterBroker, Broker: &Broker{NodeID: 2, Incarnation: "y"}},
		{Type: recUnfenceBroker, NodeID: 1},
		{Type: recUnfenceBroker, NodeID: 2},
		{Type: recCreateTopic, Topic: &Topic{Name: "t", ID: NewTopicID(), Partitions: []Partition{{Replicas: []int32{1, 2}}, {Replicas: []int32{2, 1}}}}},
		{Type: recFenceBroker, NodeID: 1},
		{Type: recFenceBroker, NodeID: 2},
		{Type: recUnfenceBroker, NodeID: 1},
	}
	run := func() []*Image {
		im := base
		var all []*Image
		for i, r := range recs {
			b, err := encodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			dr, err := decodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			snap := summary(im) + fmt.Sprint(im.Brokers)
			tx := newTxn(im)
			if _, err := tx.apply(dr, int64(i+1)); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if summary(im)+fmt.Sprint(im.Brokers) != snap {
				t.Fatalf("record %d modified the previous image", i)
			}
			im = tx.im
			all = append(all, im)
		}
		return all
	}
	a, b := run(), run()
	for i := range a {
		if fmt.Sprint(a[i].Brokers) != fmt.Sprint(b[i].Brokers) ||
			!slices.EqualFunc(a[i].Topics["t"].partitionsOrNil(), b[i].Topics["t"].partitionsOrNil(), partitionsEqual) {
			t.Fatalf("step %d differs", i)
		}
	}
	last := a[len(a)-1].Topics["t"].Partitions
	// Broker 2 was fenced last of the ISR, so it stays its only member and
	// the partitions have no leader; broker 1 cannot take over (unclean
	// election is off).
	for _, p := range last {
		if p.Leader != -1 || !slices.Equal(p.ISR, []int32{2}) {
			t.Fatalf("partition %+v", p)
		}
	}
	if _, err := decodeRecord([]byte(`{"v":99,"type":"create_topic"}`)); err == nil {
		t.Fatal("accepted a record from a newer version")
	}
}

func (t *Topic) partitionsOrNil() []Partition {
	if t == nil {
		return nil
	}
	return t.Partitions
}

func TestUncleanElectionWhenEnabled(t *testing.T) {
	tx := newTxn(&Image{Topics: map[string]*Topic{}, BrokerConfigs: map[string]string{"unclean.leader.election.enable": "true"}})
	for _, r := range []*record{
		{Type: recRegisterBroker, Broker: &Broker{NodeID: 1}},
		{Type: recRegisterBroker, Broker: &Broker{NodeID: 2}},
		{Type: recUnfenceBroker, NodeID: 1},
		{Type: recUnfenceBroker, NodeID: 2},
		{Type: recCreateTopic, Topic: &Topic{Name: "t", ID: NewTopicID(), Partitions: []Partition{{Replicas: []int32{1, 2}}}}},
		{Type: recAlterPartition, Alter: &alterPartitionRecord{Topic: "t", LeaderID: 1, NewISR: []int32{1}}},
		{Type: recFenceBroker, NodeID: 1},
	} {
		if _, err := tx.apply(r, 1); err != nil {
			t.Fatalf("%s: %v", r.Type, err)
		}
	}
	p := tx.im.Topics["t"].Partitions[0]
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderEpoch != 1 {
		t.Fatalf("unclean election: %+v", p)
	}
}

func TestParseVotersAndValidate(t *testing.T) {
	v, err := ParseVoters("1@127.0.0.1:9093, 2@127.0.0.1:9094,3@[::1]:9095")
	if err != nil || len(v) != 3 || v[3] != "[::1]:9095" {
		t.Fatalf("%v %v", v, err)
	}
	for _, bad := range []string{"", "x@127.0.0.1:1", "1@nohost", "1@a:1,1@b:2", "1:a:1"} {
		if _, err := ParseVoters(bad); err == nil {
			t.Errorf("ParseVoters(%q) accepted", bad)
		}
	}
	cfg := DefaultQuorumConfig()
	cfg.NodeID, cfg.Voters, cfg.Dir, cfg.Bind, cfg.IsController = 1, v, "d", "127.0.0.1:0", true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*QuorumConfig){
		"controller not a voter": func(c *QuorumConfig) { c.NodeID = 9 },
		"voter without role":     func(c *QuorumConfig) { c.IsController = false },
		"heartbeat >= session":   func(c *QuorumConfig) { c.HeartbeatInterval = c.BrokerSessionTimeout },
		"no dir":                 func(c *QuorumConfig) { c.Dir = "" },
	} {
		c := cfg
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestStoreConformance runs the same changes on Local and on a
// single-node Quorum and expects the same outcomes.
func TestStoreConformance(t *testing.T) {
	self := Broker{NodeID: 1, Host: "127.0.0.1", Port: 9092}
	local, err := OpenLocal(t.TempDir(), self, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, 1, 0, func(cfg *QuorumConfig) { cfg.ClusterID = "cluster" })
	q := c.node(1)
	if err := q.SetSelf(self); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Store{local, q} {
		name := fmt.Sprintf("%T", s)
		if _, err := s.CreateTopic("t", 2, 1, map[string]string{"a": "b"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checks := []struct {
			what string
			err  error
			want error
		}{
			{"exists", second(s.CreateTopic("t", 1, 1, nil)), ErrTopicExists},
			{"rf", second(s.CreateTopic("u", 1, 2, nil)), ErrInvalidReplicas},
			{"partitions", second(s.CreateTopic("u", 0, 1, nil)), ErrInvalidPartitions},
			{"shrink", s.CreatePartitions("t", 2), ErrInvalidPartitions},
			{"grow", s.CreatePartitions("t", 3), nil},
			{"unknown grow", s.CreatePartitions("nope", 3), ErrUnknownTopic},
			{"configs", s.SetTopicConfigs("t", map[string]string{"c": "d"}), nil},
			{"unknown configs", s.SetTopicConfigs("nope", nil), ErrUnknownTopic},
			{"broker configs", s.SetBrokerConfigs(map[string]string{"e": "f"}), nil},
			{"delete unknown", s.DeleteTopic("nope"), ErrUnknownTopic},
		}
		for _, ch := range checks {
			if (ch.want == nil && ch.err != nil) || !errors.Is(ch.err, ch.want) {
				t.Errorf("%s %s: %v, want %v", name, ch.what, ch.err, ch.want)
			}
		}
		first, err := s.AllocateProducerIDs(10)
		next, err2 := s.AllocateProducerIDs(10)
		if err != nil || err2 != nil || next != first+10 {
			t.Errorf("%s: producer ids %d %d %v %v", name, first, next, err, err2)
		}
		var got *Image
		s.Subscribe(func(im *Image) { got = im })
		if got != s.Image() {
			t.Errorf("%s: Subscribe did not call with the current image", name)
		}
		tp := got.Topics["t"]
		if len(tp.Partitions) != 3 || tp.Configs["c"] != "d" || got.BrokerConfigs["e"] != "f" || got.ClusterID != "cluster" {
			t.Errorf("%s: image %+v %+v", name, tp, got)
		}
		for _, p := range tp.Partitions {
			if p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) {
				t.Errorf("%s: partition %+v", name, p)
			}
		}
		if err := s.DeleteTopic("t"); err != nil {
			t.Errorf("%s: delete: %v", name, err)
		}
	}
	waitFor(t, 5*time.Second, func() error {
		if q.Image().Topics["t"] != nil {
			return errors.New("topic still there")
		}
		return nil
	})
}

func second[T any](_ T, err error) error { return err }
