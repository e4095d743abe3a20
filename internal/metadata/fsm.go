package metadata

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"
)

// fsm is the Raft state machine: it applies metadata records to a copy of
// the current Image and publishes the result. Raft calls Apply, Snapshot
// and Restore from one goroutine; Persist of a snapshot may run
// concurrently with Apply, which is safe because images are immutable.
type fsm struct {
	q *Quorum
}

// applyResult is what Apply returns through raft.ApplyFuture.Response.
type applyResult struct {
	val any
	err error
}

// Apply applies one committed log entry. A record that fails validation
// (a topic that already exists, a stale AlterPartition) changes nothing on
// any node and its error goes back to the caller.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	r, err := decodeRecord(l.Data)
	if err != nil {
		f.q.log.Error("skip undecodable metadata record", "index", l.Index, "err", err)
		return applyResult{err: err}
	}
	tx := newTxn(f.q.image.Load())
	val, err := tx.apply(r, int64(l.Index))
	if err != nil {
		return applyResult{err: err}
	}
	tx.im.Epoch = int64(l.Index)
	f.q.publish(tx.im)
	return applyResult{val: val}
}

// Snapshot captures the current image; Persist writes it as JSON.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &imageSnapshot{im: f.q.image.Load()}, nil
}

// Restore replaces the image with a snapshot's, at start-up and when the
// leader sends a snapshot, and publishes it to subscribers.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var im Image
	if err := json.NewDecoder(rc).Decode(&im); err != nil {
		return fmt.Errorf("restore metadata snapshot: %w", err)
	}
	if im.Topics == nil {
		im.Topics = map[string]*Topic{}
	}
	f.q.publish(&im)
	return nil
}

type imageSnapshot struct {
	im *Image
}

func (s *imageSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(s.im); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist metadata snapshot: %w", err)
	}
	return sink.Close()
}

func (s *imageSnapshot) Release() {}

// txn builds the next image from the current one, copying on write: the
// topics map and broker list are copied once, a topic when first changed.
type txn struct {
	im     *Image
	cloned map[string]bool
}

func newTxn(cur *Image) *txn {
	return &txn{im: cur.clone(), cloned: map[string]bool{}}
}

// topic returns a topic that may be changed, or nil.
func (x *txn) topic(name string) *Topic {
	t := x.im.Topics[name]
	if t == nil || x.cloned[name] {
		return t
	}
	t = t.clone()
	x.im.Topics[name] = t
	x.cloned[name] = true
	return t
}

func (x *txn) setPartition(topic string, p Partition) {
	x.topic(topic).Partitions[p.Partition] = p
}

// live reports whether broker id may lead or join an ISR.
func (x *txn) live(id int32) bool {
	b := x.im.BrokerByID(id)
	return b != nil && !b.Fenced && !b.InControlledShutdown
}

func (x *txn) uncleanAllowed(t *Topic) bool {
	v, ok := t.Configs["unclean.leader.election.enable"]
	if !ok {
		v = x.im.BrokerConfigs["unclean.leader.election.enable"]
	}
	return strings.EqualFold(v, "true")
}

// elect sets p's leader to the first live ISR member in replica
// order, or, with unclean election allowed, the first live replica (which
// becomes the whole ISR); otherwise -1. It reports whether the leader
// changed, and bumps the leader epoch if so.
func (x *txn) elect(t *Topic, p *Partition) bool {
	leader := int32(-1)
	for _, r := range p.Replicas {
		if slices.Contains(p.ISR, r) && x.live(r) && !slices.Contains(p.RemovingReplicas, r) {
			leader = r
			break
		}
	}
	if leader == -1 {
		for _, r := range p.Replicas {
			if slices.Contains(p.ISR, r) && x.live(r) {
				leader = r
				break
			}
		}
	}
	if leader == -1 && x.uncleanAllowed(t) {
		for _, r := range p.Replicas {
			if x.live(r) {
				leader = r
				p.ISR = []int32{r}
				break
			}
		}
	}
	if leader == p.Leader {
		return false
	}
	p.Leader = leader
	p.LeaderEpoch++
	return true
}

func (x *txn) apply(r *record, index int64) (any, error) {
	switch r.Type {
	case recSetController:
		x.im.ControllerID = r.NodeID
		if x.im.ClusterID == "" {
			x.im.ClusterID = r.ClusterID
		}
		return nil, nil
	case recRegisterBroker:
		return nil, x.registerBroker(r.Broker, index)
	case recFenceBroker:
		return nil, x.fenceBroker(r.NodeID, false)
	case recControlledShutdown:
		return nil, x.fenceBroker(r.NodeID, true)
	case recUnregisterBroker:
		return nil, x.unregisterBroker(r.NodeID)
	case recUnfenceBroker:
		return nil, x.unfenceBroker(r.NodeID)
	case recCreateTopic:
		return x.createTopic(r.Topic)
	case recDeleteTopic:
		if x.im.Topics[r.Name] == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, r.Name)
		}
		delete(x.im.Topics, r.Name)
		return nil, nil
	case recCreatePartitions:
		return nil, x.createPartitions(r.Name, int32(r.Count), r.Assignments)
	case recSetTopicConfigs:
		t := x.topic(r.Name)
		if t == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, r.Name)
		}
		t.Configs = r.Configs
		return nil, nil
	case recSetGroupConfigs:
		x.im.GroupConfigs = withGroupConfigs(x.im.GroupConfigs, r.Name, r.Configs)
		return nil, nil
	case recSetBrokerConfigs:
		x.im.BrokerConfigs = r.Configs
		return nil, nil
	case recSetNodeConfigs:
		x.im.NodeConfigs = withGroupConfigs(x.im.NodeConfigs, strconv.Itoa(int(r.NodeID)), r.Configs)
		return nil, nil
	case recAllocateProducers:
		first := x.im.NextProducerID
		x.im.NextProducerID += r.Count
		return first, nil
	case recAlterPartition:
		return x.alterPartition(r.Alter)
	case recElectLeaders:
		return x.electLeaders(r.Elect), nil
	case recReassign:
		return x.reassign(r.Reassign), nil
	case recAlterScram:
		return x.alterScram(r.Scram), nil
	case recCreateACLs:
		x.createACLs(r.ACLs)
		return nil, nil
	case recDeleteACLs:
		x.deleteACLs(r.ACLs)
		return nil, nil
	case recAlterClientQuotas:
		x.alterClientQuotas(r.Quotas)
		return nil, nil
	case recSetFeatures:
		x.im.Features = r.Features
		return nil, nil
	}
	return nil, fmt.Errorf("%w: unknown metadata record type %q", ErrInvalidRequest, r.Type)
}

func (x *txn) registerBroker(b *Broker, index int64) error {
	if b == nil {
		return fmt.Errorf("%w: registration without broker", ErrInvalidRequest)
	}
	nb := *b
	nb.Listeners = slices.Clone(b.Listeners)
	if old := x.im.BrokerByID(b.NodeID); old != nil {
		if old.Incarnation == b.Incarnation {
			// A retried registration: update endpoints only.
			nb.Epoch, nb.Fenced, nb.InControlledShutdown = old.Epoch, old.Fenced, old.InControlledShutdown
			*old = nb
			return nil
		}
		// A new incarnation: the old one is gone, fence it first.
		if !old.Fenced {
			old.Fenced = true
			x.removeReplica(b.NodeID)
		}
		nb.Epoch, nb.Fenced = index, true
		*x.im.BrokerByID(b.NodeID) = nb
		return nil
	}
	nb.Epoch, nb.Fenced, nb.InControlledShutdown = index, true, false
	x.im.Brokers = append(x.im.Brokers, nb)
	slices.SortFunc(x.im.Brokers, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
	return nil
}

// fenceBroker fences a broker (after missed heartbeats) or marks it in
// controlled shutdown, and moves leadership and ISR membership away.
func (x *txn) fenceBroker(id int32, shutdown bool) error {
	b := x.im.BrokerByID(id)
	if b == nil {
		return fmt.Errorf("%w: broker %d", ErrBrokerNotRegistered, id)
	}
	if shutdown {
		b.InControlledShutdown = true
	} else {
		b.Fenced = true
	}
	x.removeReplica(id)
	return nil
}

// unregisterBroker removes a broker's registration (Kafka's
// UnregisterBroker): its leaderships and ISR memberships move away as when
// it is fenced, then it leaves the broker list. A live broker registers
// again at its next heartbeat (heartbeatLoop).
func (x *txn) unregisterBroker(id int32) error {
	if x.im.BrokerByID(id) == nil {
		return fmt.Errorf("%w: Broker ID %d is not currently registered", ErrBrokerNotRegistered, id)
	}
	x.removeReplica(id)
	x.im.Brokers = slices.DeleteFunc(x.im.Brokers, func(b Broker) bool { return b.NodeID == id })
	return nil
}

// removeReplica takes broker id out of every ISR it is in (unless it is
// the last member, as KRaft keeps it) and elects new leaders where it
// led.
func (x *txn) removeReplica(id int32) {
	for _, name := range x.im.SortedTopics() {
		t := x.im.Topics[name]
		for _, p := range t.Partitions {
			if !slices.Contains(p.Replicas, id) {
				continue
			}
			changed := false
			if slices.Contains(p.ISR, id) && len(p.ISR) > 1 {
				p.ISR = without(p.ISR, id)
				changed = true
			}
			if p.Leader == id && x.elect(t, &p) {
				changed = true
			}
			if changed {
				p.PartitionEpoch++
				x.setPartition(name, p)
			}
		}
	}
}

// unfenceBroker makes a broker live again and gives it the leadership of
// leaderless partitions whose ISR contains it.
func (x *txn) unfenceBroker(id int32) error {
	b := x.im.BrokerByID(id)
	if b == nil {
		return fmt.Errorf("%w: broker %d", ErrBrokerNotRegistered, id)
	}
	b.Fenced = false
	for _, name := range x.im.SortedTopics() {
		t := x.im.Topics[name]
		for _, p := range t.Partitions {
			if p.Leader != -1 || !slices.Contains(p.Replicas, id) {
				continue
			}
			if x.elect(t, &p) {
				p.PartitionEpoch++
				x.setPartition(name, p)
			}
		}
	}
	return nil
}

func (x *txn) newPartition(t *Topic, i int32, replicas []int32) Partition {
	p := Partition{Partition: i, Replicas: slices.Clone(replicas), Leader: -1, LeaderEpoch: -1}
	for _, r := range replicas {
		if x.live(r) {
			p.ISR = append(p.ISR, r)
		}
	}
	if len(p.ISR) == 0 {
		p.ISR = slices.Clone(replicas)
	}
	x.elect(t, &p)
	if p.LeaderEpoch < 0 {
		p.LeaderEpoch = 0
	}
	return p
}

func (x *txn) checkReplicas(replicas []int32) error {
	if len(replicas) == 0 {
		return fmt.Errorf("%w: empty replica list", ErrInvalidReplicaAssignment)
	}
	for i, r := range replicas {
		if x.im.BrokerByID(r) == nil {
			return fmt.Errorf("%w: broker %d is not registered", ErrInvalidReplicaAssignment, r)
		}
		if slices.Contains(replicas[:i], r) {
			return fmt.Errorf("%w: broker %d appears twice", ErrInvalidReplicaAssignment, r)
		}
	}
	return nil
}

func (x *txn) createTopic(t *Topic) (*Topic, error) {
	if t == nil || len(t.Partitions) == 0 {
		return nil, fmt.Errorf("%w: number of partitions must be larger than 0", ErrInvalidPartitions)
	}
	if _, ok := x.im.Topics[t.Name]; ok {
		return nil, fmt.Errorf("%w: topic '%s' already exists", ErrTopicExists, t.Name)
	}
	if x.im.TopicByID(t.ID) != nil {
		return nil, fmt.Errorf("%w: topic id %s already in use", ErrTopicExists, t.ID)
	}
	nt := &Topic{Name: t.Name, ID: t.ID, Configs: t.Configs}
	for i, p := range t.Partitions {
		if err := x.checkReplicas(p.Replicas); err != nil {
			return nil, err
		}
		nt.Partitions = append(nt.Partitions, x.newPartition(nt, int32(i), p.Replicas))
	}
	x.im.Topics[t.Name] = nt
	x.cloned[t.Name] = true
	return nt, nil
}

func (x *txn) createPartitions(name string, count int32, assignments [][]int32) error {
	t := x.topic(name)
	if t == nil {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, name)
	}
	cur := int32(len(t.Partitions))
	if count <= cur {
		return fmt.Errorf("%w: topic currently has %d partitions, which is higher than the requested %d",
			ErrInvalidPartitions, cur, count)
	}
	if int32(len(assignments)) != count-cur {
		return fmt.Errorf("%w: %d assignments for %d new partitions", ErrInvalidReplicaAssignment, len(assignments), count-cur)
	}
	for i, a := range assignments {
		if err := x.checkReplicas(a); err != nil {
			return err
		}
		t.Partitions = append(t.Partitions, x.newPartition(t, cur+int32(i), a))
	}
	return nil
}

func (x *txn) partition(topic string, partition int32) (*Topic, Partition, error) {
	t := x.im.Topics[topic]
	if t == nil {
		return nil, Partition{}, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, Partition{}, fmt.Errorf("%w: %s-%d", ErrUnknownPartition, topic, partition)
	}
	return t, t.Partitions[partition], nil
}

// alterPartition changes a partition's ISR on request of its leader, as
// KIP-497: the request must carry the current leader epoch and partition
// epoch; the partition epoch is bumped.
func (x *txn) alterPartition(a *alterPartitionRecord) (Partition, error) {
	if a == nil {
		return Partition{}, fmt.Errorf("%w: empty AlterPartition", ErrInvalidRequest)
	}
	_, p, err := x.partition(a.Topic, a.Partition)
	if err != nil {
		return Partition{}, err
	}
	tp := fmt.Sprintf("%s-%d", a.Topic, a.Partition)
	switch {
	case a.LeaderEpoch < p.LeaderEpoch:
		return Partition{}, fmt.Errorf("%w: %s: leader epoch %d, current %d", ErrFencedLeaderEpoch, tp, a.LeaderEpoch, p.LeaderEpoch)
	case a.LeaderEpoch > p.LeaderEpoch:
		return Partition{}, fmt.Errorf("%w: %s: leader epoch %d, current %d", ErrUnknownLeaderEpoch, tp, a.LeaderEpoch, p.LeaderEpoch)
	case a.LeaderID != p.Leader:
		return Partition{}, fmt.Errorf("%w: %s: broker %d, leader %d", ErrNotLeader, tp, a.LeaderID, p.Leader)
	case a.PartitionEpoch != p.PartitionEpoch:
		return Partition{}, fmt.Errorf("%w: %s: partition epoch %d, current %d", ErrInvalidUpdateVersion, tp, a.PartitionEpoch, p.PartitionEpoch)
	case !slices.Contains(a.NewISR, p.Leader):
		return Partition{}, fmt.Errorf("%w: %s: new ISR %v does not contain the leader %d", ErrInvalidRequest, tp, a.NewISR, p.Leader)
	}
	for i, r := range a.NewISR {
		if slices.Contains(a.NewISR[:i], r) {
			return Partition{}, fmt.Errorf("%w: %s: replica %d twice in ISR", ErrInvalidRequest, tp, r)
		}
		if !slices.Contains(p.Replicas, r) || (r != p.Leader && !x.live(r)) {
			return Partition{}, fmt.Errorf("%w: %s: replica %d", ErrIneligibleReplica, tp, r)
		}
	}
	t := x.im.Topics[a.Topic]
	p.ISR = slices.Clone(a.NewISR)
	x.completeReassignment(t, &p)
	p.PartitionEpoch++
	x.setPartition(a.Topic, p)
	return p, nil
}

// ElectionResult is the outcome of ElectLeaders for one partition.
type ElectionResult struct {
	TopicPartition
	Leader int32
	Err    error // nil, or ErrElectionNotNeeded, ErrPreferredLeaderNotAvailable, ...
}

func (x *txn) electLeaders(e *electLeadersRecord) []ElectionResult {
	if e == nil {
		return nil
	}
	tps := e.Partitions
	if tps == nil {
		for _, name := range x.im.SortedTopics() {
			for _, p := range x.im.Topics[name].Partitions {
				tps = append(tps, TopicPartition{Topic: name, Partition: p.Partition})
			}
		}
	}
	var out []ElectionResult
	for _, tp := range tps {
		res := ElectionResult{TopicPartition: tp, Leader: -1}
		_, p, err := x.partition(tp.Topic, tp.Partition)
		if err != nil {
			res.Err = err
			out = append(out, res)
			continue
		}
		res.Leader = p.Leader
		if e.Preferred {
			pref := p.Replicas[0]
			switch {
			case p.Leader == pref:
				res.Err = fmt.Errorf("%w: %s-%d", ErrElectionNotNeeded, tp.Topic, tp.Partition)
			case !x.live(pref) || !slices.Contains(p.ISR, pref):
				res.Err = fmt.Errorf("%w: %s-%d: preferred replica %d", ErrPreferredLeaderNotAvailable, tp.Topic, tp.Partition, pref)
			default:
				p.Leader = pref
				p.LeaderEpoch++
				p.PartitionEpoch++
				x.setPartition(tp.Topic, p)
				res.Leader = pref
			}
		} else {
			if p.Leader != -1 {
				res.Err = fmt.Errorf("%w: %s-%d", ErrElectionNotNeeded, tp.Topic, tp.Partition)
				out = append(out, res)
				continue
			}
			leader := int32(-1)
			for _, r := range p.Replicas {
				if x.live(r) {
					leader = r
					break
				}
			}
			if leader == -1 {
				res.Err = fmt.Errorf("%w: %s-%d", ErrEligibleLeadersNotAvailable, tp.Topic, tp.Partition)
			} else {
				if !slices.Contains(p.ISR, leader) || !x.live(leader) {
					p.ISR = []int32{leader}
				}
				p.Leader = leader
				p.LeaderEpoch++
				p.PartitionEpoch++
				x.setPartition(tp.Topic, p)
				res.Leader = leader
			}
		}
		out = append(out, res)
	}
	return out
}

// ReassignmentResult is the outcome of ReassignPartitions for one
// partition.
type ReassignmentResult struct {
	TopicPartition
	Err error
}

// reassign starts (or cancels, with nil Replicas) reassignments, as
// KIP-455: Replicas becomes target ∪ current, AddingReplicas the new ones,
// RemovingReplicas the old ones; the leader adds the new replicas to the
// ISR with AlterPartition once they caught up, and the reassignment
// completes when every adding replica is in the ISR.
func (x *txn) reassign(rs []Reassignment) []ReassignmentResult {
	var out []ReassignmentResult
	for _, ra := range rs {
		res := ReassignmentResult{TopicPartition: TopicPartition{Topic: ra.Topic, Partition: ra.Partition}}
		t, p, err := x.partition(ra.Topic, ra.Partition)
		if err == nil && ra.Replicas != nil {
			err = x.checkReplicas(ra.Replicas)
		}
		if err != nil {
			res.Err = err
			out = append(out, res)
			continue
		}
		inProgress := len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
		if ra.Replicas == nil && !inProgress {
			res.Err = fmt.Errorf("%w: %s-%d", ErrNoReassignmentInProgress, ra.Topic, ra.Partition)
			out = append(out, res)
			continue
		}
		// Back to the original replica set first.
		orig := withoutAll(p.Replicas, p.AddingReplicas)
		target := ra.Replicas
		if target == nil {
			target = orig
		}
		np := p
		np.AddingReplicas = withoutAll(target, orig)
		np.RemovingReplicas = withoutAll(orig, target)
		np.Replicas = append(slices.Clone(target), np.RemovingReplicas...)
		np.ISR = withoutAll(p.ISR, withoutAll(p.Replicas, np.Replicas))
		if len(np.AddingReplicas) == 0 {
			np.AddingReplicas = nil
		}
		if len(np.RemovingReplicas) == 0 {
			np.RemovingReplicas = nil
		}
		if len(np.ISR) == 0 {
			np.ISR = slices.Clone(p.ISR)
		}
		x.completeReassignment(t, &np)
		if !slices.Contains(np.ISR, np.Leader) {
			x.elect(t, &np)
		}
		np.PartitionEpoch++
		x.setPartition(ra.Topic, np)
		out = append(out, res)
	}
	return out
}

// completeReassignment finishes p's reassignment when every adding
// replica is in the ISR: the removing replicas leave the replica set and
// the ISR, and a removed leader is replaced.
func (x *txn) completeReassignment(t *Topic, p *Partition) {
	if len(p.AddingReplicas) == 0 && len(p.RemovingReplicas) == 0 {
		return
	}
	for _, r := range p.AddingReplicas {
		if !slices.Contains(p.ISR, r) {
			return
		}
	}
	removing := p.RemovingReplicas
	p.Replicas = withoutAll(p.Replicas, removing)
	if isr := withoutAll(p.ISR, removing); len(isr) > 0 {
		p.ISR = isr
	}
	p.AddingReplicas, p.RemovingReplicas = nil, nil
	if slices.Contains(removing, p.Leader) || p.Leader == -1 {
		x.elect(t, p)
	}
}

func without(s []int32, id int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		if v != id {
			out = append(out, v)
		}
	}
	return out
}

func withoutAll(s, drop []int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		if !slices.Contains(drop, v) {
			out = append(out, v)
		}
	}
	return out
}
