package broker

// Wiring of share groups (internal/share, KIP-932): the membership
// coordinator (on the group's coordinator, like consumer groups), the
// share-partition manager (on each partition leader), the share
// coordinator's state store over the __share_group_state topic (created
// on first need like __consumer_offsets, replication factor
// min(share.coordinator.state.topic.replication.factor, live brokers)),
// the persister that reaches a remote share coordinator with
// Read/WriteShareGroupState over a kgo client per broker, the share
// sessions, and the GROUP configs that tune each group.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/group"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/share"
)

// shareStateTopic is Kafka's internal topic of share-partition state.
const shareStateTopic = "__share_group_state"

// shareStateTimeout bounds a state read or write, retries included
// (share.coordinator.write.timeout.ms is per attempt in Kafka).
const shareStateTimeout = 15 * time.Second

// shareWiring is the broker's share group machinery. Safe for concurrent
// use.
type shareWiring struct {
	coord    *share.Coordinator
	store    *share.StateStore
	mgr      *share.Manager
	sessions *shareSessions

	mu      sync.Mutex // guards clients
	clients map[int32]markerClient
}

// startShares creates the share machinery; called from New.
func (b *Broker) startShares() {
	sw := &shareWiring{store: share.NewStateStore(), clients: map[int32]markerClient{},
		sessions: newShareSessions(int(intConfig(b.cfg, "group.share.max.share.sessions", 2000)))}
	sw.coord = share.NewCoordinator(shareGroupHost{b})
	sw.mgr = share.NewManager(sharePersister{b}, b.shareLimits, 100*time.Millisecond, b.log.With("component", "share-partitions"))
	b.shares = sw
}

// stopShares stops the sweeper, the session timers and the clients;
// called before the logs close.
func (b *Broker) stopShares() {
	sw := b.shares
	if sw == nil {
		return
	}
	sw.mgr.Close()
	sw.coord.Close()
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for _, c := range sw.clients {
		c.cl.Close()
	}
	sw.clients = map[int32]markerClient{}
}

// groupConfigKeys are the GROUP config keys Kafka 4.2 knows, with their
// type and the broker key that gives the default and bounds.
var groupConfigKeys = map[string]struct {
	typ        kmsg.ConfigType
	brokerKey  string
	minKey     string
	maxKey     string
	def        string
	validValue func(string) bool
}{
	"consumer.session.timeout.ms":      {typ: kmsg.ConfigTypeInt, brokerKey: "group.consumer.session.timeout.ms", minKey: "group.consumer.min.session.timeout.ms", maxKey: "group.consumer.max.session.timeout.ms", def: "45000"},
	"consumer.heartbeat.interval.ms":   {typ: kmsg.ConfigTypeInt, brokerKey: "group.consumer.heartbeat.interval.ms", minKey: "group.consumer.min.heartbeat.interval.ms", maxKey: "group.consumer.max.heartbeat.interval.ms", def: "5000"},
	"share.session.timeout.ms":         {typ: kmsg.ConfigTypeInt, brokerKey: "group.share.session.timeout.ms", minKey: "group.share.min.session.timeout.ms", maxKey: "group.share.max.session.timeout.ms", def: "45000"},
	"share.heartbeat.interval.ms":      {typ: kmsg.ConfigTypeInt, brokerKey: "group.share.heartbeat.interval.ms", minKey: "group.share.min.heartbeat.interval.ms", maxKey: "group.share.max.heartbeat.interval.ms", def: "5000"},
	"share.record.lock.duration.ms":    {typ: kmsg.ConfigTypeInt, brokerKey: "group.share.record.lock.duration.ms", minKey: "group.share.min.record.lock.duration.ms", maxKey: "group.share.max.record.lock.duration.ms", def: "30000"},
	"share.delivery.count.limit":       {typ: kmsg.ConfigTypeInt, brokerKey: "group.share.delivery.count.limit", minKey: "group.share.min.delivery.count.limit", maxKey: "group.share.max.delivery.count.limit", def: "5"},
	"share.partition.max.record.locks": {typ: kmsg.ConfigTypeInt, brokerKey: "group.share.partition.max.record.locks", minKey: "group.share.min.partition.max.record.locks", maxKey: "group.share.max.partition.max.record.locks", def: "2000"},
	"share.auto.offset.reset": {typ: kmsg.ConfigTypeString, def: "latest", validValue: func(v string) bool {
		return v == "latest" || v == "earliest" || strings.HasPrefix(v, "by_duration:") && len(v) > len("by_duration:P")
	}},
	"share.isolation.level": {typ: kmsg.ConfigTypeString, def: "read_uncommitted", validValue: func(v string) bool {
		return v == "read_uncommitted" || v == "read_committed"
	}},
}

// groupConfigDefault is the value a GROUP config takes when the group
// does not override it: the broker's setting, else Kafka's default.
func (b *Broker) groupConfigDefault(key string) string {
	k, ok := groupConfigKeys[key]
	if !ok {
		return ""
	}
	if k.brokerKey != "" {
		if v, ok := b.cfg.Value(k.brokerKey); ok && v != "" {
			return v
		}
	}
	return k.def
}

// groupConfigValue is the effective value of a GROUP config for group.
func (b *Broker) groupConfigValue(group, key string) string {
	if v, ok := b.meta.Image().GroupConfigs[group][key]; ok {
		return v
	}
	return b.groupConfigDefault(key)
}

// groupConfigInt is groupConfig as an integer.
func (b *Broker) groupConfigInt(group, key string) int64 {
	n, err := strconv.ParseInt(b.groupConfigValue(group, key), 10, 64)
	if err != nil {
		n, _ = strconv.ParseInt(groupConfigKeys[key].def, 10, 64)
	}
	return n
}

// validateGroupConfig checks one GROUP config value as Kafka's
// GroupConfig does: known key, type, and the broker's min/max bounds.
func (b *Broker) validateGroupConfig(key string, value *string) error {
	k, ok := groupConfigKeys[key]
	if !ok {
		return fmt.Errorf("Unknown group config name: %s", key)
	}
	if value == nil {
		return nil // deletes the override
	}
	if k.validValue != nil {
		if !k.validValue(*value) {
			return fmt.Errorf("Invalid value %s for configuration %s", *value, key)
		}
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*value), 10, 32)
	if err != nil {
		return fmt.Errorf("Invalid value %s for configuration %s: Not a number of type INT", *value, key)
	}
	if k.minKey != "" {
		if lo := intConfig(b.cfg, k.minKey, 1); n < lo {
			return fmt.Errorf("%s must be greater than or equal to %s %d", key, k.minKey, lo)
		}
	}
	if k.maxKey != "" {
		if hi := intConfig(b.cfg, k.maxKey, 1<<31-1); n > hi {
			return fmt.Errorf("%s must be less than or equal to %s %d", key, k.maxKey, hi)
		}
	}
	return nil
}

// setGroupConfigs stores group's overrides in the cluster metadata.
func (b *Broker) setGroupConfigs(group string, configs map[string]string) error {
	s, ok := b.meta.(interface {
		SetGroupConfigs(string, map[string]string) error
	})
	if !ok {
		return errors.New("the metadata store does not keep group configs")
	}
	return s.SetGroupConfigs(group, configs)
}

// shareLimits is what share-partitions of group apply now.
func (b *Broker) shareLimits(group string) share.Limits {
	return share.Limits{
		LockDuration:       time.Duration(b.groupConfigInt(group, "share.record.lock.duration.ms")) * time.Millisecond,
		DeliveryCountLimit: int16(b.groupConfigInt(group, "share.delivery.count.limit")),
		MaxRecordLocks:     int(b.groupConfigInt(group, "share.partition.max.record.locks")),
	}
}

// shareGroupHost gives the membership coordinator topics and settings.
type shareGroupHost struct{ b *Broker }

func (h shareGroupHost) Topic(name string) (share.TopicMeta, bool) {
	t := h.b.meta.Image().Topics[name]
	if t == nil {
		return share.TopicMeta{}, false
	}
	return share.TopicMeta{ID: t.ID, Partitions: int32(len(t.Partitions))}, true
}

func (h shareGroupHost) Config(g string) share.GroupConfig {
	b := h.b
	return share.GroupConfig{
		SessionTimeout:    time.Duration(b.groupConfigInt(g, "share.session.timeout.ms")) * time.Millisecond,
		HeartbeatInterval: time.Duration(b.groupConfigInt(g, "share.heartbeat.interval.ms")) * time.Millisecond,
		MaxSize:           int(intConfig(b.cfg, "group.share.max.size", 200)),
	}
}

// shareCoordinatorCheck answers 0 when this broker coordinates group
// (leads its __consumer_offsets partition), else NOT_COORDINATOR or
// COORDINATOR_NOT_AVAILABLE.
func (b *Broker) shareCoordinatorCheck(groupID string) int16 {
	ts, err := b.ensureOffsetsTopic()
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	p := group.PartitionFor(groupID, int32(len(ts.partitions)))
	if int(p) >= len(ts.partitions) || ts.partitions[p] == nil || !ts.partitions[p].IsLeader() {
		return kerr.NotCoordinator.Code
	}
	return 0
}

// isConsumerGroup reports whether groupID names a live classic or
// consumer group here (the namespace is shared with share groups).
func (b *Broker) isConsumerGroup(groupID string) bool {
	req := kmsg.NewPtrListGroupsRequest()
	for _, g := range b.groups.ListGroups(req).Groups {
		if g.Group == groupID {
			return true
		}
	}
	return false
}

// ensureShareStateTopic returns __share_group_state, creating it if
// needed.
func (b *Broker) ensureShareStateTopic() (*topicState, error) {
	return b.ensureInternalTopic(shareStateTopic)
}

// shareStatePartition is the __share_group_state partition of a
// share-partition key: abs(hashCode("group:topicId:partition")) mod the
// partition count, as Kafka's share coordinator maps keys.
func shareStatePartition(k share.Key, n int32) int32 {
	return group.PartitionFor(shareCoordinatorKey(k), n)
}

// shareCoordinatorKey is Kafka's share coordinator key of a
// share-partition, "group:topicId:partition" with the topic id in
// Kafka's base64 form.
func shareCoordinatorKey(k share.Key) string {
	return k.Group + ":" + base64.RawURLEncoding.EncodeToString(k.TopicID[:]) + ":" + strconv.Itoa(int(k.Partition))
}

// shareCoordinatorFor answers FindCoordinator with key type SHARE (2):
// the leader of the __share_group_state partition of key
// ("group:topicId:partition"), creating the topic on first need; an
// error code otherwise (INVALID_REQUEST for a malformed key,
// COORDINATOR_NOT_AVAILABLE without a leader). findcoordinator.go calls
// it.
func (b *Broker) shareCoordinatorFor(key string) (int32, int16) {
	i := strings.LastIndexByte(key, ':')
	j := strings.LastIndexByte(key[:max(i, 0)], ':')
	if i < 0 || j <= 0 {
		return -1, kerr.InvalidRequest.Code
	}
	if _, err := strconv.ParseInt(key[i+1:], 10, 32); err != nil {
		return -1, kerr.InvalidRequest.Code
	}
	if id, err := base64.RawURLEncoding.DecodeString(key[j+1 : i]); err != nil || len(id) != 16 {
		return -1, kerr.InvalidRequest.Code
	}
	ts, err := b.ensureShareStateTopic()
	if err != nil {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	idx := group.PartitionFor(key, int32(len(ts.partitions)))
	t := b.meta.Image().Topics[shareStateTopic]
	if t == nil || int(idx) >= len(t.Partitions) || t.Partitions[idx].Leader < 0 {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return t.Partitions[idx].Leader, 0
}

// localShareState returns the local leader of state partition idx as a
// share.StateLog with its leader epoch, or a Kafka error code.
func (b *Broker) localShareState(idx int32) (share.StateLog, int32, int16) {
	ts := b.topic(shareStateTopic)
	if ts == nil || idx < 0 || int(idx) >= len(ts.partitions) || ts.partitions[idx] == nil {
		return nil, 0, kerr.NotCoordinator.Code
	}
	p := ts.partitions[idx]
	if !p.IsLeader() {
		return nil, 0, kerr.NotCoordinator.Code
	}
	return stateLog{p}, p.LeaderEpoch(), 0
}

// sharePersister is the share.Persister of this broker's
// share-partitions: the local store when this broker leads the key's
// state partition, else Read/WriteShareGroupState to its leader, retried
// while leadership moves.
type sharePersister struct{ b *Broker }

func (sp sharePersister) Read(key share.Key) (share.State, bool, error) {
	var (
		st    share.State
		found bool
	)
	err := sp.b.withShareCoordinator(key, func(idx int32) error {
		if l, epoch, code := sp.b.localShareState(idx); code == 0 {
			var err error
			st, found, err = sp.b.shares.store.Read(idx, epoch, l, key)
			return err
		}
		return errNotLocal
	}, func(cl *kgo.Client, ctx context.Context) error {
		req := kmsg.NewPtrReadShareGroupStateRequest()
		req.GroupID = key.Group
		rt := kmsg.NewReadShareGroupStateRequestTopic()
		rt.TopicID = key.TopicID
		rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = key.Partition, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return errors.New("ReadShareGroupState: malformed response")
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			return kerr.ErrorForCode(p.ErrorCode)
		}
		found = p.StartOffset >= 0 || p.StateEpoch > 0
		st = share.State{StateEpoch: p.StateEpoch, StartOffset: p.StartOffset}
		for _, sb := range p.StateBatches {
			st.Batches = append(st.Batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset,
				State: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
		}
		return nil
	})
	return st, found, err
}

func (sp sharePersister) Write(key share.Key, st share.State) error {
	return sp.b.withShareCoordinator(key, func(idx int32) error {
		if l, epoch, code := sp.b.localShareState(idx); code == 0 {
			return sp.b.shares.store.Write(idx, epoch, l, key, st)
		}
		return errNotLocal
	}, func(cl *kgo.Client, ctx context.Context) error {
		req := kmsg.NewPtrWriteShareGroupStateRequest()
		req.GroupID = key.Group
		wt := kmsg.NewWriteShareGroupStateRequestTopic()
		wt.TopicID = key.TopicID
		wp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
		wp.Partition, wp.StateEpoch, wp.LeaderEpoch, wp.StartOffset = key.Partition, st.StateEpoch, st.LeaderEpoch, st.StartOffset
		for _, sb := range st.Batches {
			b := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
			b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount = sb.FirstOffset, sb.LastOffset, int8(sb.State), sb.DeliveryCount
			wp.StateBatches = append(wp.StateBatches, b)
		}
		wt.Partitions = append(wt.Partitions, wp)
		req.Topics = append(req.Topics, wt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return errors.New("WriteShareGroupState: malformed response")
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	})
}

func (sp sharePersister) Leads(key share.Key, leaderEpoch int32) bool {
	name := sp.b.topicNameByID(key.TopicID)
	if name == "" {
		return false
	}
	_, p := sp.b.partition(name, key.Partition)
	return p != nil && p.IsLeader() && p.LeaderEpoch() == leaderEpoch
}

var errNotLocal = errors.New("state partition is not led here")

// withShareCoordinator runs local when this broker leads key's state
// partition, else remote with a client to its leader, retrying while
// the coordinator is unknown or moving, for up to shareStateTimeout.
func (b *Broker) withShareCoordinator(key share.Key, local func(idx int32) error, remote func(*kgo.Client, context.Context) error) error {
	ts, err := b.ensureShareStateTopic()
	if err != nil {
		return err
	}
	idx := shareStatePartition(key, int32(len(ts.partitions)))
	deadline := time.Now().Add(shareStateTimeout)
	for attempt := 0; ; attempt++ {
		err = b.shareCoordinatorAttempt(idx, local, remote)
		if err == nil || !retriableShareStateError(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-b.stopWatch:
			return err
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

func (b *Broker) shareCoordinatorAttempt(idx int32, local func(idx int32) error, remote func(*kgo.Client, context.Context) error) error {
	im := b.meta.Image()
	t := im.Topics[shareStateTopic]
	if t == nil || int(idx) >= len(t.Partitions) {
		return kerr.CoordinatorNotAvailable
	}
	leader := t.Partitions[idx].Leader
	if leader == b.nodeID {
		if err := local(idx); !errors.Is(err, errNotLocal) {
			return err
		}
		return kerr.NotCoordinator
	}
	br := onListener(im.BrokerByID(leader), b.cfg.InterBrokerListenerName)
	if leader < 0 || br == nil {
		return kerr.CoordinatorNotAvailable
	}
	cl, err := b.shares.client(b, leader, net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port))))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return remote(cl, ctx)
}

// retriableShareStateError: the share coordinator moved or is loading
// (a fenced epoch is final: a newer leader owns the state).
func retriableShareStateError(err error) bool {
	if errors.Is(err, share.ErrFencedLeaderEpoch) || errors.Is(err, share.ErrFencedStateEpoch) ||
		errors.Is(err, kerr.FencedLeaderEpoch) || errors.Is(err, kerr.FencedStateEpoch) || errors.Is(err, kgo.ErrClientClosed) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || ke == kerr.NotCoordinator || ke == kerr.CoordinatorNotAvailable || ke == kerr.CoordinatorLoadInProgress
	}
	return errors.Is(err, partition.ErrNotLeader) || errors.Is(err, errMarkerTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || isNetworkError(err)
}

// isNetworkError: the request did not reach the coordinator or got no
// answer.
func isNetworkError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "EOF")
}

// client returns the state client for broker node at addr.
func (w *shareWiring) client(b *Broker, node int32, addr string) (*kgo.Client, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[node]; ok {
		if c.addr == addr {
			return c.cl, nil
		}
		c.cl.Close()
	}
	cl, err := kgo.NewClient(append(b.interBroker.kgoOpts(b.dialFunc()), kgo.SeedBrokers(addr), kgo.RequestRetries(0))...)
	if err != nil {
		return nil, fmt.Errorf("client for broker %d: %w", node, err)
	}
	w.clients[node] = markerClient{addr: addr, cl: cl}
	return cl, nil
}

// shareStateErrorCode maps a state store error to Kafka's code.
func shareStateErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, share.ErrFencedStateEpoch):
		return kerr.FencedStateEpoch.Code
	case errors.Is(err, share.ErrFencedLeaderEpoch):
		return kerr.FencedLeaderEpoch.Code
	case errors.Is(err, partition.ErrNotLeader):
		return kerr.NotCoordinator.Code
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return errorCode(err)
}

// authorizeGroupConfigs checks op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on
// a GROUP config resource, as Kafka authorizes it on the group.
func (b *Broker) authorizeGroupConfigs(r *request, op kmsg.ACLOperation, name string) *apiError {
	if !b.authorizeGroup(r, op, name) {
		return newAPIError(kerr.GroupAuthorizationFailed, "%s", kerr.GroupAuthorizationFailed.Message)
	}
	return nil
}

// describeGroupConfigs is DescribeConfigs of a GROUP resource: every
// group config, overridden ones as GROUP_CONFIG, the others as the
// broker's value (STATIC_BROKER_CONFIG when server.properties sets the
// backing group.* key) or Kafka's default.
func (b *Broker) describeGroupConfigs(im *metadata.Image, name string) ([]config.Entry, *apiError) {
	if name == "" {
		return nil, newAPIError(kerr.InvalidRequest, "Group name must not be empty")
	}
	keys := make([]string, 0, len(groupConfigKeys))
	for k := range groupConfigKeys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []config.Entry
	for _, k := range keys {
		kk := groupConfigKeys[k]
		e := config.Entry{Name: k, Type: kk.typ, Source: kmsg.ConfigSourceDefaultConfig}
		v := kk.def
		if kk.brokerKey != "" {
			if bv, ok := b.cfg.Value(kk.brokerKey); ok && bv != "" {
				v = bv
				if bv != kk.def {
					e.Source = kmsg.ConfigSourceStaticBrokerConfig
				}
			}
		}
		if gv, ok := im.GroupConfigs[name][k]; ok {
			v, e.Source = gv, kmsg.ConfigSourceGroupConfig
		}
		e.Value = &v
		out = append(out, e)
	}
	return out, nil
}

// alterGroupConfigs validates and stores a GROUP resource's overrides.
func (b *Broker) alterGroupConfigs(name string, configs map[string]string, validateOnly bool) *apiError {
	if name == "" {
		return newAPIError(kerr.InvalidRequest, "Group name must not be empty")
	}
	for k, v := range configs {
		if err := b.validateGroupConfig(k, &v); err != nil {
			return newAPIError(kerr.InvalidConfig, "%s", err)
		}
	}
	if validateOnly {
		return nil
	}
	if err := b.setGroupConfigs(name, configs); err != nil {
		return newAPIError(kerr.UnknownServerError, "%s", err)
	}
	return nil
}

// incrementalAlterGroupConfigs is IncrementalAlterConfigs on a GROUP
// resource (no group config is a LIST, so APPEND and SUBTRACT fail).
func (b *Broker) incrementalAlterGroupConfigs(res *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) *apiError {
	cur := b.meta.Image().GroupConfigs[res.ResourceName]
	for _, c := range res.Configs {
		if _, ok := groupConfigKeys[c.Name]; !ok {
			return newAPIError(kerr.InvalidConfig, "Unknown group config name: %s", c.Name)
		}
	}
	configs, e := applyConfigOps(cur, res.Configs, func(string) (string, bool) { return "", false })
	if e != nil {
		return e
	}
	return b.alterGroupConfigs(res.ResourceName, configs, validateOnly)
}

// shareKey names a share-partition.
func shareKey(group string, topicID [16]byte, p int32) share.Key {
	return share.Key{Group: group, TopicID: topicID, Partition: p}
}

// goShare runs a share handler on its own goroutine (it waits for the
// share coordinator or long-polls), closing the connection if it panics
// as the io goroutines do.
func (b *Broker) goShare(r *request, fn func(*request)) {
	go func() {
		defer func() {
			if p := recover(); p != nil {
				b.log.Error("handler panic; closing connection", "api", kmsg.NameForKey(r.hdr.APIKey), "panic", p)
				r.closeConn()
			}
		}()
		fn(r)
	}()
}

// deleteShareGroup is DeleteGroups for a share group this broker
// coordinates: an empty group (else NON_EMPTY_GROUP) is removed with the
// state of every topic it consumed; GROUP_ID_NOT_FOUND when id is not a
// share group here. The lead's deletegroups.go calls it for ids
// b.shares.coord.HasGroup reports.
func (b *Broker) deleteShareGroup(id string) int16 {
	if len(b.shares.coord.Describe(id).Members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	im := b.meta.Image()
	for _, name := range b.shares.coord.ConsumedTopics(id) {
		t := im.Topics[name]
		if t == nil {
			continue
		}
		for i := range t.Partitions {
			if code := b.deleteShareState(share.Key{Group: id, TopicID: t.ID, Partition: int32(i)}); code != 0 {
				return code
			}
		}
	}
	return b.shares.coord.Delete(id)
}

// isShareGroup reports whether id names a share group this broker
// coordinates: the group id namespace is shared, so classic and consumer
// protocol requests for it are refused.
func (b *Broker) isShareGroup(id string) bool {
	return b.shares != nil && b.shares.coord.HasGroup(id)
}
