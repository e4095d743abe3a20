package broker

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.yaml.in/yaml/v3"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/storage"
	"github.com/silkworm/silkworm/internal/wire"
)

// scrape is one Gather of a registry, indexed by family name.
type scrape map[string]*dto.MetricFamily

func gather(t testing.TB, reg prometheus.Gatherer) scrape {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := scrape{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// value is the value of the series of family name whose labels include
// every "k=v" of want (exactly the labels when want is empty), and
// whether there is one. Histograms give their sample count.
func (s scrape) value(name string, want ...string) (float64, bool) {
	mf := s[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		if len(want) == 0 && len(m.Label) != 0 {
			continue
		}
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// sum adds the counters of family name whose labels include every "k=v"
// of want.
func (s scrape) sum(name string, want ...string) float64 {
	mf := s[name]
	if mf == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range mf.Metric {
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		total += m.GetCounter().GetValue()
	}
	return total
}

// must is value, failing the test when the series is missing.
func (s scrape) must(t *testing.T, name string, want ...string) float64 {
	t.Helper()
	v, ok := s.value(name, want...)
	if !ok {
		t.Fatalf("no series %s%v in the scrape", name, want)
	}
	return v
}

// metricsTraffic runs produce, fetch and consumer group traffic against tb
// and returns the number of records produced to topic "m" partition 0.
// The group "g" commits offset n-3 on m-0: its lag there is 3.
func metricsTraffic(t *testing.T, tb *testBroker) int {
	t.Helper()
	ctx := testCtx(t)
	tb.createTopic(ctx, "m", 2, nil)
	const n = 10
	tb.produce(ctx, "m", 0, n)
	tb.produce(ctx, "m", 1, 2)
	// Consume everything of m-0 with a consumer group, then commit n-3.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("m"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cl.Close()
	got := 0
	for got < n+2 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		got += fs.NumRecords()
	}
	commit := map[string]map[int32]kgo.EpochOffset{"m": {0: {Epoch: -1, Offset: n - 3}, 1: {Epoch: -1, Offset: 2}}}
	cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			t.Errorf("commit: %v", err)
			return
		}
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				if p.ErrorCode != 0 {
					t.Errorf("commit %s-%d: %v", tp.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
				}
			}
		}
	})
	// A produce to a partition that does not exist, for the error counts.
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = "m", tb.b.topic("m").id // the client picks v13 (ids)
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 7
	rp.Records = benchBatchSmall()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := tb.request(ctx, req).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to m-7: error %d, want UNKNOWN_TOPIC_OR_PARTITION", c)
	}
	return n
}

// benchBatchSmall is one small valid record batch.
func benchBatchSmall() []byte {
	b, _ := benchBatch(10)
	return b
}

func TestMetricsAfterTraffic(t *testing.T) {
	tb := newTestBroker(t, "group.initial.rebalance.delay.ms=0")
	n := metricsTraffic(t, tb)
	reg := tb.b.Metrics()
	// Responses are counted once written: poll until the last request
	// (the failed produce) has been.
	var s scrape
	waitFor(t, "the failed produce, the last request, in the request counts", func() bool {
		s = gather(t, reg)
		v, _ := s.value("kafka_network_requestmetrics_errors_total", "request=Produce", "error=UNKNOWN_TOPIC_OR_PARTITION")
		return v == 1 && s.sum("kafka_network_requestmetrics_requests_total", "request=Produce") == float64(n+3)
	})

	// BrokerTopicMetrics, per topic and in total.
	if v := s.must(t, "kafka_server_brokertopicmetrics_messagesin_total", "topic=m"); v != float64(n+2) {
		t.Errorf("messagesin{topic=m} = %v, want %d", v, n+2)
	}
	if v := s.must(t, "kafka_server_brokertopicmetrics_messagesin_total"); v < float64(n+2) {
		t.Errorf("messagesin (all topics) = %v, want >= %d", v, n+2)
	}
	if v := s.must(t, "kafka_server_brokertopicmetrics_totalproducerequests_total", "topic=m"); v != float64(n+2) {
		t.Errorf("totalproducerequests{topic=m} = %v, want %d (one per partition produced, m-7 unknown)", v, n+2)
	}
	for _, name := range []string{"bytesin", "bytesout", "totalfetchrequests"} {
		if v := s.must(t, "kafka_server_brokertopicmetrics_"+name+"_total", "topic=m"); v <= 0 {
			t.Errorf("%s{topic=m} = %v, want > 0", name, v)
		}
	}
	if in, all := s.must(t, "kafka_server_brokertopicmetrics_bytesin_total", "topic=m"),
		s.must(t, "kafka_server_brokertopicmetrics_bytesin_total"); all < in {
		t.Errorf("bytesin all topics %v < topic m %v", all, in)
	}
	if v := s.must(t, "kafka_server_brokertopicmetrics_failedproducerequests_total"); v != 0 {
		t.Errorf("failedproducerequests = %v, want 0 (an unknown partition is an expected error)", v)
	}

	// Request metrics.
	if v := s.must(t, "kafka_network_requestmetrics_requests_total", "request=Produce", "version=13"); v != float64(n+3) {
		t.Errorf("requests{Produce,13} = %v, want %d (franz-go sends v13 here)", v, n+3)
	}
	if v := s.must(t, "kafka_network_requestmetrics_errors_total", "request=Produce", "error=NONE"); v < float64(n+2) {
		t.Errorf("errors{Produce,NONE} = %v, want >= %d", v, n+2)
	}
	for _, api := range []string{"Produce", "Fetch", "Metadata", "ApiVersions", "JoinGroup", "OffsetCommit"} {
		for _, h := range []string{"totaltimems", "requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems", "responsesendtimems"} {
			if v := s.must(t, "kafka_network_requestmetrics_"+h, "request="+api); v == 0 {
				t.Errorf("%s{request=%s} has no samples", h, api)
			}
		}
	}

	// Replica manager and log, for m's two partitions plus the offsets
	// topic's.
	parts := s.must(t, "kafka_server_replicamanager_partitioncount")
	if leaders := s.must(t, "kafka_server_replicamanager_leadercount"); leaders != parts || parts < 2 {
		t.Errorf("leadercount %v, partitioncount %v: a single node leads every partition (at least 2)", leaders, parts)
	}
	if v := s.must(t, "kafka_server_replicamanager_underreplicatedpartitions"); v != 0 {
		t.Errorf("underreplicatedpartitions = %v, want 0", v)
	}
	if v := s.must(t, "kafka_server_replicamanager_atminisrpartitioncount"); v != parts {
		t.Errorf("atminisrpartitioncount = %v, want %v (ISR 1 = min.insync.replicas 1)", v, parts)
	}
	if v := s.must(t, "kafka_log_log_logendoffset", "topic=m", "partition=0"); v != float64(n) {
		t.Errorf("logendoffset{m,0} = %v, want %d", v, n)
	}
	if v := s.must(t, "kafka_log_log_size", "topic=m", "partition=0"); v <= 0 {
		t.Errorf("log size{m,0} = %v, want > 0", v)
	}
	if v := s.must(t, "kafka_log_log_numlogsegments", "topic=m", "partition=1"); v != 1 {
		t.Errorf("numlogsegments{m,1} = %v, want 1", v)
	}

	// Controller: a single node is the active controller.
	if v := s.must(t, "kafka_controller_kafkacontroller_activecontrollercount"); v != 1 {
		t.Errorf("activecontrollercount = %v, want 1", v)
	}
	if v := s.must(t, "kafka_controller_kafkacontroller_offlinepartitionscount"); v != 0 {
		t.Errorf("offlinepartitionscount = %v, want 0", v)
	}
	if v := s.must(t, "kafka_server_raft_metrics_current_state", "state=leader"); v != 1 {
		t.Errorf("raft current_state{leader} = %v, want 1", v)
	}

	// Groups and lag: g committed n-3 on m-0, 2 (the end) on m-1.
	if v := s.must(t, "kafka_consumergroup_group_lag", "group=g", "topic=m", "partition=0"); v != 3 {
		t.Errorf("lag{g,m,0} = %v, want 3", v)
	}
	if v := s.must(t, "kafka_consumergroup_group_lag", "group=g", "topic=m", "partition=1"); v != 0 {
		t.Errorf("lag{g,m,1} = %v, want 0", v)
	}
	if v := s.must(t, "kafka_consumergroup_group_offset", "group=g", "topic=m", "partition=0"); v != float64(n-3) {
		t.Errorf("offset{g,m,0} = %v, want %d", v, n-3)
	}
	if v := s.must(t, "kafka_consumergroup_group_max_lag", "group=g"); v != 3 {
		t.Errorf("max_lag{g} = %v, want 3", v)
	}
	if v := s.must(t, "kafka_server_group_coordinator_metrics_group_count", "protocol=classic"); v != 1 {
		t.Errorf("group_count{classic} = %v, want 1", v)
	}
	if v := s.must(t, "kafka_coordinator_group_groupmetadatamanager_numgroups"); v != 1 {
		t.Errorf("numgroups = %v, want 1", v)
	}
	if v := s.must(t, "kafka_server_group_coordinator_metrics_group_completed_rebalance_count"); v < 1 {
		t.Errorf("group_completed_rebalance_count = %v, want >= 1", v)
	}

	// Socket server.
	if v := s.must(t, "kafka_server_socket_server_metrics_connection_count", "listener=PLAINTEXT"); v < 1 {
		t.Errorf("connection_count{PLAINTEXT} = %v, want >= 1 (the test client)", v)
	}
	if v := s.must(t, "kafka_server_socket_server_metrics_connection_creation_total", "listener=PLAINTEXT"); v < 2 {
		t.Errorf("connection_creation_total = %v, want >= 2", v)
	}
	s.must(t, "kafka_server_socket_server_metrics_failed_authentication_total")

	// Idle ratios are fractions.
	for _, name := range []string{"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
		"kafka_network_socketserver_networkprocessoravgidlepercent"} {
		if v := s.must(t, name); v < 0 || v > 1 {
			t.Errorf("%s = %v, want within [0, 1]", name, v)
		}
	}
	// Log dir space.
	dir := tb.b.cfg.LogDirs[0]
	if free, total := s.must(t, "silkworm_log_dir_free_bytes", "dir="+dir), s.must(t, "silkworm_log_dir_total_bytes", "dir="+dir); total <= 0 || free > total {
		t.Errorf("log dir free %v of total %v", free, total)
	}
	// Go runtime and process collectors.
	s.must(t, "go_goroutines")
	s.must(t, "process_cpu_seconds_total")
}

// TestMetricsTopicDeleted checks a deleted topic's BrokerTopicMetrics
// disappear (Kafka removes the MBeans) while the totals stay.
func TestMetricsTopicDeleted(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "gone", 1, nil)
	tb.produce(ctx, "gone", 0, 3)
	s := gather(t, tb.b.Metrics())
	if v := s.must(t, "kafka_server_brokertopicmetrics_messagesin_total", "topic=gone"); v != 3 {
		t.Fatalf("messagesin{gone} = %v, want 3", v)
	}
	if _, err := tb.adm.DeleteTopics(ctx, "gone"); err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	waitFor(t, "the deleted topic's metrics removed", func() bool {
		_, ok := gather(t, tb.b.Metrics()).value("kafka_server_brokertopicmetrics_messagesin_total", "topic=gone")
		return !ok
	})
	if v := gather(t, tb.b.Metrics()).must(t, "kafka_server_brokertopicmetrics_messagesin_total"); v != 3 {
		t.Errorf("messagesin (all topics) = %v after the delete, want 3", v)
	}
}

// TestMetricsBytesRejected checks a batch over max.message.bytes counts
// as rejected bytes and not as a failed produce (Kafka's expected error).
func TestMetricsBytesRejected(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	small := "100"
	tb.createTopic(ctx, "tiny", 1, map[string]*string{"max.message.bytes": &small})
	batch, _ := benchBatch(200)
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = "tiny", tb.b.topic("tiny").id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := tb.request(ctx, req).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.MessageTooLarge.Code {
		t.Fatalf("error %d, want MESSAGE_TOO_LARGE", c)
	}
	s := gather(t, tb.b.Metrics())
	if v := s.must(t, "kafka_server_brokertopicmetrics_bytesrejected_total", "topic=tiny"); v != float64(len(batch)) {
		t.Errorf("bytesrejected{tiny} = %v, want %d", v, len(batch))
	}
	if v := s.must(t, "kafka_server_brokertopicmetrics_failedproducerequests_total", "topic=tiny"); v != 0 {
		t.Errorf("failedproducerequests{tiny} = %v, want 0", v)
	}
	if v := s.must(t, "kafka_server_brokertopicmetrics_messagesin_total", "topic=tiny"); v != 0 {
		t.Errorf("messagesin{tiny} = %v, want 0", v)
	}
}

// Every log flush is timed: with flush.messages=1 each produce flushes.
func TestMetricsLogFlush(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	one := "1"
	tb.createTopic(ctx, "flushed", 1, map[string]*string{"flush.messages": &one})
	before, _ := gather(t, tb.b.Metrics()).value("kafka_log_logflushstats_logflushrateandtimems")
	tb.produce(ctx, "flushed", 0, 3)
	after := gather(t, tb.b.Metrics()).must(t, "kafka_log_logflushstats_logflushrateandtimems")
	if after < before+1 {
		t.Errorf("log flushes counted %v → %v after producing to a flush.messages=1 topic", before, after)
	}
}

// Share groups count in group_count under protocol "share".
func TestMetricsShareGroupCount(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "q", 1, nil)
	if r := shareHeartbeat(t, ctx, tb.cl, "sg", "member-a", 0, "q"); r.ErrorCode != 0 {
		t.Fatalf("ShareGroupHeartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if v := gather(t, tb.b.Metrics()).must(t, "kafka_server_group_coordinator_metrics_group_count", "protocol=share"); v != 1 {
		t.Errorf("group_count{share} = %v, want 1", v)
	}
}

// codeCount counts error codes by code.
type codeCount map[int16]int

func (c codeCount) add(code int16) { c[code]++ }

func TestWalkErrorCodes(t *testing.T) {
	resp := kmsg.NewPtrCreateTopicsResponse()
	for _, code := range []int16{0, kerr.TopicAlreadyExists.Code, 0} {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.ErrorCode = code
		resp.Topics = append(resp.Topics, rt)
	}
	got := map[int16]int{}
	walkErrorCodes(resp, codeCount(got))
	if got[0] != 2 || got[kerr.TopicAlreadyExists.Code] != 1 || len(got) != 2 {
		t.Errorf("CreateTopics codes = %v, want 0:2 36:1", got)
	}
	// Nested slices: DescribeGroups has no nested codes, OffsetFetch v8 has
	// codes at three levels.
	of := kmsg.NewPtrOffsetFetchResponse()
	g := kmsg.NewOffsetFetchResponseGroup()
	g.ErrorCode = kerr.GroupAuthorizationFailed.Code
	tp := kmsg.NewOffsetFetchResponseGroupTopic()
	p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
	p.ErrorCode = kerr.UnstableOffsetCommit.Code
	tp.Partitions = append(tp.Partitions, p, p)
	g.Topics = append(g.Topics, tp)
	of.Groups = append(of.Groups, g)
	got = map[int16]int{}
	walkErrorCodes(of, codeCount(got))
	if got[0] != 1 || got[kerr.GroupAuthorizationFailed.Code] != 1 || got[kerr.UnstableOffsetCommit.Code] != 2 {
		t.Errorf("OffsetFetch codes = %v, want top-level 0:1, group 30:1, partitions 88:2", got)
	}

	for code, want := range map[int16]string{0: "NONE", 6: "NOT_LEADER_OR_FOLLOWER", 3: "UNKNOWN_TOPIC_OR_PARTITION", -1: "UNKNOWN_SERVER_ERROR", 10000: "UNKNOWN_SERVER_ERROR"} {
		if got := errorName(code); got != want {
			t.Errorf("errorName(%d) = %s, want %s", code, got, want)
		}
	}
	for key, want := range map[int16]string{0: "Produce", 17: "SaslHandshake", 22: "InitProducerId", 29: "DescribeAcls", 68: "ConsumerGroupHeartbeat"} {
		if got := requestName(key); got != want {
			t.Errorf("requestName(%d) = %s, want %s", key, got, want)
		}
	}
}

func TestIdleSampler(t *testing.T) {
	var s idleSampler
	s.start()
	if v := s.idle(0, 4); v != 1 {
		t.Errorf("idle before any window = %v, want 1", v)
	}
	// A window of at least idleMinWindow with half the threads busy.
	s.mu.Lock()
	s.at -= 2 * idleMinWindow
	s.mu.Unlock()
	v := s.idle(2*2*idleMinWindow, 4) // 2 of 4 threads busy for the window
	if v < 0.45 || v > 0.55 {
		t.Errorf("idle with half the threads busy = %v, want about 0.5", v)
	}
	s.mu.Lock()
	s.at -= 2 * idleMinWindow
	s.mu.Unlock()
	if v := s.idle(100*idleMinWindow, 4); v != 0 {
		t.Errorf("idle when busier than the window = %v, want 0 (clamped)", v)
	}
}

// metricNameRE finds metric names in PromQL expressions.
var metricNameRE = regexp.MustCompile(`\b(kafka|silkworm|go|process)_[a-z0-9_]+\b`)

// exprNames returns the metric names used in the PromQL of the Grafana
// dashboard (every "expr") and the alert rules (every "expr"), with
// where each comes from.
func exprNames(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..", "docs")
	names := map[string]string{}
	add := func(where, expr string) {
		// Label names and values in selectors and by() clauses are not
		// metrics: drop {...} and (...) contents that are label lists.
		expr = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(expr, "")
		expr = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(expr, "")
		for _, n := range metricNameRE.FindAllString(expr, -1) {
			names[n] = where
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "grafana", "silkworm.json"))
	if err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var dash any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "expr" || k == "query" && strings.Contains(s, "_")) {
					add("dashboard "+path, s)
				}
				walk(c, path+"."+k)
			}
		case []any:
			for i, c := range x {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(dash, "")
	raw, err = os.ReadFile(filepath.Join(root, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatalf("alerts: %v", err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts YAML: %v", err)
	}
	nrules := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Expr == "" {
				t.Errorf("rule %s/%s%s has no expr", g.Name, r.Alert, r.Record)
			}
			add("alert "+r.Alert, r.Expr)
			nrules++
		}
	}
	if nrules < 7 {
		t.Errorf("alerts.yml has %d rules, want at least the 7 the docs list", nrules)
	}
	return names
}

// TestMetricsDashboardAndAlertsUseExportedNames loads the Grafana
// dashboard and the alert rules and checks that every metric they query is
// one the broker exports, after produce, fetch and group traffic: the
// files cannot drift from the code.
func TestMetricsDashboardAndAlertsUseExportedNames(t *testing.T) {
	names := exprNames(t)
	if len(names) < 20 {
		t.Fatalf("found only %d metric names in the dashboard and alerts", len(names))
	}
	tb := newTestBroker(t, "group.initial.rebalance.delay.ms=0")
	metricsTraffic(t, tb)
	s := gather(t, tb.b.Metrics())
	exported := map[string]bool{}
	for name, mf := range s {
		exported[name] = true
		if t := mf.GetType(); t == dto.MetricType_HISTOGRAM || t == dto.MetricType_SUMMARY {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[name+suffix] = true
			}
		}
	}
	var missing []string
	for n, where := range names {
		if !exported[n] {
			missing = append(missing, n+" ("+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("not exported by the broker: %s", m)
	}
}

// BenchmarkMetricsGather10kPartitions measures one scrape (Gather) of a
// broker with 10,000 partitions (10 topics of 1,000), each with a
// committed offset of one group (10,000 lag series).
//
//	go test ./internal/broker -run '^$' -bench MetricsGather10k -benchtime 20x
func BenchmarkMetricsGather10kPartitions(b *testing.B) {
	// The logs live in memory: 10,000 partitions need more file
	// descriptors than a test machine may have.
	cfg, err := config.Load("", []string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + b.TempDir()})
	if err != nil {
		b.Fatalf("config: %v", err)
	}
	brk, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), WithStorageFS(newMemFS()))
	if err != nil {
		b.Fatalf("new broker: %v", err)
	}
	if err := brk.Start(); err != nil {
		brk.Close()
		b.Fatalf("start broker: %v", err)
	}
	b.Cleanup(func() { brk.Close() })
	start := time.Now()
	for i := range 10 {
		if _, err := brk.meta.CreateTopic("t"+strconv.Itoa(i), 1000, 1, nil); err != nil {
			b.Fatalf("create topic: %v", err)
		}
	}
	// CreateTopic returns once the image (and so every local log) has it.
	b.Logf("10 topics of 1,000 partitions created in %v", time.Since(start))
	if v, _ := gather(b, brk.Metrics()).value("kafka_server_replicamanager_partitioncount"); v < 10000 {
		b.Fatalf("partitioncount = %v, want 10,000", v)
	}
	// One group with a committed offset on every partition: 10,000 lag
	// series.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brk.Addr()))
	if err != nil {
		b.Fatalf("client: %v", err)
	}
	defer cl.Close()
	offsets := kadm.Offsets{}
	for i := range 10 {
		for p := range int32(1000) {
			offsets.Add(kadm.Offset{Topic: "t" + strconv.Itoa(i), Partition: p, At: 0, LeaderEpoch: -1})
		}
	}
	resp, err := kadm.NewClient(cl).CommitOffsets(b.Context(), "lagging", offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		b.Fatalf("commit offsets: %v", err)
	}
	if v, _ := gather(b, brk.Metrics()).value("kafka_consumergroup_group_sum_lag", "group=lagging"); v != 0 {
		b.Fatalf("sum lag of the group = %v, want 0 (empty partitions)", v)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := brk.Metrics().Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProduce100BMetrics is BenchmarkProduce100B/Loopback with the
// request-path instrumentation on and off (the noMetrics switch,
// brokerMetrics.off), in one run: the cost of metrics per record.
//
//	go test ./internal/broker -run '^$' -bench Produce100BMetrics -benchtime 20000x -count 3
func BenchmarkProduce100BMetrics(b *testing.B) {
	for _, mode := range []string{"on", "off"} {
		b.Run(mode, func(b *testing.B) {
			brk, _ := startBenchBroker(b)
			brk.metrics.off.Store(mode == "off")
			batch, n := benchBatch(100)
			frame := benchProduceFrame(batch)
			rc := benchDial(b, brk.Addr())
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = benchProduceVersion
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			b.ResetTimer()
			inflight := 0
			for b.Loop() {
				if inflight == benchWindow {
					rc.recv(resp, true)
					benchCheckProduce(b, resp)
					inflight--
				}
				rc.send(frame)
				inflight++
			}
			for ; inflight > 0; inflight-- {
				rc.recv(resp, true)
				benchCheckProduce(b, resp)
			}
			b.StopTimer()
			benchReport(b, int64(b.N)*int64(n), cpu0)
		})
	}
}

// BenchmarkRequestMetricsOverhead is the instrumentation of one produce
// request alone, as the broker runs it (dequeue, BrokerTopicMetrics,
// handler return, error counts, answer, response dequeued and written),
// with metrics on and off: the per-request cost without the noise of a
// loopback run.
//
//	go test ./internal/broker -run '^$' -bench RequestMetricsOverhead
func BenchmarkRequestMetricsOverhead(b *testing.B) {
	for _, mode := range []string{"on", "off"} {
		b.Run(mode, func(b *testing.B) {
			brk, _ := startBenchBroker(b)
			brk.metrics.off.Store(mode == "off")
			ts := brk.topic(benchTopic)
			batch, _ := benchBatch(100)
			c := &conn{s: brk.srv}
			presp := kmsg.NewPtrProduceResponse()
			pt := kmsg.NewProduceResponseTopic()
			pt.Partitions = append(pt.Partitions, kmsg.NewProduceResponseTopicPartition())
			presp.Topics = append(presp.Topics, pt)
			wresp := &wire.Response{}
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			b.ResetTimer()
			for b.Loop() {
				r := &request{c: c, received: time.Now()}
				r.hdr.APIKey, r.hdr.APIVersion = 0, 9
				brk.metrics.dequeued(r)
				brk.metrics.produced(ts, batch, 0)
				brk.metrics.handlerReturned(r)
				r.countErrors(presp)
				r.answered(wresp)
				c.responseDequeued(wresp).written()
			}
			b.StopTimer()
			b.ReportMetric(float64((benchCPUTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// memFS is a storage.FS in memory, for benchmarks with more partitions
// than the machine has file descriptors. Safe for concurrent use.
type memFS struct {
	mu    sync.Mutex
	files map[string]*memFile
	dirs  map[string]bool
}

func newMemFS() *memFS { return &memFS{files: map[string]*memFile{}, dirs: map[string]bool{}} }

type memFile struct {
	name string
	mu   sync.Mutex
	// data holds the bytes written; size may be larger (a file truncated
	// up, as index files are preallocated): the rest reads as zeros and
	// takes no memory.
	data []byte
	size int64
	pos  int64 // for Write (O_APPEND or sequential)
}

func (fs *memFS) OpenFile(name string, flag int, _ os.FileMode) (storage.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.files[name]
	if f == nil {
		if flag&os.O_CREATE == 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
		}
		f = &memFile{name: name}
		fs.files[name] = f
		fs.dirs[filepath.Dir(name)] = true
	}
	if flag&os.O_TRUNC != 0 {
		f.mu.Lock()
		f.data, f.size = f.data[:0], 0
		f.mu.Unlock()
	}
	h := &memHandle{f: f}
	if flag&os.O_APPEND != 0 {
		h.appendOnly = true
	}
	return h, nil
}

func (fs *memFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.files, name)
	delete(fs.dirs, name)
	return nil
}

func (fs *memFS) RemoveAll(path string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for n := range fs.files {
		if n == path || strings.HasPrefix(n, path+"/") {
			delete(fs.files, n)
		}
	}
	for d := range fs.dirs {
		if d == path || strings.HasPrefix(d, path+"/") {
			delete(fs.dirs, d)
		}
	}
	return nil
}

func (fs *memFS) Rename(oldpath, newpath string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.files[oldpath]; f != nil {
		delete(fs.files, oldpath)
		f.name = newpath
		fs.files[newpath] = f
		return nil
	}
	if fs.dirs[oldpath] {
		for n, f := range fs.files {
			if strings.HasPrefix(n, oldpath+"/") {
				delete(fs.files, n)
				f.name = newpath + strings.TrimPrefix(n, oldpath)
				fs.files[f.name] = f
			}
		}
		delete(fs.dirs, oldpath)
		fs.dirs[newpath] = true
		return nil
	}
	return &os.PathError{Op: "rename", Path: oldpath, Err: os.ErrNotExist}
}

func (fs *memFS) MkdirAll(path string, _ os.FileMode) error {
	fs.mu.Lock()
	fs.dirs[path] = true
	fs.mu.Unlock()
	return nil
}

func (fs *memFS) ReadDir(name string) ([]os.DirEntry, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	seen := map[string]bool{}
	var out []os.DirEntry
	for n := range fs.files {
		if filepath.Dir(n) == name && !seen[n] {
			seen[n] = true
			out = append(out, memEntry{name: filepath.Base(n)})
		}
	}
	for d := range fs.dirs {
		if filepath.Dir(d) == name && d != name && !seen[d] {
			seen[d] = true
			out = append(out, memEntry{name: filepath.Base(d), dir: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (fs *memFS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.files[name]; f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		return memEntry{name: filepath.Base(name), size: f.size}, nil
	}
	if fs.dirs[name] {
		return memEntry{name: filepath.Base(name), dir: true}, nil
	}
	return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}
}

func (fs *memFS) SyncDir(string) error { return nil }

// memHandle is an open memFile.
type memHandle struct {
	f          *memFile
	appendOnly bool
}

func (h *memHandle) ReadAt(p []byte, off int64) (int, error) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if off >= h.f.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), h.f.size-off))
	clear(p[:n])
	if off < int64(len(h.f.data)) {
		copy(p[:n], h.f.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *memHandle) Write(p []byte) (int, error) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if h.appendOnly {
		h.f.pos = h.f.size
	}
	n := h.writeAtLocked(p, h.f.pos)
	h.f.pos += int64(n)
	return n, nil
}

func (h *memHandle) WriteAt(p []byte, off int64) (int, error) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return h.writeAtLocked(p, off), nil
}

func (h *memHandle) writeAtLocked(p []byte, off int64) int {
	end := off + int64(len(p))
	if end > int64(len(h.f.data)) {
		h.f.data = append(h.f.data, make([]byte, end-int64(len(h.f.data)))...)
	}
	h.f.size = max(h.f.size, end)
	return copy(h.f.data[off:], p)
}

func (h *memHandle) Sync() error { return nil }

func (h *memHandle) Truncate(size int64) error {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if size < int64(len(h.f.data)) {
		h.f.data = h.f.data[:size]
	}
	h.f.size = size
	return nil
}

func (h *memHandle) Close() error { return nil }

func (h *memHandle) Stat() (os.FileInfo, error) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return memEntry{name: filepath.Base(h.f.name), size: h.f.size}, nil
}

func (h *memHandle) Name() string { return h.f.name }

// memEntry is both the os.DirEntry and the os.FileInfo of memFS.
type memEntry struct {
	name string
	size int64
	dir  bool
}

func (e memEntry) Name() string { return e.name }
func (e memEntry) IsDir() bool  { return e.dir }
func (e memEntry) Type() os.FileMode {
	if e.dir {
		return os.ModeDir
	}
	return 0
}
func (e memEntry) Info() (os.FileInfo, error) { return e, nil }
func (e memEntry) Size() int64                { return e.size }
func (e memEntry) Mode() os.FileMode          { return e.Type() | 0o644 }
func (e memEntry) ModTime() time.Time         { return time.Time{} }
func (e memEntry) Sys() any                   { return nil }

// TestMetricsCluster checks the controller and Raft view of a
// three-node cluster: one active controller, one Raft leader that every
// node names, and a replicated topic's ISR gauges.
func TestMetricsCluster(t *testing.T) {
	tc := newTestCluster(t, 3)
	cl := tc.client()
	defer cl.Close()
	ctx := testCtx(t)
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 3, nil, "rep")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	waitFor(t, "one active controller, one Raft leader all nodes name, no under-replicated partition", func() bool {
		var active, leaders, under, parts float64
		leaderIDs := map[float64]bool{}
		for _, b := range tc.brokers {
			s := gather(t, b.Metrics())
			active += s.must(t, "kafka_controller_kafkacontroller_activecontrollercount")
			leaders += s.must(t, "kafka_server_raft_metrics_current_state", "state=leader")
			leaderIDs[s.must(t, "kafka_server_raft_metrics_current_leader")] = true
			under += s.must(t, "kafka_server_replicamanager_underreplicatedpartitions")
			if _, ok := s.value("kafka_log_log_size", "topic=rep", "partition=1"); ok {
				parts++
			}
		}
		return active == 1 && leaders == 1 && len(leaderIDs) == 1 && !leaderIDs[-1] && under == 0 && parts == 3
	})
	for _, b := range tc.brokers {
		s := gather(t, b.Metrics())
		if hw, leo := s.must(t, "kafka_server_raft_metrics_high_watermark"), s.must(t, "kafka_server_raft_metrics_log_end_offset"); hw <= 0 || hw > leo {
			t.Errorf("node %d: metadata high watermark %v, log end %v", b.nodeID, hw, leo)
		}
		if v := s.must(t, "kafka_controller_kafkacontroller_globalpartitioncount"); v < 2 {
			t.Errorf("node %d: globalpartitioncount %v, want >= 2", b.nodeID, v)
		}
	}
}
