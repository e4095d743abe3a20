package metadata

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// imageLog records, per node, a summary of every image a subscriber saw.
type imageLog struct {
	mu   sync.Mutex
	seen map[int32][]string
}

func summary(im *Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%d pid=%d", im.Epoch, im.NextProducerID)
	for _, name := range im.SortedTopics() {
		t := im.Topics[name]
		fmt.Fprintf(&b, " %s/%s/%d/%v", name, t.ID, len(t.Partitions), t.Configs)
	}
	return b.String()
}

func (l *imageLog) subscribe(q *Quorum) {
	id := q.NodeID()
	q.Subscribe(func(im *Image) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen[id] = append(l.seen[id], summary(im))
	})
}

func (l *imageLog) get(id int32) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen[id])
}

func TestQuorumForwardsChangesAndAllNodesApplyInOrder(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	log := &imageLog{seen: map[int32][]string{}}
	for _, q := range c.running() {
		log.subscribe(q)
	}
	registerBrokers(t, c, []int32{1, 2, 3}, nil)
	f := c.follower()
	if f.IsActiveController() {
		t.Fatal("follower claims to be the controller")
	}
	if _, err := f.CreateTopic("a", 3, 3, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatalf("create on follower: %v", err)
	}
	if _, err := f.CreateTopic("a", 1, 1, nil); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("second create: %v, want ErrTopicExists", err)
	}
	if err := f.CreatePartitions("a", 5); err != nil {
		t.Fatal(err)
	}
	if err := f.SetTopicConfigs("a", map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	first, err := f.AllocateProducerIDs(1000)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.leader().AllocateProducerIDs(1000)
	if err != nil || second != first+1000 {
		t.Fatalf("producer id blocks %d then %d (%v)", first, second, err)
	}
	if _, err := f.CreateTopic("b", 1, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteTopic("b"); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteTopic("b"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("delete twice: %v", err)
	}
	im := c.converged()
	if im.ControllerID != c.leader().NodeID() {
		t.Fatalf("image controller %d, leader %d", im.ControllerID, c.leader().NodeID())
	}
	a := im.Topics["a"]
	if a == nil || len(a.Partitions) != 5 || a.Configs["retention.ms"] != "1000" || im.Topics["b"] != nil {
		t.Fatalf("image topics %+v", im.Topics)
	}
	for _, p := range a.Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %+v", p)
		}
	}
	want := log.get(c.leader().NodeID())
	if len(want) < 8 {
		t.Fatalf("leader saw only %d images", len(want))
	}
	for _, q := range c.running() {
		if got := log.get(q.NodeID()); !slices.Equal(got, want) {
			t.Fatalf("node %d saw\n%s\nleader saw\n%s", q.NodeID(), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestQuorumLeaderFailover(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	old := c.leader()
	if _, err := c.follower().CreateTopic("before", 1, 0, nil); !errors.Is(err, ErrInvalidReplicas) {
		t.Fatalf("create without brokers: %v", err)
	}
	if err := old.SetBrokerConfigs(map[string]string{"k": "v1"}); err != nil {
		t.Fatal(err)
	}
	c.converged()
	oldID := old.NodeID()
	c.stop(oldID)
	nl := c.leader()
	if nl.NodeID() == oldID {
		t.Fatal("stopped node still leads")
	}
	// Changes keep working from both survivors.
	for _, q := range c.running() {
		if err := q.SetBrokerConfigs(map[string]string{"k": fmt.Sprint("from", q.NodeID())}); err != nil {
			t.Fatalf("change on node %d after failover: %v", q.NodeID(), err)
		}
	}
	im := c.converged()
	if im.ControllerID != nl.NodeID() {
		t.Fatalf("controller id %d, leader %d", im.ControllerID, nl.NodeID())
	}
	// The old leader comes back as a follower and catches up.
	c.open(oldID, nil)
	waitFor(t, 20*time.Second, func() error {
		got := c.node(oldID).Image()
		if got.BrokerConfigs["k"] != im.BrokerConfigs["k"] {
			return fmt.Errorf("restarted node has %v", got.BrokerConfigs)
		}
		return nil
	})
}

func TestQuorumMinorityDownChangesNothingVisible(t *testing.T) {
	c := newTestCluster(t, 3, 0, func(cfg *QuorumConfig) {
		// Long enough that no broker is fenced while a node is down.
		cfg.BrokerSessionTimeout = time.Minute
		// And no election for a slow heartbeat on a loaded machine.
		cfg.ElectionTimeout = 2 * time.Second
	})
	registerBrokers(t, c, []int32{1, 2, 3}, nil)
	if _, err := c.leader().CreateTopic("t", 4, 3, nil); err != nil {
		t.Fatal(err)
	}
	before := c.converged()
	leader := c.leader()
	down := c.follower()
	c.stop(down.NodeID())
	if err := leader.SetTopicConfigs("t", map[string]string{"x": "y"}); err != nil {
		t.Fatalf("change with a minority down: %v", err)
	}
	after := c.converged()
	if c.leader() != leader || after.ControllerID != before.ControllerID {
		t.Fatalf("controller changed from %d to %d", before.ControllerID, after.ControllerID)
	}
	if !slices.EqualFunc(before.Topics["t"].Partitions, after.Topics["t"].Partitions, partitionsEqual) {
		t.Fatalf("partitions changed:\n%+v\n%+v", before.Topics["t"].Partitions, after.Topics["t"].Partitions)
	}
	if !slices.EqualFunc(before.Brokers, after.Brokers, func(a, b Broker) bool { return a.NodeID == b.NodeID && a.Fenced == b.Fenced }) {
		t.Fatalf("brokers changed: %+v -> %+v", before.Brokers, after.Brokers)
	}
}

func partitionsEqual(a, b Partition) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && a.PartitionEpoch == b.PartitionEpoch &&
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.ISR, b.ISR)
}

func TestQuorumRestartRestoresImageFromSnapshotAndLog(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	registerBrokers(t, c, []int32{1, 2, 3}, nil)
	l := c.leader()
	if _, err := l.CreateTopic("in-snapshot", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	c.converged()
	for _, q := range c.running() {
		if err := q.Snapshot(); err != nil {
			t.Fatalf("snapshot on node %d: %v", q.NodeID(), err)
		}
	}
	if _, err := l.CreateTopic("in-log", 3, 2, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AllocateProducerIDs(5000); err != nil {
		t.Fatal(err)
	}
	want := c.converged()
	c.closeAll()
	for id := range c.cfgs {
		c.open(id, nil)
	}
	waitFor(t, 30*time.Second, func() error {
		for _, q := range c.running() {
			im := q.Image()
			for _, name := range []string{"in-snapshot", "in-log"} {
				if im.Topics[name] == nil || im.Topics[name].ID != want.Topics[name].ID {
					return fmt.Errorf("node %d lacks %s", q.NodeID(), name)
				}
			}
			if im.NextProducerID != want.NextProducerID || im.ClusterID != want.ClusterID || im.ClusterID == "" {
				return fmt.Errorf("node %d: producer id %d cluster %q", q.NodeID(), im.NextProducerID, im.ClusterID)
			}
			if !slices.EqualFunc(im.Topics["in-log"].Partitions, want.Topics["in-log"].Partitions, partitionsEqual) {
				return fmt.Errorf("node %d: partitions differ", q.NodeID())
			}
		}
		return nil
	})
	// Ids keep going up after the restart.
	next, err := c.leader().AllocateProducerIDs(1)
	if err != nil || next != want.NextProducerID {
		t.Fatalf("producer id after restart %d (%v), want %d", next, err, want.NextProducerID)
	}
}

func TestQuorumFencingMovesLeadership(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	hbs := registerBrokers(t, c, []int32{1, 2, 3}, nil)
	if _, err := c.follower().CreateTopic("t", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	before := c.converged().Topics["t"]
	const victim = 2
	hbs[victim].halt()
	var after *Topic
	waitFor(t, 20*time.Second, func() error {
		im := c.leader().Image()
		if b := im.BrokerByID(victim); !b.Fenced {
			return fmt.Errorf("broker %d not fenced", victim)
		}
		after = im.Topics["t"]
		return nil
	})
	led := 0
	for i, old := range before.Partitions {
		p := after.Partitions[i]
		if slices.Contains(p.ISR, victim) || p.Leader == victim {
			t.Fatalf("fenced broker still in partition %+v", p)
		}
		if old.Leader == victim {
			led++
			if p.Leader == -1 || !slices.Contains(old.ISR, p.Leader) || p.LeaderEpoch != old.LeaderEpoch+1 {
				t.Fatalf("partition %d: leader %d epoch %d, was %+v", i, p.Leader, p.LeaderEpoch, old)
			}
		} else if p.Leader != old.Leader || p.LeaderEpoch != old.LeaderEpoch {
			t.Fatalf("partition %d changed leader: %+v -> %+v", i, old, p)
		}
		if p.PartitionEpoch != old.PartitionEpoch+1 {
			t.Fatalf("partition %d epoch %d, was %d", i, p.PartitionEpoch, old.PartitionEpoch)
		}
	}
	if led != 2 {
		t.Fatalf("victim led %d of 6 partitions, want 2 (round-robin)", led)
	}

	// Shrink a partition's ISR to its leader, then fence that leader: no
	// live ISR member, so the partition has no leader (unclean election
	// is off) until the broker comes back.
	p := after.Partitions[0]
	lone := p.Leader
	if _, err := c.leader().AlterPartition("t", 0, lone, p.LeaderEpoch, p.PartitionEpoch, []int32{lone}); err != nil {
		t.Fatal(err)
	}
	hbs[lone].halt()
	var offline Partition
	waitFor(t, 20*time.Second, func() error {
		offline = c.leader().Image().Topics["t"].Partitions[0]
		if offline.Leader != -1 {
			return fmt.Errorf("partition 0: %+v", offline)
		}
		return nil
	})
	if !slices.Equal(offline.ISR, []int32{lone}) || offline.LeaderEpoch != p.LeaderEpoch+1 {
		t.Fatalf("offline partition %+v", offline)
	}
	hbs[lone].start(c, lone)
	waitFor(t, 20*time.Second, func() error {
		back := c.leader().Image().Topics["t"].Partitions[0]
		if back.Leader != lone || back.LeaderEpoch != offline.LeaderEpoch+1 {
			return fmt.Errorf("partition 0 after unfence: %+v", back)
		}
		return nil
	})
}

func TestAlterPartitionRejectsStaleRequests(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	registerBrokers(t, c, []int32{1, 2, 3}, nil)
	if _, err := c.leader().CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := c.converged().Topics["t"].Partitions[0]
	f := c.follower()
	other := p.Replicas[1]
	shrunk := without(p.ISR, other)

	cases := []struct {
		name                                string
		leader, leaderEpoch, partitionEpoch int32
		isr                                 []int32
		want                                error
	}{
		{"stale leader epoch", p.Leader, p.LeaderEpoch - 1, p.PartitionEpoch, shrunk, ErrFencedLeaderEpoch},
		{"newer leader epoch", p.Leader, p.LeaderEpoch + 1, p.PartitionEpoch, shrunk, ErrUnknownLeaderEpoch},
		{"stale partition epoch", p.Leader, p.LeaderEpoch, p.PartitionEpoch - 1, shrunk, ErrInvalidUpdateVersion},
		{"not the leader", other, p.LeaderEpoch, p.PartitionEpoch, shrunk, ErrNotLeader},
		{"ISR without leader", p.Leader, p.LeaderEpoch, p.PartitionEpoch, []int32{other}, ErrInvalidRequest},
		{"not a replica", p.Leader, p.LeaderEpoch, p.PartitionEpoch, []int32{p.Leader, 99}, ErrIneligibleReplica},
	}
	for _, tc := range cases {
		_, err := f.AlterPartition("t", 0, tc.leader, tc.leaderEpoch, tc.partitionEpoch, tc.isr)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := f.AlterPartition("t", 7, p.Leader, p.LeaderEpoch, p.PartitionEpoch, shrunk); !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("unknown partition: %v", err)
	}
	got, err := f.AlterPartition("t", 0, p.Leader, p.LeaderEpoch, p.PartitionEpoch, shrunk)
	if err != nil {
		t.Fatal(err)
	}
	if got.PartitionEpoch != p.PartitionEpoch+1 || !slices.Equal(got.ISR, shrunk) || got.LeaderEpoch != p.LeaderEpoch {
		t.Fatalf("altered %+v", got)
	}
	// The same request again is now stale.
	if _, err := f.AlterPartition("t", 0, p.Leader, p.LeaderEpoch, p.PartitionEpoch, shrunk); !errors.Is(err, ErrInvalidUpdateVersion) {
		t.Fatalf("replayed AlterPartition: %v", err)
	}
	// Expanding back to the full ISR works with the new epoch.
	if _, err := c.leader().AlterPartition("t", 0, p.Leader, p.LeaderEpoch, got.PartitionEpoch, p.ISR); err != nil {
		t.Fatal(err)
	}
}

func TestCreateTopicReplicationFactorBeyondLiveBrokers(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	hbs := registerBrokers(t, c, []int32{1, 2, 3}, nil)
	f := c.follower()
	if _, err := f.CreateTopic("t", 1, 4, nil); !errors.Is(err, ErrInvalidReplicas) {
		t.Fatalf("RF 4 with 3 brokers: %v", err)
	}
	if _, err := f.CreateTopic("t", 0, 1, nil); !errors.Is(err, ErrInvalidPartitions) {
		t.Fatalf("0 partitions: %v", err)
	}
	hbs[3].halt()
	waitFor(t, 20*time.Second, func() error {
		if !c.leader().Image().BrokerByID(3).Fenced {
			return errors.New("broker 3 not fenced")
		}
		return nil
	})
	if _, err := f.CreateTopic("t", 1, 3, nil); !errors.Is(err, ErrInvalidReplicas) {
		t.Fatalf("RF 3 with 2 live brokers: %v", err)
	}
	tp, err := f.CreateTopic("t", 4, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tp.Partitions {
		if slices.Contains(p.Replicas, 3) {
			t.Fatalf("fenced broker got a replica: %+v", p)
		}
	}
}

func TestQuorumRackAwareCreateTopic(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	registerBrokers(t, c, []int32{1, 2, 3, 4, 5, 6}, []string{"a", "a", "b", "b", "c", "c"})
	tp, err := c.follower().CreateTopic("t", 12, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	rack := func(id int32) int32 { return (id - 1) / 2 }
	leaders := map[int32]int{}
	for _, p := range tp.Partitions {
		racks := map[int32]bool{}
		for _, r := range p.Replicas {
			racks[rack(r)] = true
		}
		if len(racks) != 3 {
			t.Fatalf("partition %d replicas %v not on 3 racks", p.Partition, p.Replicas)
		}
		leaders[p.Leader]++
	}
	for id := int32(1); id <= 6; id++ {
		if leaders[id] != 2 {
			t.Fatalf("leaders per broker %v, want 2 each", leaders)
		}
	}
}

func TestControlledShutdownAndPreferredElection(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	hbs := registerBrokers(t, c, []int32{1, 2, 3}, nil)
	l := c.leader()
	if _, err := l.CreateTopic("t", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	const stopping = 1
	if err := c.follower().ControlledShutdown(stopping); err != nil {
		t.Fatal(err)
	}
	im := c.converged()
	for _, p := range im.Topics["t"].Partitions {
		if p.Leader == stopping || slices.Contains(p.ISR, stopping) {
			t.Fatalf("after controlled shutdown: %+v", p)
		}
	}
	if !im.BrokerByID(stopping).InControlledShutdown {
		t.Fatal("broker not marked in controlled shutdown")
	}
	// Its heartbeats do not bring it back; a new incarnation does.
	if err := l.Heartbeat(stopping); err != nil {
		t.Fatal(err)
	}
	if err := l.RegisterBroker(Broker{NodeID: stopping, Host: "127.0.0.1", Port: hbs[stopping].port(), Incarnation: "second"}, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() error {
		if b := c.leader().Image().BrokerByID(stopping); b.Fenced || b.InControlledShutdown {
			return fmt.Errorf("broker %+v", b)
		}
		return nil
	})
	// Before it is back in the ISR the preferred election must refuse.
	res, err := c.follower().ElectLeaders(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		p := c.leader().Image().Topics["t"].Partitions[r.Partition]
		if p.Replicas[0] == stopping && !errors.Is(r.Err, ErrPreferredLeaderNotAvailable) {
			t.Fatalf("preferred election for %v: %v", r.TopicPartition, r.Err)
		}
		if p.Replicas[0] != stopping && !errors.Is(r.Err, ErrElectionNotNeeded) {
			t.Fatalf("preferred election for %v: %v", r.TopicPartition, r.Err)
		}
	}
	// The leaders let it back into the ISR once it caught up.
	for _, p := range c.leader().Image().Topics["t"].Partitions {
		if _, err := l.AlterPartition("t", p.Partition, p.Leader, p.LeaderEpoch, p.PartitionEpoch, append(slices.Clone(p.ISR), stopping)); err != nil {
			t.Fatal(err)
		}
	}
	res, err = c.follower().ElectLeaders(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	im = c.converged()
	for _, p := range im.Topics["t"].Partitions {
		if p.Leader != p.Replicas[0] {
			t.Fatalf("after preferred election: %+v (%+v)", p, res)
		}
	}
}

func TestBrokerOnlyNodeJoinsAsObserver(t *testing.T) {
	c := newTestCluster(t, 3, 1, nil)
	obs := c.node(4)
	seen := make(chan string, 100)
	obs.Subscribe(func(im *Image) {
		for name := range im.Topics {
			select {
			case seen <- name:
			default:
			}
		}
	})
	for id := int32(1); id <= 3; id++ {
		if err := c.node(id).SetSelf(Broker{NodeID: id, Host: "127.0.0.1", Port: 9000 + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := obs.SetSelf(Broker{NodeID: 4, Host: "127.0.0.1", Port: 9004}); err != nil {
		t.Fatalf("broker-only registration: %v", err)
	}
	if _, err := obs.CreateTopic("t", 8, 4, nil); err != nil {
		t.Fatalf("create on broker-only node: %v", err)
	}
	im := c.converged()
	if len(im.Brokers) != 4 || im.BrokerByID(4).Fenced {
		t.Fatalf("brokers %+v", im.Brokers)
	}
	select {
	case name := <-seen:
		if name != "t" {
			t.Fatalf("observer saw %q", name)
		}
	default:
		t.Fatal("observer's subscriber saw no topic")
	}
	if obs.IsActiveController() {
		t.Fatal("broker-only node became controller")
	}
}

func TestReassignment(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	registerBrokers(t, c, []int32{1, 2, 3}, nil)
	l := c.leader()
	tp, err := l.CreateTopic("t", 1, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	orig := tp.Partitions[0]
	from := orig.Leader
	to := from%3 + 1
	res, err := c.follower().ReassignPartitions([]Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{to}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("reassign: %v %+v", err, res)
	}
	p := c.converged().Topics["t"].Partitions[0]
	if !slices.Equal(p.AddingReplicas, []int32{to}) || !slices.Equal(p.RemovingReplicas, []int32{from}) ||
		!slices.Equal(p.Replicas, []int32{to, from}) || p.Leader != from {
		t.Fatalf("in progress: %+v", p)
	}
	res, _ = l.ReassignPartitions([]Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{to, 99}}})
	if !errors.Is(res[0].Err, ErrInvalidReplicaAssignment) {
		t.Fatalf("unknown broker: %+v", res)
	}
	// The new replica caught up: the leader adds it to the ISR, which
	// completes the reassignment and moves leadership to it.
	done, err := l.AlterPartition("t", 0, p.Leader, p.LeaderEpoch, p.PartitionEpoch, []int32{from, to})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done.Replicas, []int32{to}) || !slices.Equal(done.ISR, []int32{to}) || done.Leader != to ||
		done.LeaderEpoch != p.LeaderEpoch+1 || done.AddingReplicas != nil || done.RemovingReplicas != nil {
		t.Fatalf("completed: %+v", done)
	}
	res, _ = l.ReassignPartitions([]Reassignment{{Topic: "t", Partition: 0}})
	if !errors.Is(res[0].Err, ErrNoReassignmentInProgress) {
		t.Fatalf("cancel without reassignment: %+v", res)
	}
}
