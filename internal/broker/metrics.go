package broker

// Prometheus metrics named as the Prometheus JMX exporter names Kafka's
// MBeans (kafka_server_brokertopicmetrics_messagesin_total, ...). The
// registry always exists; silkworm.metrics.listener only decides whether
// it is served over HTTP (http.go). docs/metrics.md lists every family.
//
// Three kinds of instruments, by cost:
//   - counters on the request path (BrokerTopicMetrics, request metrics)
//     are atomics or prometheus children resolved once and cached: the
//     per-topic counters hang off topicState, the per-API ones off an
//     array indexed by API key (metrics_request.go);
//   - events off the request path (ISR changes, rebalances) are plain
//     prometheus counters; connections per listener are atomics the
//     collector reports for every listener;
//   - everything that describes state (replica manager, controller, log,
//     groups, lag, connections) is computed at scrape time by
//     stateCollector (metrics_state.go) and costs nothing in between.

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kerr"
)

// brokerMetrics holds the broker's registry and its instruments. Its
// methods are called from every goroutine of the broker; all are safe for
// concurrent use and do nothing on a nil receiver.
type brokerMetrics struct {
	reg *prometheus.Registry
	b   *Broker

	// off turns the instrumentation calls into no-ops: the benchmarks'
	// A/B switch (noMetrics). The registry and the scrape-time collectors
	// stay.
	off atomic.Bool

	// all is BrokerTopicMetrics without a topic (Kafka's all-topics MBean).
	all topicMetrics
	// replicationBytesOut counts record bytes sent to followers
	// (ReplicationBytesOutPerSec, all topics only, as in Kafka).
	replicationBytesOut atomic.Int64

	mu     sync.Mutex // guards topics and conns
	topics map[string]*topicMetrics

	req requestMetrics // metrics_request.go

	isrShrinks, isrExpands prometheus.Counter
	classicRebalances      prometheus.Counter
	// conns counts connections created and closed per listener name
	// (guarded by mu); the collector reports every listener, 0 included.
	conns map[string]*connCounts
	// logFlush is LogFlushRateAndTimeMs; see observeLogFlush.
	logFlush prometheus.Histogram

	// handlerBusy and networkBusy are the nanoseconds io goroutines spent
	// in handlers and connections spent holding a num.network.threads
	// decode slot; the idle ratios are computed from them at scrape time.
	handlerBusy, networkBusy atomic.Int64
	handlerIdle, networkIdle idleSampler

	state *stateCollector // metrics_state.go
}

// topicMetrics are Kafka's BrokerTopicMetrics for one topic (or all).
// Fields are updated with atomic adds on the produce and fetch paths.
type topicMetrics struct {
	messagesIn, bytesIn, bytesOut, bytesRejected atomic.Int64
	failedProduce, failedFetch                   atomic.Int64
	totalProduce, totalFetch                     atomic.Int64
}

// newBrokerMetrics creates the registry with every instrument; New calls
// it before options apply.
func newBrokerMetrics(b *Broker) *brokerMetrics {
	m := &brokerMetrics{reg: prometheus.NewRegistry(), b: b, topics: map[string]*topicMetrics{},
		conns: map[string]*connCounts{}}
	m.isrShrinks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafka_server_replicamanager_isrshrinks_total",
		Help: "ISR shrinks of partitions this broker leads (IsrShrinksPerSec).",
	})
	m.isrExpands = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafka_server_replicamanager_isrexpands_total",
		Help: "ISR expansions of partitions this broker leads (IsrExpandsPerSec).",
	})
	m.classicRebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafka_server_group_coordinator_metrics_group_completed_rebalance_count",
		Help: "Completed rebalances (join phases) of classic groups this coordinator serves (group-completed-rebalance-count).",
	})
	m.logFlush = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kafka_log_logflushstats_logflushrateandtimems",
		Help:    "Log flushes (fsync) and their duration in milliseconds (LogFlushRateAndTimeMs).",
		Buckets: msBuckets,
	})
	m.req.init()
	m.handlerIdle.start()
	m.networkIdle.start()
	m.state = &stateCollector{m: m}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.isrShrinks, m.isrExpands, m.classicRebalances, m.logFlush,
		m.req.requests, m.req.errors,
		m.req.totalTime, m.req.queueTime, m.req.localTime, m.req.remoteTime, m.req.responseQueueTime, m.req.responseSendTime,
		m.state,
	)
	return m
}

// Metrics is the broker's Prometheus registry: what /metrics serves, and
// what the web console reads its live rates from. Safe for concurrent use.
func (b *Broker) Metrics() *prometheus.Registry { return b.metrics.reg }

// on reports whether instrumentation calls should record.
func (m *brokerMetrics) on() bool { return m != nil && !m.off.Load() }

// topic returns the BrokerTopicMetrics of a topic, created on first use
// and kept until removeTopic. applyImage stores it in the topicState, so
// the request path never looks it up.
func (m *brokerMetrics) topic(name string) *topicMetrics {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tm := m.topics[name]
	if tm == nil {
		tm = &topicMetrics{}
		m.topics[name] = tm
	}
	return tm
}

// removeTopic drops a deleted topic's metrics, as Kafka removes its
// BrokerTopicMetrics MBeans.
func (m *brokerMetrics) removeTopic(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.topics, name)
	m.mu.Unlock()
}

// produced records one partition of a produce request that reached the
// append (authorized, and in the metadata): TotalProduceRequestsPerSec,
// MessagesInPerSec and BytesInPerSec when it was appended, and, as Kafka's
// ReplicaManager does, FailedProduceRequestsPerSec for failures other
// than the "expected" ones (unknown partition, not leader, too large,
// corrupt, storage error) and BytesRejectedPerSec for a batch over
// max.message.bytes. ts is nil for an unknown topic (then only the
// all-topics counters move).
func (m *brokerMetrics) produced(ts *topicState, batch []byte, code int16) {
	if !m.on() || code == kerr.UnknownTopicOrPartition.Code || code == kerr.UnknownTopicID.Code {
		// Kafka answers partitions missing from its metadata before the
		// append, without counting them.
		return
	}
	var tm *topicMetrics
	if ts != nil {
		tm = ts.metrics
	}
	m.all.totalProduce.Add(1)
	if tm != nil {
		tm.totalProduce.Add(1)
	}
	switch code {
	case 0:
		n := int64(batchRecordCount(batch))
		m.all.messagesIn.Add(n)
		m.all.bytesIn.Add(int64(len(batch)))
		if tm != nil {
			tm.messagesIn.Add(n)
			tm.bytesIn.Add(int64(len(batch)))
		}
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code:
		m.all.bytesRejected.Add(int64(len(batch)))
		if tm != nil {
			tm.bytesRejected.Add(int64(len(batch)))
		}
	case kerr.NotLeaderForPartition.Code, kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code:
	default:
		m.all.failedProduce.Add(1)
		if tm != nil {
			tm.failedProduce.Add(1)
		}
	}
}

// batchRecordCount is the record count of a v2 batch header (0 when the
// bytes are too short to hold one).
func batchRecordCount(batch []byte) int32 {
	// After base offset (8), length (4), leader epoch (4), magic (1),
	// CRC (4), attributes (2), last offset delta (4), base and max
	// timestamps (8+8), producer id (8) and epoch (2), base sequence (4).
	const countAt = 57
	if len(batch) < countAt+4 {
		return 0
	}
	return int32(uint32(batch[countAt])<<24 | uint32(batch[countAt+1])<<16 | uint32(batch[countAt+2])<<8 | uint32(batch[countAt+3]))
}

// fetchRead records the partitions of a fetch response about to be sent
// (respondFetch): TotalFetchRequestsPerSec for each partition that passed
// authorization, FailedFetchRequestsPerSec for errors other than Kafka's
// expected ones (not leader, unknown partition or epoch, fenced epoch,
// out of range, storage error). Each request counts once, however many
// times a long-poll fetch read.
func (m *brokerMetrics) fetchRead(topics []fetchTopic) {
	if !m.on() {
		return
	}
	for i := range topics {
		ft := &topics[i]
		tm := m.topicByName(ft.name)
		for j := range ft.parts {
			code := ft.parts[j].errorCode
			if code == kerr.TopicAuthorizationFailed.Code || code == kerr.UnknownTopicID.Code {
				continue
			}
			m.all.totalFetch.Add(1)
			if tm != nil {
				tm.totalFetch.Add(1)
			}
			switch code {
			case 0, kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownLeaderEpoch.Code,
				kerr.FencedLeaderEpoch.Code, kerr.OffsetOutOfRange.Code, kerr.KafkaStorageError.Code,
				kerr.ReplicaNotAvailable.Code, kerr.InconsistentTopicID.Code:
			default:
				m.all.failedFetch.Add(1)
				if tm != nil {
					tm.failedFetch.Add(1)
				}
			}
		}
	}
}

// fetchSent records the record bytes of a fetch response being sent:
// BytesOutPerSec for consumers, ReplicationBytesOutPerSec for followers
// (Kafka counts them apart), and the response's errors per partition for
// the Fetch request metrics.
func (m *brokerMetrics) fetchSent(r *request, topics []fetchTopic, replicaID int32) {
	if !m.on() {
		return
	}
	a := m.req.api(r.hdr.APIKey)
	for i := range topics {
		ft := &topics[i]
		var bytes int64
		for j := range ft.parts {
			a.countError(&m.req, ft.parts[j].errorCode, 1)
			if ft.parts[j].hasData {
				bytes += ft.parts[j].read.Size
			}
		}
		if bytes == 0 {
			continue
		}
		if replicaID >= 0 {
			m.replicationBytesOut.Add(bytes)
			continue
		}
		m.all.bytesOut.Add(bytes)
		if tm := m.topicByName(ft.name); tm != nil {
			tm.bytesOut.Add(bytes)
		}
	}
}

// topicByName is the metrics of a local topic by name, nil when unknown:
// the topicState's (one map read under b.mu's read lock).
func (m *brokerMetrics) topicByName(name string) *topicMetrics {
	if ts := m.b.topic(name); ts != nil {
		return ts.metrics
	}
	return nil
}

// isrChanged counts an ISR change the controller accepted (isrManager).
func (m *brokerMetrics) isrChanged(why string) {
	if !m.on() {
		return
	}
	if why == "shrink" {
		m.isrShrinks.Inc()
	} else {
		m.isrExpands.Inc()
	}
}

// connCounts are one listener's connection totals.
type connCounts struct {
	created, closed atomic.Int64
}

// listenerConns returns a listener's connection totals, created on first
// use.
func (m *brokerMetrics) listenerConns(listener string) *connCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	cc := m.conns[listener]
	if cc == nil {
		cc = &connCounts{}
		m.conns[listener] = cc
	}
	return cc
}

// connectionCreated and connectionClosed count a listener's connections
// (the accept loop and conn.shutdown; once per connection, not per
// request).
func (m *brokerMetrics) connectionCreated(listener string) {
	if m.on() {
		m.listenerConns(listener).created.Add(1)
	}
}

func (m *brokerMetrics) connectionClosed(listener string) {
	if m.on() {
		m.listenerConns(listener).closed.Add(1)
	}
}

// classicRebalanced counts a completed join phase of a classic group:
// handleJoinGroup calls it for each JoinGroup answer, and only the
// leader's successful answer (one per generation) counts.
func (m *brokerMetrics) classicRebalanced(errorCode int16, memberID, leaderID string) {
	if m.on() && errorCode == 0 && memberID != "" && memberID == leaderID {
		m.classicRebalances.Inc()
	}
}

// observeLogFlush records one log flush and how long it took; storage
// calls it (ManagerConfig.OnFlush) after each flush that synced a file.
func (m *brokerMetrics) observeLogFlush(ms float64) {
	if m.on() {
		m.logFlush.Observe(ms)
	}
}
