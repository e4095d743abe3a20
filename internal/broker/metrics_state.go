package broker

// stateCollector computes, at scrape time, every metric that describes
// the broker's state rather than counting events: BrokerTopicMetrics from
// their atomics, ReplicaManager and Log per partition, the controller and
// Raft view, groups and consumer lag, connections, log dirs and the idle
// ratios. Nothing here costs anything between scrapes.

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/silkworm/silkworm/internal/metadata"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// topicCounter is one BrokerTopicMetrics family: Kafka has a MBean per
// topic and one for all topics, so the family has series with and
// without the topic label.
type topicCounter struct {
	all, perTopic *prometheus.Desc
	get           func(*topicMetrics) int64
}

func newTopicCounter(name, help string, get func(*topicMetrics) int64) topicCounter {
	full := "kafka_server_brokertopicmetrics_" + name + "_total"
	return topicCounter{all: desc(full, help), perTopic: desc(full, help, "topic"), get: get}
}

var (
	topicCounters = []topicCounter{
		newTopicCounter("messagesin", "Records appended by producers (MessagesInPerSec).",
			func(t *topicMetrics) int64 { return t.messagesIn.Load() }),
		newTopicCounter("bytesin", "Record batch bytes appended by producers (BytesInPerSec).",
			func(t *topicMetrics) int64 { return t.bytesIn.Load() }),
		newTopicCounter("bytesout", "Record bytes sent to consumers (BytesOutPerSec; followers are ReplicationBytesOutPerSec).",
			func(t *topicMetrics) int64 { return t.bytesOut.Load() }),
		newTopicCounter("bytesrejected", "Batch bytes refused as too large (BytesRejectedPerSec).",
			func(t *topicMetrics) int64 { return t.bytesRejected.Load() }),
		newTopicCounter("failedproducerequests", "Produce partitions that failed unexpectedly (FailedProduceRequestsPerSec).",
			func(t *topicMetrics) int64 { return t.failedProduce.Load() }),
		newTopicCounter("failedfetchrequests", "Fetch partitions that failed unexpectedly (FailedFetchRequestsPerSec).",
			func(t *topicMetrics) int64 { return t.failedFetch.Load() }),
		newTopicCounter("totalproducerequests", "Produce partitions handled (TotalProduceRequestsPerSec).",
			func(t *topicMetrics) int64 { return t.totalProduce.Load() }),
		newTopicCounter("totalfetchrequests", "Fetch partitions handled, followers' included (TotalFetchRequestsPerSec).",
			func(t *topicMetrics) int64 { return t.totalFetch.Load() }),
	}
	replicationBytesOutDesc = desc("kafka_server_brokertopicmetrics_replicationbytesout_total",
		"Record bytes sent to follower replicas (ReplicationBytesOutPerSec).")

	underReplicatedDesc = desc("kafka_server_replicamanager_underreplicatedpartitions",
		"Partitions this broker leads whose ISR is smaller than their replica set.")
	underMinISRDesc = desc("kafka_server_replicamanager_underminisrpartitioncount",
		"Partitions this broker leads whose ISR is below min.insync.replicas.")
	atMinISRDesc = desc("kafka_server_replicamanager_atminisrpartitioncount",
		"Partitions this broker leads whose ISR is exactly min.insync.replicas.")
	offlineReplicaDesc = desc("kafka_server_replicamanager_offlinereplicacount",
		"Local replicas whose log dir is offline.")
	partitionCountDesc = desc("kafka_server_replicamanager_partitioncount", "Local partition replicas.")
	leaderCountDesc    = desc("kafka_server_replicamanager_leadercount", "Partitions this broker leads.")

	logSizeDesc     = desc("kafka_log_log_size", "Bytes of a local partition's segment files.", "topic", "partition")
	logSegmentsDesc = desc("kafka_log_log_numlogsegments", "Segments of a local partition's log.", "topic", "partition")
	logStartDesc    = desc("kafka_log_log_logstartoffset", "Log start offset of a local partition.", "topic", "partition")
	logEndDesc      = desc("kafka_log_log_logendoffset", "Log end offset of a local partition.", "topic", "partition")
	offlineDirsDesc = desc("kafka_log_logmanager_offlinelogdirectorycount", "Log dirs offline after an I/O error.")
	dirFreeDesc     = desc("silkworm_log_dir_free_bytes", "Bytes available to the broker on a log dir's file system.", "dir")
	dirTotalDesc    = desc("silkworm_log_dir_total_bytes", "Size in bytes of a log dir's file system.", "dir")

	activeControllerDesc = desc("kafka_controller_kafkacontroller_activecontrollercount",
		"1 on the active controller (the Raft leader, or a single node), else 0.")
	offlinePartitionsDesc = desc("kafka_controller_kafkacontroller_offlinepartitionscount",
		"Partitions without a leader, as this node's metadata image has them.")
	globalTopicsDesc = desc("kafka_controller_kafkacontroller_globaltopiccount",
		"Topics in the cluster, as this node's metadata image has them.")
	globalPartitionsDesc = desc("kafka_controller_kafkacontroller_globalpartitioncount",
		"Partitions in the cluster, as this node's metadata image has them.")

	raftStateDesc = desc("kafka_server_raft_metrics_current_state",
		"1 for this node's role in the metadata quorum (current-state).", "state")
	raftLeaderDesc = desc("kafka_server_raft_metrics_current_leader",
		"The metadata quorum leader's node id, -1 when unknown (current-leader).")
	raftEpochDesc = desc("kafka_server_raft_metrics_current_epoch", "The metadata quorum epoch, the Raft term (current-epoch).")
	raftHWDesc    = desc("kafka_server_raft_metrics_high_watermark",
		"The metadata log's committed offset (high-watermark).")
	raftLEODesc     = desc("kafka_server_raft_metrics_log_end_offset", "The metadata log's end offset on this node (log-end-offset).")
	raftAppliedDesc = desc("kafka_server_broker_metadata_metrics_last_applied_record_offset",
		"The metadata log offset this node has applied (last-applied-record-offset).")

	groupCountDesc = desc("kafka_server_group_coordinator_metrics_group_count",
		"Groups this coordinator serves, per protocol (group-count).", "protocol")
	consumerGroupCountDesc = desc("kafka_server_group_coordinator_metrics_consumer_group_count",
		"KIP-848 consumer groups this coordinator serves, per state (consumer-group-count).", "state")
	consumerRebalancesDesc = desc("kafka_server_group_coordinator_metrics_consumer_group_rebalance_count",
		"Group epoch bumps of KIP-848 consumer groups seen at scrapes (consumer-group-rebalance-count).")
	numOffsetsDesc = desc("kafka_coordinator_group_groupmetadatamanager_numoffsets",
		"Committed offsets held by this coordinator (NumOffsets).")
	classicGroupDescs = []struct {
		state string
		d     *prometheus.Desc
	}{
		{"", desc("kafka_coordinator_group_groupmetadatamanager_numgroups", "Classic groups this coordinator serves (NumGroups).")},
		{"PreparingRebalance", desc("kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance", "Classic groups in PreparingRebalance.")},
		{"CompletingRebalance", desc("kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance", "Classic groups in CompletingRebalance.")},
		{"Stable", desc("kafka_coordinator_group_groupmetadatamanager_numgroupsstable", "Classic groups in Stable.")},
		{"Empty", desc("kafka_coordinator_group_groupmetadatamanager_numgroupsempty", "Classic groups in Empty.")},
		{"Dead", desc("kafka_coordinator_group_groupmetadatamanager_numgroupsdead", "Classic groups in Dead (always 0: dead groups are dropped).")},
	}
	consumerGroupStates = []string{"Empty", "Assigning", "Reconciling", "Stable", "Dead"}

	lagOffsetDesc = desc("kafka_consumergroup_group_offset",
		"A group's committed offset for a partition.", "group", "topic", "partition")
	lagDesc = desc("kafka_consumergroup_group_lag",
		"High watermark of the local replica minus the group's committed offset (never below 0).", "group", "topic", "partition")
	maxLagDesc = desc("kafka_consumergroup_group_max_lag", "A group's largest partition lag on this broker.", "group")
	sumLagDesc = desc("kafka_consumergroup_group_sum_lag", "A group's total lag over the partitions this broker holds.", "group")

	connCountDesc = desc("kafka_server_socket_server_metrics_connection_count",
		"Open client connections, per listener (connection-count).", "listener")
	connCreatedDesc = desc("kafka_server_socket_server_metrics_connection_creation_total",
		"Connections accepted, per listener (connection-creation-total).", "listener")
	connClosedDesc = desc("kafka_server_socket_server_metrics_connection_close_total",
		"Connections closed, per listener (connection-close-total).", "listener")
	failedAuthDesc = desc("kafka_server_socket_server_metrics_failed_authentication_total",
		"Failed authentications: TLS handshakes and SASL exchanges (failed-authentication-total).")

	handlerIdleDesc = desc("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
		"Fraction of time the num.io.threads handlers were idle since the previous scrape (at least 1 s window), 0 to 1.")
	handlerIdleAliasDesc = desc("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent",
		"Same as kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent (newer JMX exporter rule name).")
	networkIdleDesc = desc("kafka_network_socketserver_networkprocessoravgidlepercent",
		"Fraction of time the num.network.threads decode slots were free since the previous scrape (at least 1 s window), 0 to 1.")
	networkIdleAliasDesc = desc("kafka_network_socketserver_networkprocessoravgidle_percent",
		"Same as kafka_network_socketserver_networkprocessoravgidlepercent (newer JMX exporter rule name).")
	handlerBusyDesc = desc("silkworm_request_handler_busy_seconds_total", "Time the io handlers spent handling requests.")
	networkBusyDesc = desc("silkworm_network_decode_busy_seconds_total", "Time connections spent decoding requests in a network slot.")
)

// stateCollector is the scrape-time collector. It is "unchecked" (its
// Describe sends nothing) because BrokerTopicMetrics families have series
// with and without the topic label, as Kafka's MBeans do. Safe for
// concurrent use: Gather may run from several scrapers at once.
type stateCollector struct {
	m *brokerMetrics

	mu sync.Mutex // guards the consumer group epoch tracking
	// epochs is each consumer group's epoch at the last scrape;
	// rebalances sums the bumps seen (a group first seen after the first
	// scrape counts its whole epoch: it was created since).
	epochs     map[string]int32
	scraped    bool
	rebalances int64
}

// Describe sends nothing: the collector is unchecked.
func (c *stateCollector) Describe(chan<- *prometheus.Desc) {}

// Collect computes every state metric.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.m.b
	c.collectTopicCounters(ch)
	b.mu.RLock()
	topics := make([]*topicState, 0, len(b.topics))
	for _, ts := range b.topics {
		topics = append(topics, ts)
	}
	srv := b.srv
	b.mu.RUnlock()
	c.collectReplicas(ch, topics)
	c.collectController(ch)
	c.collectGroups(ch)
	c.collectSocketServer(ch, srv)
	c.collectLogDirs(ch)
	c.collectIdle(ch)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func (c *stateCollector) collectTopicCounters(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.Lock()
	names := make([]string, 0, len(m.topics))
	tms := make([]*topicMetrics, 0, len(m.topics))
	for name, tm := range m.topics {
		names = append(names, name)
		tms = append(tms, tm)
	}
	m.mu.Unlock()
	for _, tc := range topicCounters {
		counter(ch, tc.all, float64(tc.get(&m.all)))
		for i, tm := range tms {
			counter(ch, tc.perTopic, float64(tc.get(tm)), names[i])
		}
	}
	counter(ch, replicationBytesOutDesc, float64(m.replicationBytesOut.Load()))
}

// collectReplicas computes ReplicaManager's gauges and the Log metrics of
// every local partition replica.
func (c *stateCollector) collectReplicas(ch chan<- prometheus.Metric, topics []*topicState) {
	var under, underMin, atMin, offline, count, leaders int
	for _, ts := range topics {
		minISR := ts.cfg.MinInsyncReplicas
		for _, p := range ts.partitions {
			if p == nil {
				continue
			}
			count++
			if p.Log.Offline() != nil {
				offline++
			}
			if p.IsLeader() {
				leaders++
				isr := p.ISRSize()
				if isr < len(p.Replicas()) {
					under++
				}
				if isr < minISR {
					underMin++
				} else if isr == minISR {
					atMin++
				}
			}
			part := strconv.Itoa(int(p.Index))
			gauge(ch, logSizeDesc, float64(p.Log.Size()), ts.name, part)
			gauge(ch, logSegmentsDesc, float64(p.Log.NumSegments()), ts.name, part)
			gauge(ch, logStartDesc, float64(p.Log.LogStartOffset()), ts.name, part)
			gauge(ch, logEndDesc, float64(p.Log.LogEndOffset()), ts.name, part)
		}
	}
	gauge(ch, underReplicatedDesc, float64(under))
	gauge(ch, underMinISRDesc, float64(underMin))
	gauge(ch, atMinISRDesc, float64(atMin))
	gauge(ch, offlineReplicaDesc, float64(offline))
	gauge(ch, partitionCountDesc, float64(count))
	gauge(ch, leaderCountDesc, float64(leaders))
}

// raftStater is the metadata store's Raft view (metadata.Quorum).
type raftStater interface {
	RaftState() metadata.RaftState
}

// collectController reports the controller's gauges from this node's
// metadata image (every node has the whole image, as every KRaft
// controller replays the log) and the Raft view. A single node (the
// metadata.Local store) is its own controller: the only voter, always
// leader at epoch 0, whose metadata "log" offset is the image epoch.
func (c *stateCollector) collectController(ch chan<- prometheus.Metric) {
	b := c.m.b
	if b.meta == nil {
		return
	}
	im := b.meta.Image()
	var parts, offline int
	for _, t := range im.Topics {
		for _, pa := range t.Partitions {
			parts++
			if pa.Leader < 0 {
				offline++
			}
		}
	}
	rs := metadata.RaftState{State: "leader", LeaderID: b.nodeID, HighWatermark: im.Epoch,
		LogEndOffset: im.Epoch, AppliedOffset: im.Epoch}
	active := 1.0
	if q, ok := b.meta.(raftStater); ok {
		rs = q.RaftState()
		active = 0
		if ac, ok := b.meta.(interface{ IsActiveController() bool }); ok && ac.IsActiveController() {
			active = 1
		}
	}
	gauge(ch, activeControllerDesc, active)
	gauge(ch, offlinePartitionsDesc, float64(offline))
	gauge(ch, globalTopicsDesc, float64(len(im.Topics)))
	gauge(ch, globalPartitionsDesc, float64(parts))
	for _, s := range []string{"leader", "candidate", "follower", "unattached"} {
		v := 0.0
		if s == rs.State {
			v = 1
		}
		gauge(ch, raftStateDesc, v, s)
	}
	gauge(ch, raftLeaderDesc, float64(rs.LeaderID))
	gauge(ch, raftEpochDesc, float64(rs.Epoch))
	gauge(ch, raftHWDesc, float64(rs.HighWatermark))
	gauge(ch, raftLEODesc, float64(rs.LogEndOffset))
	gauge(ch, raftAppliedDesc, float64(rs.AppliedOffset))
}

// collectGroups reports the groups this broker coordinates, their
// committed offsets and their lag on the partitions this broker holds:
// the high watermark of the local replica (the leader's, or a follower's
// own, which trails the leader's by up to one fetch) minus the committed
// offset. Partitions with no local replica have an offset but no lag
// series here; the broker leading them reports theirs only if it is also
// the group's coordinator, so sum lag over brokers with max by (group,
// topic, partition).
func (c *stateCollector) collectGroups(ch chan<- prometheus.Metric) {
	b := c.m.b
	if b.groups == nil {
		return
	}
	stats := b.groups.Stats()
	byProtocol := map[string]int{"classic": 0, "consumer": 0, "share": 0}
	classic := map[string]int{}
	consumer := map[string]int{}
	offsets := 0
	epochs := make(map[string]int32, len(stats))
	for _, g := range stats {
		byProtocol[g.Type]++
		if g.Type == "consumer" {
			consumer[g.State]++
			epochs[g.ID] = g.Generation
		} else {
			classic[g.State]++
			classic[""]++
		}
		offsets += len(g.Offsets)
		var maxLag, sumLag int64
		hasLag := false
		for _, o := range g.Offsets {
			part := strconv.Itoa(int(o.Partition))
			gauge(ch, lagOffsetDesc, float64(o.Offset), g.ID, o.Topic, part)
			_, p := b.partition(o.Topic, o.Partition)
			if p == nil {
				continue
			}
			lag := max(p.HighWatermark()-o.Offset, 0)
			gauge(ch, lagDesc, float64(lag), g.ID, o.Topic, part)
			hasLag = true
			maxLag = max(maxLag, lag)
			sumLag += lag
		}
		if hasLag {
			gauge(ch, maxLagDesc, float64(maxLag), g.ID)
			gauge(ch, sumLagDesc, float64(sumLag), g.ID)
		}
	}
	if b.shares != nil && b.shares.coord != nil {
		byProtocol["share"] = len(b.shares.coord.ListGroups())
	}
	for proto, n := range byProtocol {
		gauge(ch, groupCountDesc, float64(n), proto)
	}
	for _, s := range consumerGroupStates {
		gauge(ch, consumerGroupCountDesc, float64(consumer[s]), s)
	}
	for _, cd := range classicGroupDescs {
		gauge(ch, cd.d, float64(classic[cd.state]))
	}
	gauge(ch, numOffsetsDesc, float64(offsets))
	counter(ch, consumerRebalancesDesc, float64(c.countConsumerRebalances(epochs)))
}

// countConsumerRebalances adds the group epoch bumps since the last
// scrape and returns the total.
func (c *stateCollector) countConsumerRebalances(epochs map[string]int32) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range epochs {
		old, known := c.epochs[id]
		switch {
		case known && e > old:
			c.rebalances += int64(e - old)
		case !known && c.scraped:
			c.rebalances += int64(e)
		}
	}
	c.epochs, c.scraped = epochs, true
	return c.rebalances
}

// collectSocketServer reports open, created and closed connections per
// listener (every listener, 0 included) and failed authentications.
func (c *stateCollector) collectSocketServer(ch chan<- prometheus.Metric, srv *server) {
	b := c.m.b
	counter(ch, failedAuthDesc, float64(b.failedAuth.Load()))
	if srv == nil {
		return
	}
	counts := map[string]int{}
	for _, bl := range srv.lns {
		counts[bl.sec.name] = 0
	}
	srv.mu.Lock()
	for cn := range srv.conns {
		counts[cn.ls.name]++
	}
	srv.mu.Unlock()
	for l, n := range counts {
		gauge(ch, connCountDesc, float64(n), l)
		cc := c.m.listenerConns(l)
		counter(ch, connCreatedDesc, float64(cc.created.Load()), l)
		counter(ch, connClosedDesc, float64(cc.closed.Load()), l)
	}
}

// collectLogDirs reports each log dir's file system space and how many
// dirs are offline.
func (c *stateCollector) collectLogDirs(ch chan<- prometheus.Metric) {
	b := c.m.b
	if b.logs != nil {
		off := 0
		for _, offline := range b.logs.Dirs() {
			if offline {
				off++
			}
		}
		gauge(ch, offlineDirsDesc, float64(off))
	}
	for _, d := range b.cfg.LogDirs {
		total, free := diskSpace(d) // describelogdirs.go
		if total < 0 {
			continue
		}
		gauge(ch, dirFreeDesc, float64(free), d)
		gauge(ch, dirTotalDesc, float64(total), d)
	}
}

// collectIdle reports the handler and network idle ratios.
func (c *stateCollector) collectIdle(ch chan<- prometheus.Metric) {
	m := c.m
	hb, nb := m.handlerBusy.Load(), m.networkBusy.Load()
	hi := m.handlerIdle.idle(hb, m.b.cfg.NumIOThreads)
	ni := m.networkIdle.idle(nb, m.b.cfg.NumNetworkThreads)
	gauge(ch, handlerIdleDesc, hi)
	gauge(ch, handlerIdleAliasDesc, hi)
	gauge(ch, networkIdleDesc, ni)
	gauge(ch, networkIdleAliasDesc, ni)
	counter(ch, handlerBusyDesc, float64(hb)/1e9)
	counter(ch, networkBusyDesc, float64(nb)/1e9)
}

// idleMinWindow is the shortest window an idle ratio is computed over:
// scrapes closer together than that see the previous value.
const idleMinWindow = int64(1e9)

// idleSampler turns a busy-time counter into an idle ratio over the
// window since the previous sample. Safe for concurrent use.
type idleSampler struct {
	mu       sync.Mutex
	at, busy int64 // the previous sample
	last     float64
}

// start begins the first window (newBrokerMetrics).
func (s *idleSampler) start() {
	s.mu.Lock()
	s.at, s.busy, s.last = nanotime(), 0, 1
	s.mu.Unlock()
}

func (s *idleSampler) idle(busy int64, threads int) float64 {
	now := nanotime()
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := now - s.at
	if dt < idleMinWindow || threads <= 0 {
		return s.last
	}
	ratio := 1 - float64(busy-s.busy)/(float64(dt)*float64(threads))
	s.last = min(max(ratio, 0), 1)
	s.at, s.busy = now, busy
	return s.last
}
