package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/bench/omb"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// TestParseOMBWorkload reads OMB workload files: the built-in ones (OMB's
// own files' fields and values), a fork's extra field, OMB's defaults.
func TestParseOMBWorkload(t *testing.T) {
	w, err := BuiltinOMBWorkload(omb.Workloads, "1-topic-16-partitions-1kb")
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "1 producer / 1 consumers on 1 topic" || w.Topics != 1 || w.PartitionsPerTopic != 16 || w.MessageSize != 1024 ||
		w.PayloadFile != "payload/payload-1Kb.data" || w.SubscriptionsPerTopic != 1 || w.ConsumerPerSubscription != 1 ||
		w.ProducersPerTopic != 1 || w.ProducerRate != 50000 || w.ConsumerBacklogSizeGB != 0 || w.TestDuration() != 15*time.Minute {
		t.Errorf("1-topic-16-partitions-1kb parsed as %+v", w)
	}
	if w.WarmupDuration() != time.Minute || w.BacklogDrainRatio != 1 || w.KeyDistributor != OMBNoKey {
		t.Errorf("OMB defaults not applied: warm-up %v, drain ratio %v, key %q", w.WarmupDuration(), w.BacklogDrainRatio, w.KeyDistributor)
	}
	names, err := BuiltinOMBWorkloads(omb.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1-topic-16-partitions-1kb", "1-topic-16-partitions-100b", "max-rate-1-topic-1-partition-1p-1c-1kb"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("built-in workloads %v lack %s", names, want)
		}
	}
	mr, err := BuiltinOMBWorkload(omb.Workloads, "max-rate-1-topic-1-partition-1p-1c-1kb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !mr.UseRandomizedPayloads || mr.RandomBytesRatio != 0.5 || mr.RandomizedPayloadPoolSize != 1000 || mr.ProducerRate != 1e7 {
		t.Errorf("max-rate workload parsed as %+v", mr)
	}

	// OMB's backlog workload, with a fork's extra field and a warm-up.
	w, err = ParseOMBWorkload([]byte(`name: Backlog for 200k rate 4 producers and 4 consumers on 1 topic / 100 partition
topics: 1
partitionsPerTopic: 100
messageSize: 1024
useRandomizedPayloads: true
randomBytesRatio: 0.5
randomizedPayloadPoolSize: 1000
subscriptionsPerTopic: 1
consumerPerSubscription: 4
producersPerTopic: 4
producerRate: 200000
consumerBacklogSizeGB: 512
backlogDrainRatio: 0.9
testDurationMinutes: 5
warmupDurationMinutes: 2
producerStartRate: 10000
keyDistributor: KEY_ROUND_ROBIN
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.ConsumerBacklogSizeGB != 512 || w.BacklogDrainRatio != 0.9 || w.WarmupDuration() != 2*time.Minute ||
		w.KeyDistributor != OMBKeyRoundRobin || strings.Join(w.Unknown, ",") != "producerStartRate" {
		t.Errorf("backlog workload parsed as %+v", w)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"topics: 1\npartitionsPerTopic: 1\nmessageSize: 1\nproducersPerTopic: 1\ntestDurationMinutes: 1\n", "name is empty"},
		{"name: x\ntopics: 0\npartitionsPerTopic: 1\nmessageSize: 1\nproducersPerTopic: 1\ntestDurationMinutes: 1\n", "topics"},
		{"name: x\ntopics: 1\npartitionsPerTopic: 1\nmessageSize: 1\nproducersPerTopic: 1\ntestDurationMinutes: 1\nkeyDistributor: ZIPF\n", "keyDistributor"},
		{"name: x\ntopics: 1\npartitionsPerTopic: 1\nmessageSize: 1\nproducersPerTopic: 1\ntestDurationMinutes: 1\nconsumerBacklogSizeGB: 1\n", "needs consumers"},
	} {
		if _, err := ParseOMBWorkload([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseOMBWorkload(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestParseOMBDriver maps an OMB Kafka driver file to client settings:
// what the Go client has applies, Java-only settings are reported.
func TestParseOMBDriver(t *testing.T) {
	data, err := omb.Workloads.ReadFile("drivers/kafka-throughput.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseOMBDriver(data)
	if err != nil {
		t.Fatal(err)
	}
	if d.ReplicationFactor != 3 || d.topicConfigs()["min.insync.replicas"] != "2" {
		t.Errorf("driver: RF %d, topic configs %v", d.ReplicationFactor, d.topicConfigs())
	}
	prod, ignored := d.clientProps(cli.Producer)
	for k, v := range map[string]string{"acks": "all", "linger.ms": "1", "batch.size": "1048576", "request.timeout.ms": "1200000"} {
		if prod[k] != v {
			t.Errorf("producer %s = %q, want %q (props %v)", k, prod[k], v, prod)
		}
	}
	if _, err := cli.ClientOpts(cli.Producer, func() cli.Props { p := prod.Clone(); p["bootstrap.servers"] = "127.0.0.1:1"; return p }()); err != nil {
		t.Errorf("producer props do not build: %v", err)
	}
	cons, _ := d.clientProps(cli.Consumer)
	if cons["auto.offset.reset"] != "earliest" || cons["enable.auto.commit"] != "false" || cons["max.partition.fetch.bytes"] != "10485760" {
		t.Errorf("consumer props %v", cons)
	}
	if _, ok := prod["bootstrap.servers"]; ok {
		t.Error("the driver's bootstrap.servers must not override the run's cluster")
	}
	t.Logf("not applied: %v", ignored)
	if _, err := ParseOMBDriver([]byte("name: K\nproducerConfig: |\n  no-equals-sign\n")); err == nil {
		t.Error("a properties line without = parsed")
	}
}

// ombResultJSON has exactly OMB's TestResult fields and JSON names
// (benchmark-framework/.../TestResult.java).
type ombResultJSON struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg      []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct    []float64 `json:"publishLatency50pct"`
	PublishLatency75pct    []float64 `json:"publishLatency75pct"`
	PublishLatency95pct    []float64 `json:"publishLatency95pct"`
	PublishLatency99pct    []float64 `json:"publishLatency99pct"`
	PublishLatency999pct   []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct  []float64 `json:"publishLatency9999pct"`
	PublishLatency99999pct []float64 `json:"publishLatency99999pct"`
	PublishLatencyMax      []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg      []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct    []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct    []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct    []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct    []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct   []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct  []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatency99999pct []int64   `json:"publishDelayLatency99999pct"`
	PublishDelayLatencyMax      []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg      float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct    float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct    float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct    float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct    float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct   float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct  float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatency99999pct float64 `json:"aggregatedPublishLatency99999pct"`
	AggregatedPublishLatencyMax      float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg      float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct    int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct    int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct    int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct    int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct   int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct  int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatency99999pct int64   `json:"aggregatedPublishDelayLatency99999pct"`
	AggregatedPublishDelayLatencyMax      int64   `json:"aggregatedPublishDelayLatencyMax"`

	AggregatedPublishLatencyQuantiles      map[string]float64 `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles map[string]int64   `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg      []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct    []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct    []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct    []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct    []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct   []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct  []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatency99999pct []float64 `json:"endToEndLatency99999pct"`
	EndToEndLatencyMax      []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles map[string]float64 `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg      float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct    float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct    float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct    float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct    float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct   float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct  float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatency99999pct float64 `json:"aggregatedEndToEndLatency99999pct"`
	AggregatedEndToEndLatencyMax      float64 `json:"aggregatedEndToEndLatencyMax"`
}

// decodeOMB checks the JSON has every one of OMB's fields and no other,
// and decodes it.
func decodeOMB(t *testing.T, data []byte) ombResultJSON {
	t.Helper()
	var got ombResultJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("result JSON does not decode into OMB's TestResult fields: %v", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}
	rt := reflect.TypeOf(got)
	for i := range rt.NumField() {
		name := rt.Field(i).Tag.Get("json")
		raw, ok := keys[name]
		if !ok {
			t.Errorf("result JSON lacks OMB field %s", name)
		} else if string(raw) == "null" {
			t.Errorf("OMB field %s is null (create_charts.py needs a list or a number)", name)
		}
	}
	return got
}

func tinyWorkload(rate float64) *OMBWorkload {
	zero := 0.0
	return &OMBWorkload{Name: "tiny", Topics: 1, PartitionsPerTopic: 2, MessageSize: 64, SubscriptionsPerTopic: 1,
		ConsumerPerSubscription: 1, ProducersPerTopic: 2, ProducerRate: rate, TestDurationMinutes: 1,
		WarmupDurationMinutes: &zero, BacklogDrainRatio: 1, KeyDistributor: OMBNoKey}
}

// TestOMBRunFixedRate runs a tiny workload (seconds, 400 msg/s) on an
// embedded broker: the JSON has OMB's fields, latencies are measured, and
// the number of messages sent is the rate times the measured time (a
// count, with a generous margin), not what the broker could take.
func TestOMBRunFixedRate(t *testing.T) {
	const rate = 400
	w := tinyWorkload(rate)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	res, err := RunOMB(ctx, OMBOptions{Workload: w, Embedded: testEmbedded(t), Duration: 3 * time.Second,
		Warmup: time.Second, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got := decodeOMB(t, buf.Bytes())
	if got.Workload != "tiny" || got.Driver != "Kafka" || got.MessageSize != 64 || got.Partitions != 2 || got.ProducersPerTopic != 2 {
		t.Errorf("header fields: %+v", got)
	}
	if n := len(got.PublishRate); n < 3 || len(got.ConsumeRate) != n || len(got.Backlog) != n || len(got.EndToEndLatency99pct) != n || len(got.PublishDelayLatency99pct) != n {
		t.Errorf("%d intervals (publishRate), consumeRate %d, backlog %d: want one entry per 1 s interval of 3 s",
			n, len(got.ConsumeRate), len(got.Backlog))
	}
	if got.AggregatedPublishLatency99pct <= 0 || got.AggregatedEndToEndLatency99pct <= 0 || got.AggregatedPublishLatencyMax < got.AggregatedPublishLatency99pct {
		t.Errorf("aggregated latencies: publish p99 %v max %v, e2e p99 %v", got.AggregatedPublishLatency99pct,
			got.AggregatedPublishLatencyMax, got.AggregatedEndToEndLatency99pct)
	}
	if got.AggregatedPublishLatencyQuantiles["99"] != got.AggregatedPublishLatency99pct || len(got.AggregatedEndToEndLatencyQuantiles) < 100 {
		t.Errorf("quantile maps: publish[99] %v, %d e2e quantiles", got.AggregatedPublishLatencyQuantiles["99"], len(got.AggregatedEndToEndLatencyQuantiles))
	}
	info := res.Run
	want := rate * info.MeasuredSeconds
	if math.Abs(float64(info.Sent)-want) > 0.25*want+20 {
		t.Errorf("sent %d messages in %.2f s at %d msg/s, want about %.0f", info.Sent, info.MeasuredSeconds, rate, want)
	}
	if info.Received < info.Sent/2 {
		t.Errorf("received %d of %d", info.Received, info.Sent)
	}
	var sum bytes.Buffer
	_ = res.WriteSummary(&sum)
	if !strings.Contains(sum.String(), "target rate 400 msg/s") {
		t.Errorf("summary: %s", sum.String())
	}
}

// TestOMBBacklog runs OMB's backlog mode small: consumers pause until
// about 1500 messages wait, then drain them; the run ends once drained.
func TestOMBBacklog(t *testing.T) {
	w := tinyWorkload(1500)
	w.ConsumerBacklogSizeGB = float64(1500*w.MessageSize) / (1 << 30)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	res, err := RunOMB(ctx, OMBOptions{Workload: w, Embedded: testEmbedded(t), Duration: time.Second, Interval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Run.PeakBacklog < 700 {
		t.Errorf("peak backlog %d messages, want about 1500 built before draining (backlog %v)", res.Run.PeakBacklog, res.Backlog)
	}
	if last := res.Backlog[len(res.Backlog)-1]; last > 1000 {
		t.Errorf("run ended with a backlog of %d (drained means ≤ 1000)", last)
	}
}
