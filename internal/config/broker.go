package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/silkworm/silkworm/internal/javafmt"
)

// Broker is the typed configuration of one broker: Kafka's server.properties
// keys with Kafka's names, defaults and bounds. Build it with DefaultBroker,
// Load or NewBroker; a Broker is immutable once built and safe for concurrent
// reads. Dynamic changes build a new Broker with WithDynamic.
//
// Deviations from Kafka, all for a zero-config single node: node.id defaults
// to 1 (Kafka requires it), listeners to PLAINTEXT://127.0.0.1:9092 (Kafka:
// PLAINTEXT://:9092), log.dir to ./silkworm-data (Kafka: /tmp/kafka-logs), and
// an empty process.roles means "broker,controller" (Kafka 3.x: ZooKeeper mode).
type Broker struct {
	NodeID                  int32    // node.id, alias broker.id
	ClusterID               string   // silkworm.cluster.id (Kafka keeps it in meta.properties)
	MetricsListener         string   // silkworm.metrics.listener: host:port, http:// or https://; empty = off
	ConsoleListener         string   // silkworm.console.listener: host:port, http:// or https://; empty = off
	ConsoleBenchDir         string   // silkworm.console.bench.dir: where the console finds silkworm bench runs
	MaxOpenSegmentFiles     int      // silkworm.log.max.open.segment.files
	IndexCacheBytes         int64    // silkworm.log.index.cache.bytes
	BrokerRack              string   // broker.rack
	ReplicaSelectorClass    string   // replica.selector.class: "" (leader only) or RackAwareReplicaSelector
	ProcessRoles            []string // process.roles
	ControllerQuorumVoters  []Voter  // controller.quorum.voters
	ControllerListenerNames []string // controller.listener.names

	Listeners                   []Listener        // listeners
	AdvertisedListeners         []Listener        // advertised.listeners, default listeners
	ListenerSecurityProtocolMap map[string]string // listener.security.protocol.map (names upper-cased)
	InterBrokerListenerName     string            // inter.broker.listener.name, default from security.inter.broker.protocol

	LogDirs                  []string // log.dirs, else log.dir
	NumPartitions            int      // num.partitions
	AutoCreateTopicsEnable   bool     // auto.create.topics.enable
	DefaultReplicationFactor int      // default.replication.factor
	DeleteTopicEnable        bool     // delete.topic.enable

	LogSegmentBytes                    int      // log.segment.bytes
	LogRollMs                          int64    // log.roll.ms, else log.roll.hours
	LogRollJitterMs                    int64    // log.roll.jitter.ms, else log.roll.jitter.hours
	LogRetentionMs                     int64    // log.retention.ms > .minutes > .hours; -1 unlimited
	LogRetentionBytes                  int64    // log.retention.bytes; -1 unlimited
	LogRetentionCheckIntervalMs        int64    // log.retention.check.interval.ms
	LogIndexIntervalBytes              int      // log.index.interval.bytes
	LogIndexSizeMaxBytes               int      // log.index.size.max.bytes
	LogSegmentDeleteDelayMs            int64    // log.segment.delete.delay.ms
	LogFlushIntervalMessages           int64    // log.flush.interval.messages
	LogFlushIntervalMs                 int64    // log.flush.interval.ms, else log.flush.scheduler.interval.ms
	LogFlushSchedulerIntervalMs        int64    // log.flush.scheduler.interval.ms
	LogFlushOffsetCheckpointIntervalMs int      // log.flush.offset.checkpoint.interval.ms
	LogCleanupPolicy                   []string // log.cleanup.policy: delete, compact
	LogMessageTimestampType            string   // log.message.timestamp.type: CreateTime, LogAppendTime
	LogPreallocate                     bool     // log.preallocate
	NumRecoveryThreadsPerDataDir       int      // num.recovery.threads.per.data.dir
	MessageMaxBytes                    int      // message.max.bytes
	CompressionType                    string   // compression.type
	MinInsyncReplicas                  int      // min.insync.replicas

	SocketRequestMaxBytes    int   // socket.request.max.bytes
	SocketSendBufferBytes    int   // socket.send.buffer.bytes; -1 OS default
	SocketReceiveBufferBytes int   // socket.receive.buffer.bytes; -1 OS default
	NumNetworkThreads        int   // num.network.threads
	NumIOThreads             int   // num.io.threads
	QueuedMaxRequests        int   // queued.max.requests
	ConnectionsMaxIdleMs     int64 // connections.max.idle.ms
	RequestTimeoutMs         int   // request.timeout.ms

	OffsetsTopicNumPartitions       int   // offsets.topic.num.partitions
	OffsetsTopicReplicationFactor   int   // offsets.topic.replication.factor (3 as Kafka; a single node caps it)
	OffsetsTopicSegmentBytes        int   // offsets.topic.segment.bytes
	OffsetsRetentionMinutes         int   // offsets.retention.minutes
	OffsetsRetentionCheckIntervalMs int64 // offsets.retention.check.interval.ms
	OffsetMetadataMaxBytes          int   // offset.metadata.max.bytes
	GroupInitialRebalanceDelayMs    int   // group.initial.rebalance.delay.ms
	GroupMinSessionTimeoutMs        int   // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs        int   // group.max.session.timeout.ms
	GroupMaxSize                    int   // group.max.size

	// KIP-848 consumer groups (ConsumerGroupHeartbeat).
	GroupConsumerAssignors              []string // group.consumer.assignors: uniform, range (or Kafka's class names); the first is the default
	GroupConsumerSessionTimeoutMs       int      // group.consumer.session.timeout.ms
	GroupConsumerMinSessionTimeoutMs    int      // group.consumer.min.session.timeout.ms
	GroupConsumerMaxSessionTimeoutMs    int      // group.consumer.max.session.timeout.ms
	GroupConsumerHeartbeatIntervalMs    int      // group.consumer.heartbeat.interval.ms
	GroupConsumerMinHeartbeatIntervalMs int      // group.consumer.min.heartbeat.interval.ms
	GroupConsumerMaxHeartbeatIntervalMs int      // group.consumer.max.heartbeat.interval.ms
	GroupConsumerMaxSize                int      // group.consumer.max.size
	GroupConsumerMigrationPolicy        string   // group.consumer.migration.policy: disabled, downgrade, upgrade, bidirectional
	GroupCoordinatorRebalanceProtocols  []string // group.coordinator.rebalance.protocols

	TransactionStateLogNumPartitions     int // transaction.state.log.num.partitions
	TransactionStateLogReplicationFactor int // transaction.state.log.replication.factor
	TransactionStateLogMinISR            int // transaction.state.log.min.isr
	TransactionStateLogSegmentBytes      int // transaction.state.log.segment.bytes
	TransactionMaxTimeoutMs              int // transaction.max.timeout.ms
	TransactionalIDExpirationMs          int // transactional.id.expiration.ms
	ProducerIDExpirationMs               int // producer.id.expiration.ms

	ReplicaFetchMaxBytes         int   // replica.fetch.max.bytes
	ReplicaFetchWaitMaxMs        int   // replica.fetch.wait.max.ms
	ReplicaFetchMinBytes         int   // replica.fetch.min.bytes
	ReplicaFetchResponseMaxBytes int   // replica.fetch.response.max.bytes
	ReplicaFetchBackoffMs        int   // replica.fetch.backoff.ms
	ReplicaLagTimeMaxMs          int64 // replica.lag.time.max.ms
	ReplicaSocketTimeoutMs       int   // replica.socket.timeout.ms
	NumReplicaFetchers           int   // num.replica.fetchers
	UncleanLeaderElectionEnable  bool  // unclean.leader.election.enable
	AutoLeaderRebalanceEnable    bool  // auto.leader.rebalance.enable
	BrokerSessionTimeoutMs       int   // broker.session.timeout.ms
	BrokerHeartbeatIntervalMs    int   // broker.heartbeat.interval.ms

	FetchMaxBytes                        int // fetch.max.bytes
	MaxIncrementalFetchSessionCacheSlots int // max.incremental.fetch.session.cache.slots

	// Ignored lists the keys that were set and that Kafka knows but Silkworm
	// does not implement yet, sorted. The caller logs each once:
	// "config X is not supported yet; ignored".
	Ignored []string

	// values holds every key set by the file, --override or dynamically, as
	// trimmed strings, after precedence (dynamic broker > dynamic default >
	// static).
	values         map[string]string
	static         map[string]string
	dynamicDefault map[string]string
	dynamicBroker  map[string]string
}

// field binds a simple typed Broker field to its key.
type field struct {
	key string
	ptr func(b *Broker) any
}

var brokerFields = []field{
	{"num.partitions", func(b *Broker) any { return &b.NumPartitions }},
	{"auto.create.topics.enable", func(b *Broker) any { return &b.AutoCreateTopicsEnable }},
	{"default.replication.factor", func(b *Broker) any { return &b.DefaultReplicationFactor }},
	{"delete.topic.enable", func(b *Broker) any { return &b.DeleteTopicEnable }},
	{"log.segment.bytes", func(b *Broker) any { return &b.LogSegmentBytes }},
	{"log.retention.bytes", func(b *Broker) any { return &b.LogRetentionBytes }},
	{"log.retention.check.interval.ms", func(b *Broker) any { return &b.LogRetentionCheckIntervalMs }},
	{"log.index.interval.bytes", func(b *Broker) any { return &b.LogIndexIntervalBytes }},
	{"log.index.size.max.bytes", func(b *Broker) any { return &b.LogIndexSizeMaxBytes }},
	{"log.segment.delete.delay.ms", func(b *Broker) any { return &b.LogSegmentDeleteDelayMs }},
	{"log.flush.interval.messages", func(b *Broker) any { return &b.LogFlushIntervalMessages }},
	{"log.flush.scheduler.interval.ms", func(b *Broker) any { return &b.LogFlushSchedulerIntervalMs }},
	{"log.flush.offset.checkpoint.interval.ms", func(b *Broker) any { return &b.LogFlushOffsetCheckpointIntervalMs }},
	{"log.cleanup.policy", func(b *Broker) any { return &b.LogCleanupPolicy }},
	{"log.message.timestamp.type", func(b *Broker) any { return &b.LogMessageTimestampType }},
	{"log.preallocate", func(b *Broker) any { return &b.LogPreallocate }},
	{"num.recovery.threads.per.data.dir", func(b *Broker) any { return &b.NumRecoveryThreadsPerDataDir }},
	{"message.max.bytes", func(b *Broker) any { return &b.MessageMaxBytes }},
	{"compression.type", func(b *Broker) any { return &b.CompressionType }},
	{"min.insync.replicas", func(b *Broker) any { return &b.MinInsyncReplicas }},
	{"socket.request.max.bytes", func(b *Broker) any { return &b.SocketRequestMaxBytes }},
	{"socket.send.buffer.bytes", func(b *Broker) any { return &b.SocketSendBufferBytes }},
	{"socket.receive.buffer.bytes", func(b *Broker) any { return &b.SocketReceiveBufferBytes }},
	{"num.network.threads", func(b *Broker) any { return &b.NumNetworkThreads }},
	{"num.io.threads", func(b *Broker) any { return &b.NumIOThreads }},
	{"queued.max.requests", func(b *Broker) any { return &b.QueuedMaxRequests }},
	{"connections.max.idle.ms", func(b *Broker) any { return &b.ConnectionsMaxIdleMs }},
	{"request.timeout.ms", func(b *Broker) any { return &b.RequestTimeoutMs }},
	{"offsets.topic.num.partitions", func(b *Broker) any { return &b.OffsetsTopicNumPartitions }},
	{"offsets.topic.replication.factor", func(b *Broker) any { return &b.OffsetsTopicReplicationFactor }},
	{"offsets.topic.segment.bytes", func(b *Broker) any { return &b.OffsetsTopicSegmentBytes }},
	{"offsets.retention.minutes", func(b *Broker) any { return &b.OffsetsRetentionMinutes }},
	{"offsets.retention.check.interval.ms", func(b *Broker) any { return &b.OffsetsRetentionCheckIntervalMs }},
	{"offset.metadata.max.bytes", func(b *Broker) any { return &b.OffsetMetadataMaxBytes }},
	{"group.initial.rebalance.delay.ms", func(b *Broker) any { return &b.GroupInitialRebalanceDelayMs }},
	{"group.min.session.timeout.ms", func(b *Broker) any { return &b.GroupMinSessionTimeoutMs }},
	{"group.max.session.timeout.ms", func(b *Broker) any { return &b.GroupMaxSessionTimeoutMs }},
	{"group.max.size", func(b *Broker) any { return &b.GroupMaxSize }},
	{"group.consumer.assignors", func(b *Broker) any { return &b.GroupConsumerAssignors }},
	{"group.consumer.session.timeout.ms", func(b *Broker) any { return &b.GroupConsumerSessionTimeoutMs }},
	{"group.consumer.min.session.timeout.ms", func(b *Broker) any { return &b.GroupConsumerMinSessionTimeoutMs }},
	{"group.consumer.max.session.timeout.ms", func(b *Broker) any { return &b.GroupConsumerMaxSessionTimeoutMs }},
	{"group.consumer.heartbeat.interval.ms", func(b *Broker) any { return &b.GroupConsumerHeartbeatIntervalMs }},
	{"group.consumer.min.heartbeat.interval.ms", func(b *Broker) any { return &b.GroupConsumerMinHeartbeatIntervalMs }},
	{"group.consumer.max.heartbeat.interval.ms", func(b *Broker) any { return &b.GroupConsumerMaxHeartbeatIntervalMs }},
	{"group.consumer.max.size", func(b *Broker) any { return &b.GroupConsumerMaxSize }},
	{"group.consumer.migration.policy", func(b *Broker) any { return &b.GroupConsumerMigrationPolicy }},
	{"group.coordinator.rebalance.protocols", func(b *Broker) any { return &b.GroupCoordinatorRebalanceProtocols }},
	{"transaction.state.log.num.partitions", func(b *Broker) any { return &b.TransactionStateLogNumPartitions }},
	{"transaction.state.log.replication.factor", func(b *Broker) any { return &b.TransactionStateLogReplicationFactor }},
	{"transaction.state.log.min.isr", func(b *Broker) any { return &b.TransactionStateLogMinISR }},
	{"transaction.state.log.segment.bytes", func(b *Broker) any { return &b.TransactionStateLogSegmentBytes }},
	{"transaction.max.timeout.ms", func(b *Broker) any { return &b.TransactionMaxTimeoutMs }},
	{"transactional.id.expiration.ms", func(b *Broker) any { return &b.TransactionalIDExpirationMs }},
	{"producer.id.expiration.ms", func(b *Broker) any { return &b.ProducerIDExpirationMs }},
	{"replica.fetch.max.bytes", func(b *Broker) any { return &b.ReplicaFetchMaxBytes }},
	{"replica.fetch.wait.max.ms", func(b *Broker) any { return &b.ReplicaFetchWaitMaxMs }},
	{"replica.fetch.min.bytes", func(b *Broker) any { return &b.ReplicaFetchMinBytes }},
	{"replica.fetch.response.max.bytes", func(b *Broker) any { return &b.ReplicaFetchResponseMaxBytes }},
	{"replica.fetch.backoff.ms", func(b *Broker) any { return &b.ReplicaFetchBackoffMs }},
	{"replica.lag.time.max.ms", func(b *Broker) any { return &b.ReplicaLagTimeMaxMs }},
	{"replica.socket.timeout.ms", func(b *Broker) any { return &b.ReplicaSocketTimeoutMs }},
	{"num.replica.fetchers", func(b *Broker) any { return &b.NumReplicaFetchers }},
	{"unclean.leader.election.enable", func(b *Broker) any { return &b.UncleanLeaderElectionEnable }},
	{"auto.leader.rebalance.enable", func(b *Broker) any { return &b.AutoLeaderRebalanceEnable }},
	{"broker.session.timeout.ms", func(b *Broker) any { return &b.BrokerSessionTimeoutMs }},
	{"broker.heartbeat.interval.ms", func(b *Broker) any { return &b.BrokerHeartbeatIntervalMs }},
	{"fetch.max.bytes", func(b *Broker) any { return &b.FetchMaxBytes }},
	{"max.incremental.fetch.session.cache.slots", func(b *Broker) any { return &b.MaxIncrementalFetchSessionCacheSlots }},
	{"broker.rack", func(b *Broker) any { return &b.BrokerRack }},
	{"replica.selector.class", func(b *Broker) any { return &b.ReplicaSelectorClass }},
	{"silkworm.cluster.id", func(b *Broker) any { return &b.ClusterID }},
	{"silkworm.metrics.listener", func(b *Broker) any { return &b.MetricsListener }},
	{"silkworm.console.listener", func(b *Broker) any { return &b.ConsoleListener }},
	{"silkworm.console.bench.dir", func(b *Broker) any { return &b.ConsoleBenchDir }},
	{"silkworm.log.max.open.segment.files", func(b *Broker) any { return &b.MaxOpenSegmentFiles }},
	{"silkworm.log.index.cache.bytes", func(b *Broker) any { return &b.IndexCacheBytes }},
	{"controller.listener.names", func(b *Broker) any { return &b.ControllerListenerNames }},
}

// compositeKeys are implemented by hand in build.
var compositeKeys = []string{
	"node.id", "broker.id", "process.roles", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
	"listeners", "advertised.listeners", "listener.security.protocol.map",
	"inter.broker.listener.name", "security.inter.broker.protocol",
	"log.dirs", "log.dir",
	"log.roll.ms", "log.roll.hours", "log.roll.jitter.ms", "log.roll.jitter.hours",
	"log.retention.ms", "log.retention.minutes", "log.retention.hours",
	"log.flush.interval.ms",
}

// supportedBrokerKeys are the keys Silkworm implements: bound fields,
// composite keys, and broker keys that only supply topic defaults.
var supportedBrokerKeys = func() map[string]bool {
	m := make(map[string]bool)
	for _, f := range brokerFields {
		m[f.key] = true
	}
	for _, k := range compositeKeys {
		m[k] = true
	}
	for _, tk := range TopicKeys {
		for _, s := range tk.Synonyms {
			m[s] = true
		}
	}
	// Keys read by name (Broker.Value) where they are used.
	for _, k := range []string{"log.cleaner.enable", "log.cleaner.threads", "log.cleaner.backoff.ms",
		"log.cleaner.dedupe.buffer.size", "replica.socket.receive.buffer.bytes", "metadata.log.dir",
		"leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage",
		"controller.quorum.election.timeout.ms", "offsets.commit.timeout.ms",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms", "transaction.partition.verification.enable",
		"share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr",
		"share.coordinator.state.topic.num.partitions", "share.coordinator.state.topic.segment.bytes",
		"group.share.max.share.sessions", "group.share.max.size"} {
		m[k] = true
	}
	// The share-group settings that give a GROUP config its default and
	// bounds (broker/shares.go, groupConfigKeys).
	for _, k := range []string{"session.timeout.ms", "heartbeat.interval.ms", "record.lock.duration.ms",
		"delivery.count.limit", "partition.max.record.locks"} {
		m["group.share."+k] = true
		m["group.share.min."+k] = true
		m["group.share.max."+k] = true
	}
	for _, k := range securityKeys {
		m[k] = true
	}
	return m
}()

// DefaultBroker returns the configuration of a broker started with no file
// and no overrides.
func DefaultBroker() *Broker {
	b, err := NewBroker(nil)
	if err != nil {
		panic(fmt.Sprintf("config: defaults do not validate: %v", err))
	}
	return b
}

// Load reads the server.properties file at path (none if path is ""),
// applies overrides ("key=value", as given to --override; a later one wins),
// and validates the result. The error joins every problem found, so a user
// sees all mistakes at once.
func Load(path string, overrides []string) (*Broker, error) {
	props := map[string]string{}
	if path != "" {
		p, err := LoadPropertiesFile(path)
		if err != nil {
			return nil, err
		}
		props = p
	}
	var errs []error
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("invalid --override %q: must be key=value", o))
			continue
		}
		props[k] = v
	}
	b, err := NewBroker(props)
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = append(errs, joined.Unwrap()...)
	} else if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// NewBroker builds and validates a Broker from static properties (the
// server.properties content with overrides applied).
func NewBroker(props map[string]string) (*Broker, error) {
	return build(props, nil, nil)
}

// WithDynamic returns a new Broker with dynamic broker configs applied on top
// of b's static ones: perBroker (DYNAMIC_BROKER_CONFIG) wins over
// clusterDefault (DYNAMIC_DEFAULT_BROKER_CONFIG), which wins over static.
// Every key must be dynamically updatable (see ValidateBrokerDynamic).
func (b *Broker) WithDynamic(perBroker, clusterDefault map[string]string) (*Broker, error) {
	var errs []error
	for _, m := range []map[string]string{clusterDefault, perBroker} {
		for _, k := range sortedKeys(m) {
			if err := ValidateBrokerDynamic(k, m[k]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return build(b.static, clusterDefault, perBroker)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// build checks every key and value, fills the typed fields and runs the
// cross-key checks. All errors are collected.
func build(static, dynDefault, dynBroker map[string]string) (*Broker, error) {
	b := &Broker{
		values:         map[string]string{},
		static:         map[string]string{},
		dynamicDefault: map[string]string{},
		dynamicBroker:  map[string]string{},
	}
	var errs []error
	ignored := map[string]bool{}
	layers := []struct {
		in      map[string]string
		out     map[string]string
		dynamic bool
	}{{static, b.static, false}, {dynDefault, b.dynamicDefault, true}, {dynBroker, b.dynamicBroker, true}}
	for _, l := range layers {
		for _, key := range sortedKeys(l.in) {
			raw := l.in[key]
			k, ok := brokerKeyIndex[key]
			if !ok {
				if _, lk, supported := splitListenerKey(key); supported {
					// A per-listener override of a key Silkworm
					// implements: validated as that key.
					v := strings.TrimSpace(raw)
					if k, ok := brokerKeyIndex[lk]; ok {
						var err error
						if v, err = checkValue(k, raw); err != nil {
							errs = append(errs, fmt.Errorf("%s: %w", key, err))
							continue
						}
					}
					l.out[key] = v
					b.values[key] = v
					continue
				}
				// Kafka stores a dynamic config it does not know
				// (AlterConfigs accepts any name that is not a
				// read-only broker config) and ignores it.
				if hasKnownPrefix(key) || l.dynamic {
					ignored[key] = true
					l.out[key] = strings.TrimSpace(raw)
					b.values[key] = l.out[key]
					continue
				}
				errs = append(errs, fmt.Errorf("unknown configuration %q: not a Kafka or Silkworm broker config", key))
				continue
			}
			v, err := checkValue(k, raw)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !supportedBrokerKeys[key] {
				ignored[key] = true
			}
			l.out[key] = v
			b.values[key] = v
		}
	}
	for k := range ignored {
		b.Ignored = append(b.Ignored, k)
	}
	sort.Strings(b.Ignored)

	for _, f := range brokerFields {
		setField(f.ptr(b), b.value(f.key))
	}
	errs = append(errs, b.buildComposite()...)
	if len(errs) == 0 {
		errs = append(errs, b.validateCross()...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// value is the effective string of a key: set value, else default, else "".
func (b *Broker) value(key string) string {
	if v, ok := b.values[key]; ok {
		return v
	}
	if k, ok := brokerKeyIndex[key]; ok {
		if d := k.defaultValue(); d != nil {
			return *d
		}
	}
	return ""
}

// isSet reports whether key was given in any layer.
func (b *Broker) isSet(key string) bool {
	_, ok := b.values[key]
	return ok
}

// Value returns the effective value of any broker key as a string (set
// value, else Silkworm's default) and whether the key has a value at all
// (false for null defaults such as log.retention.ms). Passwords are returned
// as set; callers must not log them.
func (b *Broker) Value(key string) (string, bool) {
	if v, ok := b.values[key]; ok {
		return v, true
	}
	if k, ok := brokerKeyIndex[key]; ok {
		if d := k.defaultValue(); d != nil {
			return *d, true
		}
	}
	return "", false
}

// setField stores an already validated string into a typed field.
func setField(p any, v string) {
	switch p := p.(type) {
	case *int:
		n, _ := strconv.ParseInt(v, 10, 64)
		*p = int(n)
	case *int64:
		*p, _ = strconv.ParseInt(v, 10, 64)
	case *bool:
		*p = strings.EqualFold(v, "true")
	case *float64:
		*p, _ = strconv.ParseFloat(v, 64)
	case *string:
		*p = v
	case *[]string:
		*p = SplitList(v)
	default:
		panic(fmt.Sprintf("config: unsupported field type %T", p))
	}
}

func formatField(p any) string {
	switch p := p.(type) {
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *bool:
		return strconv.FormatBool(*p)
	case *float64:
		return javafmt.Double(*p)
	case *string:
		return *p
	case *[]string:
		return strings.Join(*p, ",")
	default:
		panic(fmt.Sprintf("config: unsupported field type %T", p))
	}
}

const (
	msPerMinute = 60 * 1000
	msPerHour   = 60 * msPerMinute
)

func (b *Broker) buildComposite() []error {
	var errs []error
	intOf := func(key string) int64 {
		n, _ := strconv.ParseInt(b.value(key), 10, 64)
		return n
	}

	// node.id and its alias broker.id.
	switch {
	case b.isSet("node.id") && b.isSet("broker.id") && intOf("node.id") != intOf("broker.id"):
		errs = append(errs, fmt.Errorf("invalid configuration: node.id (%s) and broker.id (%s) must be the same", b.value("node.id"), b.value("broker.id")))
	case b.isSet("node.id"):
		b.NodeID = int32(intOf("node.id"))
	case b.isSet("broker.id"):
		b.NodeID = int32(intOf("broker.id"))
	default:
		b.NodeID = int32(intOf("node.id"))
	}
	if b.NodeID < 0 {
		errs = append(errs, invalidValue("node.id", strconv.Itoa(int(b.NodeID)), "must be an integer >= 0"))
	}

	b.ProcessRoles = SplitList(b.value("process.roles"))
	if len(b.ProcessRoles) == 0 {
		b.ProcessRoles = []string{"broker", "controller"}
	}
	seen := map[string]bool{}
	for _, r := range b.ProcessRoles {
		if seen[r] {
			errs = append(errs, invalidValue("process.roles", b.value("process.roles"), "roles must not repeat"))
		}
		seen[r] = true
	}

	var err error
	if b.ControllerQuorumVoters, err = ParseVoters("controller.quorum.voters", b.value("controller.quorum.voters")); err != nil {
		errs = append(errs, err)
	}

	// Security protocol map; in KRaft with the default map, controller
	// listeners get PLAINTEXT unless SSL/SASL is in use (as Kafka does).
	if b.ListenerSecurityProtocolMap, err = parseProtocolMap("listener.security.protocol.map", b.value("listener.security.protocol.map")); err != nil {
		errs = append(errs, err)
		b.ListenerSecurityProtocolMap = map[string]string{}
	}
	for i, n := range b.ControllerListenerNames {
		b.ControllerListenerNames[i] = strings.ToUpper(n)
	}
	if !b.isSet("listener.security.protocol.map") {
		for _, n := range b.ControllerListenerNames {
			if _, ok := b.ListenerSecurityProtocolMap[n]; !ok {
				b.ListenerSecurityProtocolMap[n] = ProtocolPlaintext
			}
		}
	}

	if b.Listeners, err = ParseListeners("listeners", b.value("listeners")); err != nil {
		errs = append(errs, err)
	}
	if b.isSet("advertised.listeners") {
		if b.AdvertisedListeners, err = ParseListeners("advertised.listeners", b.value("advertised.listeners")); err != nil {
			errs = append(errs, err)
		}
	} else {
		b.AdvertisedListeners = append([]Listener(nil), b.Listeners...)
	}
	for _, ls := range [][]Listener{b.Listeners, b.AdvertisedListeners} {
		for i := range ls {
			ls[i].SecurityProtocol = b.ListenerSecurityProtocolMap[ls[i].Name]
		}
	}

	b.InterBrokerListenerName = strings.ToUpper(b.value("inter.broker.listener.name"))
	if b.isSet("inter.broker.listener.name") && b.isSet("security.inter.broker.protocol") {
		errs = append(errs, errors.New("invalid configuration: only one of inter.broker.listener.name and security.inter.broker.protocol should be set"))
	}
	if b.InterBrokerListenerName == "" {
		b.InterBrokerListenerName = b.value("security.inter.broker.protocol")
	}

	if b.isSet("log.dirs") {
		b.LogDirs = SplitList(b.value("log.dirs"))
	} else {
		b.LogDirs = SplitList(b.value("log.dir"))
	}
	if len(b.LogDirs) == 0 {
		errs = append(errs, errors.New("invalid configuration: at least one log directory must be defined via log.dirs or log.dir"))
	}

	if b.isSet("log.roll.ms") {
		b.LogRollMs = intOf("log.roll.ms")
	} else {
		b.LogRollMs = intOf("log.roll.hours") * msPerHour
	}
	if b.isSet("log.roll.jitter.ms") {
		b.LogRollJitterMs = intOf("log.roll.jitter.ms")
	} else {
		b.LogRollJitterMs = intOf("log.roll.jitter.hours") * msPerHour
	}
	switch {
	case b.isSet("log.retention.ms"):
		b.LogRetentionMs = intOf("log.retention.ms")
	case b.isSet("log.retention.minutes"):
		b.LogRetentionMs = intOf("log.retention.minutes") * msPerMinute
	default:
		b.LogRetentionMs = intOf("log.retention.hours") * msPerHour
	}
	if b.LogRetentionMs < 0 {
		b.LogRetentionMs = -1 // any negative value means unlimited, as in Kafka
	}
	if b.isSet("log.flush.interval.ms") {
		b.LogFlushIntervalMs = intOf("log.flush.interval.ms")
	} else {
		b.LogFlushIntervalMs = b.LogFlushSchedulerIntervalMs
	}
	return errs
}

// Validate checks every typed field against Kafka's bounds and the keys
// against each other. Load and NewBroker already call it; call it again
// after changing fields by hand (tests, embedded clusters).
func (b *Broker) Validate() error {
	var errs []error
	for _, f := range brokerFields {
		k := brokerKeyIndex[f.key]
		if err := checkTyped(k.name, k.typ, k.valid, formatField(f.ptr(b))); err != nil {
			errs = append(errs, err)
		}
	}
	if b.NodeID < 0 {
		errs = append(errs, invalidValue("node.id", strconv.Itoa(int(b.NodeID)), "must be an integer >= 0"))
	}
	errs = append(errs, b.validateCross()...)
	return errors.Join(errs...)
}

// validateCross holds Kafka's checks that involve more than one key
// (KafkaConfig.validateValues), for the modes Silkworm runs in.
func (b *Broker) validateCross() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	if b.LogRollMs < 1 {
		fail("log.roll.ms must be greater than or equal to 1")
	}
	if b.LogRollJitterMs < 0 {
		fail("log.roll.jitter.ms must be greater than or equal to 0")
	}
	if b.LogRetentionMs < 1 && b.LogRetentionMs != -1 {
		fail("log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
	}
	if len(b.LogDirs) == 0 {
		fail("at least one log directory must be defined via log.dirs or log.dir")
	}
	if b.ReplicaFetchWaitMaxMs > b.ReplicaSocketTimeoutMs {
		fail("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts")
	}
	if int64(b.ReplicaFetchWaitMaxMs) > b.ReplicaLagTimeMaxMs {
		fail("replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR")
	}
	if b.GroupMinSessionTimeoutMs > b.GroupMaxSessionTimeoutMs {
		fail("group.min.session.timeout.ms (%d) must not exceed group.max.session.timeout.ms (%d)", b.GroupMinSessionTimeoutMs, b.GroupMaxSessionTimeoutMs)
	}
	errs = append(errs, b.validateGroupConsumer()...)
	if err := b.validateReplicaSelector(); err != nil {
		errs = append(errs, err)
	}
	for _, r := range b.ProcessRoles {
		if r != "broker" && r != "controller" {
			fail("unknown process role %q in process.roles: must be broker or controller", r)
		}
	}

	// Listeners: unique names, distinct non-zero ports (Kafka lets an IPv4 and
	// an IPv6 listener share a port), a security protocol for every name.
	names := map[string]bool{}
	ports := map[int][]Listener{}
	for _, l := range b.Listeners {
		if names[l.Name] {
			fail("each listener must have a different name, listeners: %s", listenersString(b.Listeners))
		}
		names[l.Name] = true
		if l.Port != 0 {
			ports[l.Port] = append(ports[l.Port], l)
		}
	}
	for port, ls := range ports {
		if len(ls) > 1 && !(len(ls) == 2 && oneIPv4OneIPv6(ls[0].Host, ls[1].Host)) {
			fail("each listener must have a different port, listeners: %s (port %d)", listenersString(b.Listeners), port)
		}
	}
	for _, ls := range [][]Listener{b.Listeners, b.AdvertisedListeners} {
		for _, l := range ls {
			if l.SecurityProtocol == "" {
				fail("listener %s has no security protocol: add %s to listener.security.protocol.map", l.Name, l.Name)
			}
		}
	}
	adv := map[string]bool{}
	for _, l := range b.BrokerAdvertisedListeners() {
		adv[l.Name] = true
		if !names[l.Name] {
			fail("advertised.listeners listener names must be equal to or a subset of the ones defined in listeners; %s is not in listeners", l.Name)
		}
		if l.Host == "0.0.0.0" {
			fail("advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
		}
	}
	isBroker := contains(b.ProcessRoles, "broker")
	isController := contains(b.ProcessRoles, "controller")
	if isBroker {
		if len(adv) == 0 {
			fail("there must be at least one broker advertised listener; perhaps all listeners appear in controller.listener.names?")
		} else if !adv[b.InterBrokerListenerName] {
			fail("inter.broker.listener.name must be a listener name defined in advertised.listeners; %q is not", b.InterBrokerListenerName)
		}
	}
	for _, n := range b.ControllerListenerNames {
		if _, ok := b.ListenerSecurityProtocolMap[n]; !ok {
			fail("controller listener with name %s defined in controller.listener.names not found in listener.security.protocol.map", n)
		}
		if isController && !names[n] {
			fail("controller.listener.names must only contain values appearing in the listeners configuration when running the KRaft controller role; %s is not", n)
		}
	}
	if isController && len(b.ControllerQuorumVoters) > 0 {
		found := false
		for _, v := range b.ControllerQuorumVoters {
			found = found || v.ID == b.NodeID
		}
		if !found {
			fail("if process.roles contains the 'controller' role, the node id %d must be included in the set of voters controller.quorum.voters", b.NodeID)
		}
	}
	return errs
}

func listenersString(ls []Listener) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ",")
}

func oneIPv4OneIPv6(a, b string) bool {
	isV4 := func(h string) bool { return strings.Count(h, ".") == 3 && !strings.Contains(h, ":") }
	isV6 := func(h string) bool { return strings.Contains(h, ":") }
	return (isV4(a) && isV6(b)) || (isV6(a) && isV4(b))
}

// BrokerAdvertisedListeners are the advertised listeners clients see:
// AdvertisedListeners without the controller listeners (Kafka's
// effectiveAdvertisedBrokerListeners).
func (b *Broker) BrokerAdvertisedListeners() []Listener {
	var out []Listener
	for _, l := range b.AdvertisedListeners {
		if !contains(b.ControllerListenerNames, l.Name) {
			out = append(out, l)
		}
	}
	return out
}

// RackAwareReplicaSelector is Kafka's replica selector that sends a
// consumer to an in-sync replica in its own rack (KIP-392), the one value
// of replica.selector.class Silkworm implements.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// validateReplicaSelector checks replica.selector.class: Kafka loads the
// class and fails to start when it is missing; Silkworm knows Kafka's two
// selectors (LeaderSelector is the same as none).
func (b *Broker) validateReplicaSelector() error {
	switch b.ReplicaSelectorClass {
	case "", RackAwareReplicaSelector:
		return nil
	case "org.apache.kafka.common.replica.LeaderSelector":
		b.ReplicaSelectorClass = ""
		return nil
	}
	return fmt.Errorf("invalid configuration: replica.selector.class: class %q is not available; Silkworm implements %s and org.apache.kafka.common.replica.LeaderSelector",
		b.ReplicaSelectorClass, RackAwareReplicaSelector)
}

// validateGroupConsumer is Kafka's GroupCoordinatorConfig checks of the
// group.consumer.* keys: the session timeout and heartbeat interval within
// their bounds, the interval below the session timeout, known assignors,
// migration policy and rebalance protocols.
func (b *Broker) validateGroupConsumer() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	within := func(key string, v, lo, hi int, loKey, hiKey string) {
		if v < lo {
			fail("%s must be greater than or equal to %s", key, loKey)
		}
		if v > hi {
			fail("%s must be less than or equal to %s", key, hiKey)
		}
	}
	within("group.consumer.session.timeout.ms", b.GroupConsumerSessionTimeoutMs, b.GroupConsumerMinSessionTimeoutMs,
		b.GroupConsumerMaxSessionTimeoutMs, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms")
	within("group.consumer.heartbeat.interval.ms", b.GroupConsumerHeartbeatIntervalMs, b.GroupConsumerMinHeartbeatIntervalMs,
		b.GroupConsumerMaxHeartbeatIntervalMs, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms")
	if b.GroupConsumerHeartbeatIntervalMs >= b.GroupConsumerSessionTimeoutMs {
		fail("group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")
	}
	if len(b.GroupConsumerAssignors) == 0 {
		fail("group.consumer.assignors must contain at least one assignor")
	}
	for _, a := range b.GroupConsumerAssignors {
		if ConsumerAssignorName(a) == "" {
			fail("group.consumer.assignors: unknown assignor %q (uniform, range, or Kafka's UniformAssignor/RangeAssignor class names)", a)
		}
	}
	switch strings.ToLower(b.GroupConsumerMigrationPolicy) {
	case "disabled", "downgrade", "upgrade", "bidirectional":
	default:
		fail("group.consumer.migration.policy must be one of disabled, downgrade, upgrade, bidirectional, got %q", b.GroupConsumerMigrationPolicy)
	}
	hasClassic := false
	for _, p := range b.GroupCoordinatorRebalanceProtocols {
		switch strings.ToLower(p) {
		case "classic":
			hasClassic = true
		case "consumer", "share", "streams":
		default:
			fail("group.coordinator.rebalance.protocols: unknown protocol %q", p)
		}
	}
	if !hasClassic {
		fail("group.coordinator.rebalance.protocols must contain classic")
	}
	return errs
}

// ConsumerAssignorName maps an entry of group.consumer.assignors to the
// assignor's name as ConsumerGroupHeartbeat's ServerAssignor names it
// ("uniform", "range"), or "" for an assignor Silkworm does not have.
func ConsumerAssignorName(entry string) string {
	switch strings.TrimSpace(entry) {
	case "uniform", "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
		return "uniform"
	case "range", "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
		return "range"
	}
	return ""
}

// ConsumerProtocolEnabled reports whether group.coordinator.rebalance.protocols
// lists consumer (KIP-848 groups served).
func (b *Broker) ConsumerProtocolEnabled() bool {
	for _, p := range b.GroupCoordinatorRebalanceProtocols {
		if strings.EqualFold(p, "consumer") {
			return true
		}
	}
	return false
}
