package metadata

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/silkworm/silkworm/internal/security/acl"
)

// request is a metadata change as asked by any node. The active
// controller turns it into a record (making every random or time-based
// decision) and appends it; other nodes forward it to the controller.
type request struct {
	Op         string            `json:"op"`
	Name       string            `json:"name,omitempty"`
	Partitions int32             `json:"partitions,omitempty"`
	RF         int16             `json:"rf,omitempty"`
	Configs    map[string]string `json:"configs,omitempty"`
	Count      int64             `json:"count,omitempty"`
	NodeID     int32             `json:"node_id,omitempty"`
	Broker     *Broker           `json:"broker,omitempty"`
	RaftAddr   string            `json:"raft_addr,omitempty"`

	// Assignment is a create_topic's manual replica assignment, one
	// replica list per partition; nil lets the controller place them.
	Assignment [][]int32 `json:"assignment,omitempty"`

	Alter    *alterPartitionRecord `json:"alter,omitempty"`
	Elect    *electLeadersRecord   `json:"elect,omitempty"`
	Reassign []Reassignment        `json:"reassign,omitempty"`

	Scram  []ScramChange `json:"scram,omitempty"`
	ACLs   []acl.Binding `json:"acls,omitempty"`
	Quotas []QuotaChange `json:"quotas,omitempty"`

	Features map[string]int16 `json:"features,omitempty"`
}

const (
	opCreateTopic        = "create_topic"
	opDeleteTopic        = "delete_topic"
	opCreatePartitions   = "create_partitions"
	opSetTopicConfigs    = "set_topic_configs"
	opSetBrokerConfigs   = "set_broker_configs"
	opAllocateProducers  = "allocate_producer_ids"
	opRegisterBroker     = "register_broker"
	opHeartbeat          = "heartbeat"
	opControlledShutdown = "controlled_shutdown"
	opUnregisterBroker   = "unregister_broker"
	opAlterPartition     = "alter_partition"
	opElectLeaders       = "elect_leaders"
	opReassign           = "reassign_partitions"
	opAlterScram         = "alter_scram_credentials"
	opCreateACLs         = "create_acls"
	opDeleteACLs         = "delete_acls"
	opAlterClientQuotas  = "alter_client_quotas"
	opSetFeatures        = "set_features"
	opDescribeQuorum     = "describe_quorum"
	// opAppliedEpoch asks any node (not the controller) for the epoch of
	// the image it has applied; see controller.waitPropagated.
	opAppliedEpoch = "applied_epoch"
)

// controller is the active-controller state of a Quorum: it exists on
// every controller node but acts only while that node is the Raft leader.
// Heartbeat times are kept in memory only, as in KRaft: a new controller
// gives every broker a full session timeout.
type controller struct {
	q *Quorum

	mu       sync.Mutex // guards lastSeen, sessions, sessionless, probing and rng
	lastSeen map[int32]time.Time
	sessions map[int32]*brokerSession // open broker sessions while active (session.go)
	// sessionless records since when a broker has had no open session
	// while this node is active; probing marks brokers being probed.
	sessionless map[int32]time.Time
	probing     map[int32]bool
	rng         *rand.Rand
}

func newController(q *Quorum) *controller {
	return &controller{
		q: q, lastSeen: map[int32]time.Time{}, sessions: map[int32]*brokerSession{},
		sessionless: map[int32]time.Time{}, probing: map[int32]bool{},
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
}

// lead runs while this node is the Raft leader, until ctx ends: it waits
// for every earlier entry to be applied, announces itself with a
// set_controller record, then fences brokers whose session expired.
func (c *controller) lead(ctx context.Context) {
	q := c.q
	for !c.announce() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	q.active.Store(true)
	defer c.closeSessions() // after active is false: no session opens after it
	defer q.active.Store(false)
	q.log.Info("active metadata controller", "node.id", q.cfg.NodeID)

	tick := time.NewTicker(min(q.cfg.HeartbeatInterval, q.cfg.BrokerSessionTimeout/4))
	defer tick.Stop()
	probe := time.NewTicker(probeInterval)
	defer probe.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.fenceExpired(time.Now())
		case <-probe.C:
			c.probeSessionless(time.Now())
		}
	}
}

// announce waits until every earlier entry is applied, resets the
// heartbeat times, and appends set_controller. It reports success; on
// failure (leadership lost, or a slow commit) lead tries again while it
// still leads.
func (c *controller) announce() bool {
	q := c.q
	if err := q.raft.Barrier(q.cfg.RequestTimeout).Error(); err != nil {
		q.log.Warn("metadata controller barrier", "err", err)
		return false
	}
	now := time.Now()
	c.mu.Lock()
	clear(c.lastSeen)
	clear(c.sessionless)
	for _, b := range q.image.Load().Brokers {
		c.lastSeen[b.NodeID] = now
		c.sessionless[b.NodeID] = now
	}
	c.mu.Unlock()
	clusterID := q.image.Load().ClusterID
	if clusterID == "" {
		clusterID = q.cfg.ClusterID
	}
	if clusterID == "" {
		clusterID = q.cfg.FormattedClusterID
	}
	if clusterID == "" {
		clusterID = NewTopicID().String()
	}
	if _, err := q.applyRecord(&record{Type: recSetController, NodeID: q.cfg.NodeID, ClusterID: clusterID}); err != nil {
		q.log.Warn("metadata controller announce", "err", err)
		return false
	}
	return true
}

// fenceExpired fences every unfenced broker whose last heartbeat is older
// than the session timeout.
func (c *controller) fenceExpired(now time.Time) {
	var expired []int32
	c.mu.Lock()
	for _, b := range c.q.image.Load().Brokers {
		seen, ok := c.lastSeen[b.NodeID]
		if !ok {
			c.lastSeen[b.NodeID] = now
			continue
		}
		if !b.Fenced && now.Sub(seen) > c.q.cfg.BrokerSessionTimeout {
			expired = append(expired, b.NodeID)
		}
	}
	c.mu.Unlock()
	for _, id := range expired {
		c.q.log.Info("fencing broker after missed heartbeats", "broker", id, "session.timeout", c.q.cfg.BrokerSessionTimeout)
		if _, err := c.q.applyRecord(&record{Type: recFenceBroker, NodeID: id}); err != nil {
			c.q.log.Warn("fence broker", "broker", id, "err", err)
		}
	}
}

// handle serves a request on the active controller. It returns
// ErrNotController when this node is not (yet) the active controller.
func (c *controller) handle(req *request) (any, error) {
	q := c.q
	if q.raft.State() != raft.Leader || !q.active.Load() {
		return nil, ErrNotController
	}
	im := q.image.Load()
	switch req.Op {
	case opCreateTopic:
		if _, ok := im.Topics[req.Name]; ok {
			return nil, fmt.Errorf("%w: topic '%s' already exists", ErrTopicExists, req.Name)
		}
		if req.Assignment != nil {
			t, err := manualTopic(im, req.Name, req.Assignment, req.Configs)
			if err != nil {
				return nil, err
			}
			v, err := q.applyRecord(&record{Type: recCreateTopic, Topic: t})
			if err == nil {
				c.waitPropagated(q.image.Load().Epoch)
			}
			return v, err
		}
		if req.Partitions <= 0 {
			return nil, fmt.Errorf("%w: number of partitions must be larger than 0", ErrInvalidPartitions)
		}
		live := liveBrokers(im)
		if req.RF <= 0 || int(req.RF) > len(live) {
			return nil, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d",
				ErrInvalidReplicas, req.RF, len(live))
		}
		t := &Topic{Name: req.Name, ID: NewTopicID(), Configs: req.Configs}
		for i, replicas := range c.assign(live, req.Partitions, int(req.RF), 0) {
			t.Partitions = append(t.Partitions, Partition{Partition: int32(i), Replicas: replicas})
		}
		v, err := q.applyRecord(&record{Type: recCreateTopic, Topic: t})
		if err == nil {
			c.waitPropagated(q.image.Load().Epoch)
		}
		return v, err
	case opCreatePartitions:
		t := im.Topics[req.Name]
		if t == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, req.Name)
		}
		cur := int32(len(t.Partitions))
		if int32(req.Count) <= cur {
			return nil, fmt.Errorf("%w: topic currently has %d partitions, which is higher than the requested %d",
				ErrInvalidPartitions, cur, req.Count)
		}
		if req.Assignment != nil {
			// A manual assignment (CreatePartitions' Assignment): the
			// new partitions get exactly these replicas.
			if int64(len(req.Assignment)) != req.Count-int64(cur) {
				return nil, fmt.Errorf("%w: %d assignments for %d new partitions",
					ErrInvalidReplicaAssignment, len(req.Assignment), req.Count-int64(cur))
			}
			if _, err := manualTopic(im, req.Name, req.Assignment, nil); err != nil {
				return nil, err
			}
			v, err := q.applyRecord(&record{Type: recCreatePartitions, Name: req.Name, Count: req.Count,
				Assignments: req.Assignment})
			if err == nil {
				c.waitPropagated(q.image.Load().Epoch)
			}
			return v, err
		}
		rf := 1
		if cur > 0 {
			rf = len(t.Partitions[0].Replicas) - len(t.Partitions[0].AddingReplicas)
		}
		live := liveBrokers(im)
		if rf > len(live) {
			return nil, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d",
				ErrInvalidReplicas, rf, len(live))
		}
		v, err := q.applyRecord(&record{Type: recCreatePartitions, Name: req.Name, Count: req.Count,
			Assignments: c.assign(live, int32(req.Count)-cur, rf, cur)})
		if err == nil {
			c.waitPropagated(q.image.Load().Epoch)
		}
		return v, err
	// Deletions and config changes are acknowledged once every live node
	// has applied them, as creations are: a client that sets a group's
	// share.auto.offset.reset, or deletes a topic, and then at once joins
	// or recreates through another broker must find the change there.
	case opDeleteTopic:
		return c.applyPropagated(&record{Type: recDeleteTopic, Name: req.Name})
	case opSetGroupConfigs:
		return c.applyPropagated(&record{Type: recSetGroupConfigs, Name: req.Name, Configs: req.Configs})
	case opSetTopicConfigs:
		return c.applyPropagated(&record{Type: recSetTopicConfigs, Name: req.Name, Configs: req.Configs})
	case opSetBrokerConfigs:
		return c.applyPropagated(&record{Type: recSetBrokerConfigs, Configs: req.Configs})
	case opSetNodeConfigs:
		return c.applyPropagated(&record{Type: recSetNodeConfigs, NodeID: req.NodeID, Configs: req.Configs})
	case opAllocateProducers:
		if req.Count <= 0 {
			return nil, fmt.Errorf("%w: producer id block of %d", ErrInvalidRequest, req.Count)
		}
		return q.applyRecord(&record{Type: recAllocateProducers, Count: req.Count})
	case opRegisterBroker:
		return nil, c.register(req)
	case opHeartbeat:
		return nil, c.heartbeat(im, req.NodeID)
	case opControlledShutdown:
		return q.applyRecord(&record{Type: recControlledShutdown, NodeID: req.NodeID})
	case opUnregisterBroker:
		return q.applyRecord(&record{Type: recUnregisterBroker, NodeID: req.NodeID})
	case opAlterPartition:
		return q.applyRecord(&record{Type: recAlterPartition, Alter: req.Alter})
	case opElectLeaders:
		return q.applyRecord(&record{Type: recElectLeaders, Elect: req.Elect})
	case opReassign:
		return q.applyRecord(&record{Type: recReassign, Reassign: req.Reassign})
	case opAlterScram:
		return c.applyPropagated(&record{Type: recAlterScram, Scram: req.Scram})
	case opCreateACLs:
		return c.applyPropagated(&record{Type: recCreateACLs, ACLs: req.ACLs})
	case opDeleteACLs:
		return c.applyPropagated(&record{Type: recDeleteACLs, ACLs: req.ACLs})
	case opAlterClientQuotas:
		return c.applyPropagated(&record{Type: recAlterClientQuotas, Quotas: req.Quotas})
	case opSetFeatures:
		return c.applyPropagated(&record{Type: recSetFeatures, Features: req.Features})
	case opDescribeQuorum:
		return q.quorumStatus(), nil
	}
	return nil, fmt.Errorf("%w: unknown metadata request %q", ErrInvalidRequest, req.Op)
}

// applyPropagated appends r and, once it is applied, waits until every
// reachable node has applied it too (waitPropagated). The security and
// config changes use it: a client that created a SCRAM user or an ACL, or
// set a config, expects any broker to apply it once the change is
// acknowledged.
func (c *controller) applyPropagated(r *record) (any, error) {
	v, err := c.q.applyRecord(r)
	if err == nil {
		c.waitPropagated(c.q.image.Load().Epoch)
	}
	return v, err
}

// waitPropagated waits, for at most twice the election timeout, until
// every reachable node of the Raft configuration has applied the image of
// epoch target, so that a topic or partition is known to every live broker
// before its creation is acknowledged.
//
// Raft commits a record once a majority has it, but followers apply it only
// when a later AppendEntries tells them the commit index (the barrier that
// applyRecord appends, a round trip later). Without this wait, a controller that dies in that window
// leaves a created topic unknown to the other brokers until a new
// controller is elected, and they answer UNKNOWN_TOPIC_OR_PARTITION for
// it, which clients (franz-go) give up on after a few tries. A node that
// does not answer is down and is skipped; it will replay the log.
func (c *controller) waitPropagated(target int64) {
	q := c.q
	f := q.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	deadline := time.Now().Add(2 * q.cfg.ElectionTimeout)
	self := serverID(q.cfg.NodeID)
	for _, s := range f.Configuration().Servers {
		if s.ID == self {
			continue
		}
		for {
			resp, err := c.q.mux.forward(string(s.Address), &request{Op: opAppliedEpoch}, time.Until(deadline))
			if err != nil || resp.Code != "" {
				break // down, or too old to answer: not waited for
			}
			var epoch int64
			if json.Unmarshal(resp.Result, &epoch) != nil || epoch >= target {
				break
			}
			if time.Now().After(deadline) {
				q.log.Warn("metadata change not yet applied by a node", "node.id", s.ID, "epoch", epoch, "want", target)
				return
			}
			select {
			case <-q.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// register adds a broker-only node to the Raft configuration as a
// non-voter (so it receives the metadata log) and appends its
// registration. The broker starts fenced; its next heartbeat unfences it.
func (c *controller) register(req *request) error {
	q := c.q
	if req.Broker == nil {
		return fmt.Errorf("%w: registration without broker", ErrInvalidRequest)
	}
	id := req.Broker.NodeID
	if req.RaftAddr != "" {
		if err := c.ensureMember(id, req.RaftAddr); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.lastSeen[id] = time.Now()
	c.mu.Unlock()
	_, err := q.applyRecord(&record{Type: recRegisterBroker, Broker: req.Broker})
	return err
}

// ensureMember adds node id at addr as a non-voter unless it is already
// in the Raft configuration.
func (c *controller) ensureMember(id int32, addr string) error {
	q := c.q
	f := q.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	sid := raft.ServerID(strconv.Itoa(int(id)))
	for _, s := range f.Configuration().Servers {
		if s.ID == sid {
			if s.Address == raft.ServerAddress(addr) || s.Suffrage == raft.Voter {
				return nil
			}
		}
	}
	q.log.Info("adding broker to the metadata quorum as an observer", "node.id", id, "addr", addr)
	if err := q.raft.AddNonvoter(sid, raft.ServerAddress(addr), 0, q.cfg.RequestTimeout).Error(); err != nil {
		return fmt.Errorf("add non-voter %d: %w", id, notControllerIfLost(err))
	}
	return nil
}

// heartbeat records a broker's heartbeat and unfences it if it was fenced
// (and is not in controlled shutdown).
func (c *controller) heartbeat(im *Image, id int32) error {
	b := im.BrokerByID(id)
	if b == nil {
		return fmt.Errorf("%w: broker %d", ErrBrokerNotRegistered, id)
	}
	c.mu.Lock()
	c.lastSeen[id] = time.Now()
	c.mu.Unlock()
	if b.Fenced && !b.InControlledShutdown {
		_, err := c.q.applyRecord(&record{Type: recUnfenceBroker, NodeID: id})
		return err
	}
	return nil
}

// liveBrokers returns the brokers that may receive new replicas.
// manualTopic builds a topic to create from a manual replica assignment,
// with the checks of Kafka's ReplicationControlManager.createTopic that
// need the image: every broker registered and at most once per list, and
// at least one of them neither fenced nor in controlled shutdown.
func manualTopic(im *Image, name string, assignment [][]int32, configs map[string]string) (*Topic, error) {
	if len(assignment) == 0 {
		return nil, fmt.Errorf("%w: number of partitions must be larger than 0", ErrInvalidPartitions)
	}
	t := &Topic{Name: name, ID: NewTopicID(), Configs: configs}
	for i, replicas := range assignment {
		if len(replicas) == 0 {
			return nil, fmt.Errorf("%w: The manual partition assignment includes an empty replica list.", ErrInvalidReplicaAssignment)
		}
		live := false
		for j, r := range replicas {
			b := im.BrokerByID(r)
			if b == nil {
				return nil, fmt.Errorf("%w: The manual partition assignment includes broker %d, but no such broker is registered.",
					ErrInvalidReplicaAssignment, r)
			}
			if slices.Contains(replicas[:j], r) {
				return nil, fmt.Errorf("%w: The manual partition assignment includes the broker %d more than once.",
					ErrInvalidReplicaAssignment, r)
			}
			live = live || (!b.Fenced && !b.InControlledShutdown)
		}
		if !live {
			return nil, fmt.Errorf("%w: All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.",
				ErrInvalidReplicaAssignment, i)
		}
		t.Partitions = append(t.Partitions, Partition{Partition: int32(i), Replicas: slices.Clone(replicas)})
	}
	return t, nil
}

func liveBrokers(im *Image) []Broker {
	var out []Broker
	for _, b := range im.Brokers {
		if !b.Fenced && !b.InControlledShutdown {
			out = append(out, b)
		}
	}
	return out
}

// assign places rf replicas for each of n partitions numbered from first,
// as Kafka does: round-robin over the brokers from a random start, the
// followers shifted by a random amount that grows each time the partition
// number wraps around the broker count. When every broker has a rack, the
// broker list alternates racks and the replicas of one partition go to
// distinct racks first. rf must not exceed len(brokers).
func (c *controller) assign(brokers []Broker, n int32, rf int, first int32) [][]int32 {
	c.mu.Lock()
	start, shift := c.rng.IntN(len(brokers)), c.rng.IntN(len(brokers))
	c.mu.Unlock()
	return assignReplicas(brokers, n, rf, first, start, shift)
}

func assignReplicas(brokers []Broker, n int32, rf int, first int32, start, shift int) [][]int32 {
	nb := len(brokers)
	arranged, rackAware := arrangeByRack(brokers)
	rackOf := func(id int32) string {
		for _, b := range brokers {
			if b.NodeID == id && b.Rack != nil {
				return *b.Rack
			}
		}
		return ""
	}
	numRacks := 0
	if rackAware {
		racks := map[string]bool{}
		for _, b := range brokers {
			racks[*b.Rack] = true
		}
		numRacks = len(racks)
	}
	out := make([][]int32, 0, n)
	for i := int32(0); i < n; i++ {
		pid := int(first + i)
		if pid > 0 && pid%nb == 0 {
			shift++
		}
		lead := (pid + start) % nb
		replicas := []int32{arranged[lead]}
		var candidates []int32
		for j := 0; j < nb-1; j++ {
			candidates = append(candidates, arranged[(lead+1+(shift+j)%(nb-1))%nb])
		}
		if rackAware {
			used := map[string]bool{rackOf(replicas[0]): true}
			for _, b := range candidates {
				if len(replicas) == rf || len(used) == numRacks {
					break
				}
				if !used[rackOf(b)] {
					used[rackOf(b)] = true
					replicas = append(replicas, b)
				}
			}
		}
		for _, b := range candidates {
			if len(replicas) == rf {
				break
			}
			if !slices.Contains(replicas, b) {
				replicas = append(replicas, b)
			}
		}
		out = append(out, replicas)
	}
	return out
}

// arrangeByRack returns the broker ids sorted, or, when every broker has
// a rack, alternating between racks (rack a's first broker, rack b's
// first, ..., rack a's second, ...).
func arrangeByRack(brokers []Broker) ([]int32, bool) {
	sorted := slices.SortedFunc(slices.Values(brokers), func(a, b Broker) int { return cmp.Compare(a.NodeID, b.NodeID) })
	rackAware := len(sorted) > 0
	for _, b := range sorted {
		if b.Rack == nil {
			rackAware = false
		}
	}
	var ids []int32
	if !rackAware {
		for _, b := range sorted {
			ids = append(ids, b.NodeID)
		}
		return ids, false
	}
	byRack := map[string][]int32{}
	for _, b := range sorted {
		byRack[*b.Rack] = append(byRack[*b.Rack], b.NodeID)
	}
	racks := slices.Sorted(maps.Keys(byRack))
	for round := 0; len(ids) < len(sorted); round++ {
		for _, r := range racks {
			if round < len(byRack[r]) {
				ids = append(ids, byRack[r][round])
			}
		}
	}
	return ids, true
}
