package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func mustBroker(t *testing.T, props map[string]string) *Broker {
	t.Helper()
	b, err := NewBroker(props)
	if err != nil {
		t.Fatalf("NewBroker(%v): %v", props, err)
	}
	return b
}

func TestDefaultsMatchKafka(t *testing.T) {
	b := DefaultBroker()
	got := map[string]any{
		"NodeID": b.NodeID, "Listeners": b.Listeners, "AdvertisedListeners": b.AdvertisedListeners,
		"LogDirs": b.LogDirs, "NumPartitions": b.NumPartitions, "AutoCreateTopicsEnable": b.AutoCreateTopicsEnable,
		"DefaultReplicationFactor": b.DefaultReplicationFactor, "DeleteTopicEnable": b.DeleteTopicEnable,
		"LogSegmentBytes": b.LogSegmentBytes, "LogRollMs": b.LogRollMs, "LogRollJitterMs": b.LogRollJitterMs,
		"LogRetentionMs": b.LogRetentionMs, "LogRetentionBytes": b.LogRetentionBytes,
		"LogRetentionCheckIntervalMs": b.LogRetentionCheckIntervalMs, "LogIndexIntervalBytes": b.LogIndexIntervalBytes,
		"LogIndexSizeMaxBytes": b.LogIndexSizeMaxBytes, "LogSegmentDeleteDelayMs": b.LogSegmentDeleteDelayMs,
		"LogFlushIntervalMessages": b.LogFlushIntervalMessages, "LogFlushIntervalMs": b.LogFlushIntervalMs,
		"LogFlushSchedulerIntervalMs": b.LogFlushSchedulerIntervalMs, "LogFlushOffsetCheckpointIntervalMs": b.LogFlushOffsetCheckpointIntervalMs,
		"MessageMaxBytes": b.MessageMaxBytes, "SocketRequestMaxBytes": b.SocketRequestMaxBytes,
		"SocketSendBufferBytes": b.SocketSendBufferBytes, "SocketReceiveBufferBytes": b.SocketReceiveBufferBytes,
		"NumNetworkThreads": b.NumNetworkThreads, "NumIOThreads": b.NumIOThreads, "QueuedMaxRequests": b.QueuedMaxRequests,
		"ConnectionsMaxIdleMs": b.ConnectionsMaxIdleMs, "CompressionType": b.CompressionType,
		"LogMessageTimestampType": b.LogMessageTimestampType, "LogCleanupPolicy": b.LogCleanupPolicy,
		"MinInsyncReplicas": b.MinInsyncReplicas, "OffsetsTopicNumPartitions": b.OffsetsTopicNumPartitions,
		"OffsetsTopicReplicationFactor": b.OffsetsTopicReplicationFactor, "GroupInitialRebalanceDelayMs": b.GroupInitialRebalanceDelayMs,
		"GroupMinSessionTimeoutMs": b.GroupMinSessionTimeoutMs, "GroupMaxSessionTimeoutMs": b.GroupMaxSessionTimeoutMs,
		"GroupMaxSize": b.GroupMaxSize, "OffsetsRetentionMinutes": b.OffsetsRetentionMinutes,
		"ReplicaFetchMaxBytes": b.ReplicaFetchMaxBytes, "ReplicaFetchWaitMaxMs": b.ReplicaFetchWaitMaxMs,
		"ReplicaFetchMinBytes": b.ReplicaFetchMinBytes, "ReplicaLagTimeMaxMs": b.ReplicaLagTimeMaxMs,
		"NumReplicaFetchers": b.NumReplicaFetchers, "UncleanLeaderElectionEnable": b.UncleanLeaderElectionEnable,
		"AutoLeaderRebalanceEnable": b.AutoLeaderRebalanceEnable, "BrokerSessionTimeoutMs": b.BrokerSessionTimeoutMs,
		"TransactionalIDExpirationMs": b.TransactionalIDExpirationMs, "ProducerIDExpirationMs": b.ProducerIDExpirationMs,
		"MaxIncrementalFetchSessionCacheSlots": b.MaxIncrementalFetchSessionCacheSlots,
		"InterBrokerListenerName":              b.InterBrokerListenerName, "ProcessRoles": b.ProcessRoles,
	}
	const longMax = int64(1<<63 - 1)
	want := map[string]any{
		"NodeID": int32(1), "Listeners": []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		"AdvertisedListeners": []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		"LogDirs":             []string{"./silkworm-data"}, "NumPartitions": 1, "AutoCreateTopicsEnable": true,
		"DefaultReplicationFactor": 1, "DeleteTopicEnable": true,
		"LogSegmentBytes": 1073741824, "LogRollMs": int64(168 * 3600000), "LogRollJitterMs": int64(0),
		"LogRetentionMs": int64(168 * 3600000), "LogRetentionBytes": int64(-1),
		"LogRetentionCheckIntervalMs": int64(300000), "LogIndexIntervalBytes": 4096,
		"LogIndexSizeMaxBytes": 10485760, "LogSegmentDeleteDelayMs": int64(60000),
		"LogFlushIntervalMessages": longMax, "LogFlushIntervalMs": longMax,
		"LogFlushSchedulerIntervalMs": longMax, "LogFlushOffsetCheckpointIntervalMs": 60000,
		"MessageMaxBytes": 1048588, "SocketRequestMaxBytes": 104857600,
		"SocketSendBufferBytes": 102400, "SocketReceiveBufferBytes": 102400,
		"NumNetworkThreads": 3, "NumIOThreads": 8, "QueuedMaxRequests": 500,
		"ConnectionsMaxIdleMs": int64(600000), "CompressionType": "producer",
		"LogMessageTimestampType": "CreateTime", "LogCleanupPolicy": []string{"delete"},
		"MinInsyncReplicas": 1, "OffsetsTopicNumPartitions": 50,
		"OffsetsTopicReplicationFactor": 3, "GroupInitialRebalanceDelayMs": 3000,
		"GroupMinSessionTimeoutMs": 6000, "GroupMaxSessionTimeoutMs": 1800000,
		"GroupMaxSize": 2147483647, "OffsetsRetentionMinutes": 10080,
		"ReplicaFetchMaxBytes": 1048576, "ReplicaFetchWaitMaxMs": 500,
		"ReplicaFetchMinBytes": 1, "ReplicaLagTimeMaxMs": int64(30000),
		"NumReplicaFetchers": 1, "UncleanLeaderElectionEnable": false,
		"AutoLeaderRebalanceEnable": true, "BrokerSessionTimeoutMs": 9000,
		"TransactionalIDExpirationMs": 604800000, "ProducerIDExpirationMs": 86400000,
		"MaxIncrementalFetchSessionCacheSlots": 1000,
		"InterBrokerListenerName":              "PLAINTEXT", "ProcessRoles": []string{"broker", "controller"},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
	if len(b.Ignored) != 0 {
		t.Errorf("Ignored = %v, want none", b.Ignored)
	}
	if err := b.Validate(); err != nil {
		t.Errorf("Validate on defaults: %v", err)
	}
}

func TestRetentionPrecedence(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  int64
	}{
		{nil, 168 * 3600000},
		{map[string]string{"log.retention.hours": "1"}, 3600000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "30"}, 30 * 60000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "30", "log.retention.ms": "1234"}, 1234},
		{map[string]string{"log.retention.ms": "1234", "log.retention.hours": "5"}, 1234},
		{map[string]string{"log.retention.minutes": "2", "log.retention.hours": "5"}, 120000},
		{map[string]string{"log.retention.ms": "-1"}, -1},
		{map[string]string{"log.retention.hours": "-1"}, -1},
		{map[string]string{"log.retention.minutes": "-5"}, -1}, // any negative is unlimited, as in Kafka
	}
	for _, tt := range tests {
		b := mustBroker(t, tt.props)
		if b.LogRetentionMs != tt.want {
			t.Errorf("%v: LogRetentionMs = %d, want %d", tt.props, b.LogRetentionMs, tt.want)
		}
	}
	if _, err := NewBroker(map[string]string{"log.retention.ms": "0"}); err == nil || !strings.Contains(err.Error(), "log.retention.ms must be unlimited (-1)") {
		t.Errorf("log.retention.ms=0: err = %v, want Kafka's bound error", err)
	}
}

func TestRollPrecedence(t *testing.T) {
	b := mustBroker(t, map[string]string{"log.roll.hours": "2"})
	if b.LogRollMs != 2*3600000 {
		t.Errorf("LogRollMs = %d, want 2h", b.LogRollMs)
	}
	b = mustBroker(t, map[string]string{"log.roll.hours": "2", "log.roll.ms": "5000"})
	if b.LogRollMs != 5000 {
		t.Errorf("LogRollMs = %d, want 5000", b.LogRollMs)
	}
	b = mustBroker(t, map[string]string{"log.roll.jitter.hours": "1"})
	if b.LogRollJitterMs != 3600000 {
		t.Errorf("LogRollJitterMs = %d, want 1h", b.LogRollJitterMs)
	}
	b = mustBroker(t, map[string]string{"log.roll.jitter.hours": "1", "log.roll.jitter.ms": "7"})
	if b.LogRollJitterMs != 7 {
		t.Errorf("LogRollJitterMs = %d, want 7", b.LogRollJitterMs)
	}
	b = mustBroker(t, map[string]string{"log.flush.scheduler.interval.ms": "300"})
	if b.LogFlushIntervalMs != 300 {
		t.Errorf("LogFlushIntervalMs = %d, want the scheduler interval 300", b.LogFlushIntervalMs)
	}
	b = mustBroker(t, map[string]string{"log.dir": "/a", "log.dirs": "/b, /c"})
	if !reflect.DeepEqual(b.LogDirs, []string{"/b", "/c"}) {
		t.Errorf("LogDirs = %v, want log.dirs to win", b.LogDirs)
	}
	b = mustBroker(t, map[string]string{"log.dir": "/a"})
	if !reflect.DeepEqual(b.LogDirs, []string{"/a"}) {
		t.Errorf("LogDirs = %v, want log.dir", b.LogDirs)
	}
	b = mustBroker(t, map[string]string{"broker.id": "7"})
	if b.NodeID != 7 {
		t.Errorf("NodeID = %d, want broker.id alias 7", b.NodeID)
	}
	if _, err := NewBroker(map[string]string{"broker.id": "7", "node.id": "8"}); err == nil {
		t.Error("node.id != broker.id: want error")
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadOverridesWinOverFile(t *testing.T) {
	path := writeFile(t, "num.io.threads=4\nlog.retention.hours=10\nnum.partitions=3\n")
	b, err := Load(path, []string{"num.io.threads=16", "log.retention.hours=1", "num.partitions=5", "num.partitions=6"})
	if err != nil {
		t.Fatal(err)
	}
	if b.NumIOThreads != 16 || b.LogRetentionMs != 3600000 || b.NumPartitions != 6 {
		t.Fatalf("got io=%d retention=%d partitions=%d, want overrides (later wins)", b.NumIOThreads, b.LogRetentionMs, b.NumPartitions)
	}
	if b, err := Load("", nil); err != nil || b.NumIOThreads != 8 {
		t.Fatalf("Load(\"\") = %v, %v; want defaults", b, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Fatal("missing file: want error")
	}
	if _, err := Load("", []string{"novalue"}); err == nil || !strings.Contains(err.Error(), "novalue") {
		t.Fatalf("bad override: err = %v", err)
	}
}

func TestUnknownKeyError(t *testing.T) {
	_, err := NewBroker(map[string]string{"num.io.thread": "8"})
	if err == nil || !strings.Contains(err.Error(), `"num.io.thread"`) {
		t.Fatalf("err = %v, want it to name the unknown key", err)
	}
	_, err = NewBroker(map[string]string{"silkworm.nope": "1"})
	if err == nil || !strings.Contains(err.Error(), "silkworm.nope") {
		t.Fatalf("err = %v, want unknown silkworm key rejected", err)
	}
}

func TestInvalidValueErrors(t *testing.T) {
	tests := []struct {
		key, value, want string
	}{
		{"num.io.threads", "abc", `invalid value "abc" for configuration num.io.threads: must be an integer >= 1`},
		{"num.io.threads", "0", `invalid value "0" for configuration num.io.threads: must be an integer >= 1`},
		{"message.max.bytes", "-1", `invalid value "-1" for configuration message.max.bytes: must be an integer >= 0`},
		{"log.segment.bytes", "13", `invalid value "13" for configuration log.segment.bytes: must be an integer >= 14`},
		{"log.index.interval.bytes", "-1", `for configuration log.index.interval.bytes: must be an integer >= 0`},
		{"queued.max.requests", "0", `for configuration queued.max.requests: must be an integer >= 1`},
		{"num.io.threads", "99999999999", `must be an integer >= 1`},
		{"log.retention.bytes", "1.5", `for configuration log.retention.bytes: must be a long integer`},
		{"auto.create.topics.enable", "yes", `invalid value "yes" for configuration auto.create.topics.enable: must be true or false`},
		{"compression.type", "brotli", `must be one of uncompressed, zstd, lz4, snappy, gzip, producer`},
		{"log.message.timestamp.type", "createtime", `must be one of CreateTime, LogAppendTime`},
		{"log.cleanup.policy", "delete,shred", `each item must be one of compact, delete`},
		{"log.cleaner.min.cleanable.ratio", "1.5", `must be a number in [0, 1]`},
		{"compression.gzip.level", "10", `must be an integer in [1, 9] or -1`},
		{"offsets.topic.replication.factor", "70000", `must be a short integer >= 1`},
		{"listeners", "PLAINTEXT:9092", `listener "PLAINTEXT:9092" must look like NAME://host:port`},
		{"listeners", "PLAINTEXT://:99999", `invalid port`},
		{"controller.quorum.voters", "x@localhost:9093", `must look like id@host:port`},
		{"listener.security.protocol.map", "A:TLS", `security protocol "TLS"`},
		{"replica.selector.class", "com.example.Nearest", `replica.selector.class: class "com.example.Nearest" is not available`},
	}
	for _, tt := range tests {
		_, err := NewBroker(map[string]string{tt.key: tt.value})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%s: err = %v, want it to contain %q", tt.key, tt.value, err, tt.want)
		}
	}
	// Values are trimmed and booleans are case-insensitive, as in Kafka.
	b := mustBroker(t, map[string]string{"num.io.threads": " 4 ", "delete.topic.enable": "FALSE"})
	if b.NumIOThreads != 4 || b.DeleteTopicEnable {
		t.Errorf("trimmed/case-insensitive parse: io=%d delete=%v", b.NumIOThreads, b.DeleteTopicEnable)
	}
}

func TestAllErrorsCollected(t *testing.T) {
	path := writeFile(t, "num.io.threads=abc\nbogus.key=1\nmessage.max.bytes=-5\n")
	_, err := Load(path, []string{"another.bogus=2", "num.network.threads=0"})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"num.io.threads", "bogus.key", "message.max.bytes", "another.bogus", "num.network.threads"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) < 5 {
		t.Errorf("want a joined error with every problem, got %v", err)
	}
}

func TestIgnoredKnownKeys(t *testing.T) {
	b := mustBroker(t, map[string]string{
		"ssl.keystore.location":                           "/k.jks",
		"zookeeper.connect":                               "zk:2181",
		"listener.name.internal.ssl.client.auth":          "required",
		"listener.name.internal.ssl.engine.factory.class": "x.Y",
		"background.threads":                              "4",
		"num.io.threads":                                  "4",
		"log.retention.hours":                             "1",
		"log.cleaner.delete.retention.ms":                 "1000", // supplies delete.retention.ms: supported
		// Read by name where used (share-group defaults and bounds, as
		// librdkafka's test setup sets them): supported.
		"group.share.min.record.lock.duration.ms":          "1000",
		"group.share.record.lock.duration.ms":              "5000",
		"share.coordinator.state.topic.replication.factor": "1",
		"offsets.commit.timeout.ms":                        "5000",
	})
	// ssl.* keys Silkworm implements are not ignored, per listener either.
	want := []string{"background.threads", "listener.name.internal.ssl.engine.factory.class", "zookeeper.connect"}
	if !reflect.DeepEqual(b.Ignored, want) {
		t.Errorf("Ignored = %v, want %v", b.Ignored, want)
	}
	// Ignored keys are still validated.
	if _, err := NewBroker(map[string]string{"background.threads": "0"}); err == nil {
		t.Error("background.threads=0: want Kafka's atLeast(1) error even though ignored")
	}
}

func TestSampleServerProperties(t *testing.T) {
	for _, name := range []string{"kraft-server.properties", "kraft-3x-server.properties"} {
		t.Run(name, func(t *testing.T) {
			b, err := Load(filepath.Join("testdata", name), nil)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if b.NodeID != 1 || !reflect.DeepEqual(b.ProcessRoles, []string{"broker", "controller"}) {
				t.Errorf("NodeID=%d roles=%v", b.NodeID, b.ProcessRoles)
			}
			wantListeners := []Listener{
				{Name: "PLAINTEXT", Host: "", Port: 9092, SecurityProtocol: "PLAINTEXT"},
				{Name: "CONTROLLER", Host: "", Port: 9093, SecurityProtocol: "PLAINTEXT"},
			}
			if !reflect.DeepEqual(b.Listeners, wantListeners) {
				t.Errorf("Listeners = %+v", b.Listeners)
			}
			adv := b.BrokerAdvertisedListeners()
			if len(adv) != 1 || adv[0].Addr() != "localhost:9092" || adv[0].Name != "PLAINTEXT" {
				t.Errorf("BrokerAdvertisedListeners = %+v, want PLAINTEXT://localhost:9092 only", adv)
			}
			if b.InterBrokerListenerName != "PLAINTEXT" || !reflect.DeepEqual(b.ControllerListenerNames, []string{"CONTROLLER"}) {
				t.Errorf("inter=%q controller=%v", b.InterBrokerListenerName, b.ControllerListenerNames)
			}
			if !reflect.DeepEqual(b.LogDirs, []string{"/tmp/kraft-combined-logs"}) || b.OffsetsTopicReplicationFactor != 1 ||
				b.TransactionStateLogMinISR != 1 || b.LogRetentionMs != 168*3600000 || b.LogSegmentBytes != 1073741824 {
				t.Errorf("log settings: %v rf=%d minisr=%d ret=%d seg=%d", b.LogDirs, b.OffsetsTopicReplicationFactor,
					b.TransactionStateLogMinISR, b.LogRetentionMs, b.LogSegmentBytes)
			}
		})
	}
	b, err := Load(filepath.Join("testdata", "kraft-3x-server.properties"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.ControllerQuorumVoters, []Voter{{ID: 1, Host: "localhost", Port: 9093}}) {
		t.Errorf("voters = %+v", b.ControllerQuorumVoters)
	}
}

func TestListenerValidation(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"}, "different name"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9092"}, "different port"},
		{map[string]string{"listeners": "CLIENT://:9092"}, "no security protocol"},
		{map[string]string{"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "0.0.0.0"},
		{map[string]string{"advertised.listeners": "OTHER://h:1", "listener.security.protocol.map": "OTHER:PLAINTEXT,PLAINTEXT:PLAINTEXT"}, "subset"},
		{map[string]string{"inter.broker.listener.name": "INTERNAL", "listener.security.protocol.map": "INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT"}, "inter.broker.listener.name"},
		{map[string]string{"controller.listener.names": "CONTROLLER"}, "controller.listener.names must only contain values appearing in the listeners"},
		{map[string]string{"controller.quorum.voters": "2@h:9093"}, "node id 1 must be included"},
		{map[string]string{"process.roles": "broker,router"}, "each item must be one of broker, controller"},
	}
	for _, tt := range tests {
		_, err := NewBroker(tt.props)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.props, err, tt.want)
		}
	}
	// IPv4 and IPv6 listeners may share a port, as in Kafka.
	b := mustBroker(t, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092"})
	if b.Listeners[1].Host != "::1" || b.Listeners[1].Addr() != "[::1]:9092" {
		t.Errorf("IPv6 listener = %+v", b.Listeners[1])
	}
}

func TestValidateTypedFields(t *testing.T) {
	b := DefaultBroker()
	b.NumIOThreads = 0
	b.MessageMaxBytes = -1
	b.CompressionType = "brotli"
	err := b.Validate()
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"num.io.threads", "message.max.bytes", "compression.type"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %s: %v", want, err)
		}
	}
}

func TestKeyTables(t *testing.T) {
	for _, k := range BrokerKeys() {
		if k.Default == nil {
			continue
		}
		kk := brokerKeyIndex[k.Name]
		if _, err := checkValue(kk, *k.Default); err != nil {
			t.Errorf("default of %s does not pass its own validator: %v", k.Name, err)
		}
	}
	for _, f := range brokerFields {
		if _, ok := brokerKeyIndex[f.key]; !ok {
			t.Errorf("field key %s not in the key table", f.key)
		}
	}
	for _, k := range compositeKeys {
		if _, ok := brokerKeyIndex[k]; !ok {
			t.Errorf("composite key %s not in the key table", k)
		}
	}
	for _, tk := range TopicKeys {
		if err := ValidateTopicConfig(tk.Name, tk.Default); err != nil {
			t.Errorf("topic default %s=%q invalid: %v", tk.Name, tk.Default, err)
		}
		if _, ok := topicFields[tk.Name]; !ok {
			t.Errorf("topic key %s has no Topic field", tk.Name)
		}
		for _, s := range tk.Synonyms {
			if _, ok := brokerKeyIndex[s]; !ok {
				t.Errorf("topic key %s: synonym %s not a broker key", tk.Name, s)
			}
		}
	}
	if len(topicFields) != len(TopicKeys) {
		t.Errorf("%d topic fields for %d topic keys", len(topicFields), len(TopicKeys))
	}
	if len(BrokerKeys()) < 350 {
		t.Errorf("only %d broker keys; the Kafka list is incomplete", len(BrokerKeys()))
	}
}

func TestListenerValue(t *testing.T) {
	b := mustBroker(t, map[string]string{
		"ssl.client.auth":                                       "requested",
		"listener.name.internal.ssl.client.auth":                "required",
		"listener.name.external.scram-sha-256.sasl.jaas.config": "x required;",
		"sasl.jaas.config":                                      "broker-wide required;",
	})
	if v, _ := b.ListenerValue("INTERNAL", "ssl.client.auth"); v != "required" {
		t.Errorf("INTERNAL ssl.client.auth = %q, want the listener override", v)
	}
	if v, _ := b.ListenerValue("EXTERNAL", "ssl.client.auth"); v != "requested" {
		t.Errorf("EXTERNAL ssl.client.auth = %q, want the broker-wide value", v)
	}
	if v, _ := b.ListenerMechanismValue("EXTERNAL", "SCRAM-SHA-256", "sasl.jaas.config"); v != "x required;" {
		t.Errorf("mechanism jaas = %q", v)
	}
	if v, _ := b.ListenerMechanismValue("EXTERNAL", "PLAIN", "sasl.jaas.config"); v != "broker-wide required;" {
		t.Errorf("fallback jaas = %q", v)
	}
	if _, err := NewBroker(map[string]string{"listener.name.internal.ssl.client.auth": "sometimes"}); err == nil ||
		!strings.Contains(err.Error(), "listener.name.internal.ssl.client.auth") {
		t.Errorf("an invalid per-listener value must be refused naming the key, got %v", err)
	}
}

// A listener's override of a secret (a PEM key, a password) is as secret
// as the key it overrides: DescribeConfigs must not show it.
func TestListenerSecretsAreSensitive(t *testing.T) {
	b := mustBroker(t, map[string]string{
		"listener.name.ssl.ssl.keystore.key":        "-----BEGIN PRIVATE KEY-----",
		"listener.name.ssl.ssl.truststore.password": "secret",
		"listener.name.ssl.ssl.client.auth":         "required",
	})
	for _, e := range DescribeBroker(b, nil, nil) {
		switch e.Name {
		case "listener.name.ssl.ssl.keystore.key", "listener.name.ssl.ssl.truststore.password":
			if !e.Sensitive || e.Value != nil {
				t.Errorf("%s: sensitive %v, value %v; want hidden", e.Name, e.Sensitive, e.Value)
			}
		case "listener.name.ssl.ssl.client.auth":
			if e.Sensitive || e.Value == nil || *e.Value != "required" {
				t.Errorf("%s: sensitive %v, value %v; want shown", e.Name, e.Sensitive, e.Value)
			}
		}
	}
}

// The storage cache bounds are Silkworm keys with the storage package's
// defaults, and reject values below 1.
func TestStorageCacheBounds(t *testing.T) {
	b := DefaultBroker()
	if b.MaxOpenSegmentFiles != 1000 || b.IndexCacheBytes != 32<<20 {
		t.Fatalf("defaults: %d open segment files, %d index cache bytes", b.MaxOpenSegmentFiles, b.IndexCacheBytes)
	}
	b = mustBroker(t, map[string]string{"silkworm.log.max.open.segment.files": "50", "silkworm.log.index.cache.bytes": "1048576"})
	if b.MaxOpenSegmentFiles != 50 || b.IndexCacheBytes != 1<<20 {
		t.Fatalf("set: %d open segment files, %d index cache bytes", b.MaxOpenSegmentFiles, b.IndexCacheBytes)
	}
	for _, k := range []string{"silkworm.log.max.open.segment.files", "silkworm.log.index.cache.bytes"} {
		if _, err := NewBroker(map[string]string{k: "0"}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=0: %v", k, err)
		}
	}
}

// TestAdvertisedListenersReadOnly: Kafka 4.0 made advertised.listeners
// read-only (no more dynamic listener changes); DescribeConfigs says so
// and AlterConfigs refuses it (kafka-python's
// test_describe_configs_broker_resource_returns_configs).
func TestAdvertisedListenersReadOnly(t *testing.T) {
	b := mustBroker(t, map[string]string{"advertised.listeners": "PLAINTEXT://127.0.0.1:9092"})
	for _, e := range DescribeBroker(b, nil, nil) {
		if e.Name == "advertised.listeners" && (!e.ReadOnly || e.Source != kmsg.ConfigSourceStaticBrokerConfig) {
			t.Errorf("advertised.listeners: read-only %v, source %v; want read-only, static", e.ReadOnly, e.Source)
		}
	}
	if err := ValidateBrokerDynamic("advertised.listeners", "PLAINTEXT://127.0.0.1:9093"); err == nil {
		t.Error("dynamic advertised.listeners accepted; want Kafka's 'Cannot update these configs dynamically'")
	}
}
