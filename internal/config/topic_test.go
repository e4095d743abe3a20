package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestResolveTopicPrecedence(t *testing.T) {
	// Kafka defaults with a default broker.
	tc, err := ResolveTopic(DefaultBroker(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc.RetentionMs != 604800000 || tc.SegmentBytes != 1073741824 || tc.MaxMessageBytes != 1048588 ||
		!reflect.DeepEqual(tc.CleanupPolicy, []string{"delete"}) || tc.MessageTimestampType != "CreateTime" ||
		tc.CompressionType != "producer" || tc.MinInsyncReplicas != 1 || tc.SegmentMs != 604800000 ||
		tc.FileDeleteDelayMs != 60000 || tc.RetentionBytes != -1 || tc.MinCleanableDirtyRatio != 0.5 ||
		tc.DeleteRetentionMs != 86400000 || tc.SegmentIndexBytes != 10485760 || tc.IndexIntervalBytes != 4096 ||
		tc.FlushMessages != 1<<63-1 || tc.MaxCompactionLagMs != 1<<63-1 || tc.MessageTimestampBeforeMaxMs != 1<<63-1 ||
		tc.LocalRetentionMs != -2 || tc.MessageDownconversionEnable != true || tc.Preallocate {
		t.Errorf("defaults: %+v", tc)
	}

	// Broker settings feed topic defaults, with the broker's own precedence.
	b := mustBroker(t, map[string]string{
		"log.retention.hours": "2", "log.segment.bytes": "1048576", "message.max.bytes": "2000000",
		"log.cleanup.policy": "compact,delete", "log.message.timestamp.type": "LogAppendTime",
		"compression.type": "zstd", "min.insync.replicas": "2", "log.roll.hours": "1",
		"log.segment.delete.delay.ms": "5", "log.cleaner.min.cleanable.ratio": "0.25",
		"log.flush.interval.messages": "100", "log.preallocate": "TRUE",
	})
	tc, err = ResolveTopic(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc.RetentionMs != 2*3600000 || tc.SegmentBytes != 1048576 || tc.MaxMessageBytes != 2000000 ||
		!reflect.DeepEqual(tc.CleanupPolicy, []string{"compact", "delete"}) || tc.MessageTimestampType != "LogAppendTime" ||
		tc.CompressionType != "zstd" || tc.MinInsyncReplicas != 2 || tc.SegmentMs != 3600000 ||
		tc.FileDeleteDelayMs != 5 || tc.MinCleanableDirtyRatio != 0.25 || tc.FlushMessages != 100 || !tc.Preallocate {
		t.Errorf("broker-derived: %+v", tc)
	}

	// Topic overrides win over the broker.
	tc, err = ResolveTopic(b, map[string]string{
		"retention.ms": "1000", "segment.bytes": "2048", "cleanup.policy": "compact", "compression.type": "lz4",
		"unclean.leader.election.enable": "true", "message.timestamp.type": "CreateTime", "segment.ms": " 77 ",
	})
	if err != nil {
		t.Fatal(err)
	}
	if tc.RetentionMs != 1000 || tc.SegmentBytes != 2048 || !reflect.DeepEqual(tc.CleanupPolicy, []string{"compact"}) ||
		tc.CompressionType != "lz4" || !tc.UncleanLeaderElectionEnable || tc.MessageTimestampType != "CreateTime" ||
		tc.SegmentMs != 77 || tc.MaxMessageBytes != 2000000 {
		t.Errorf("overrides: %+v", tc)
	}
}

func TestResolveTopicErrors(t *testing.T) {
	b := DefaultBroker()
	_, err := ResolveTopic(b, map[string]string{"retention.hours": "1"})
	if err == nil || err.Error() != "Unknown topic config name: retention.hours" {
		t.Errorf("unknown key: err = %v", err)
	}
	tests := []struct{ key, value, want string }{
		{"retention.ms", "-2", `invalid value "-2" for configuration retention.ms: must be a long integer >= -1`},
		{"segment.bytes", "10", `invalid value "10" for configuration segment.bytes: must be an integer >= 14`},
		{"cleanup.policy", "shred", `each item must be one of compact, delete`},
		{"min.cleanable.dirty.ratio", "2", `must be a number in [0, 1]`},
		{"message.timestamp.type", "Now", `must be one of CreateTime, LogAppendTime`},
		{"preallocate", "maybe", `must be true or false`},
		{"leader.replication.throttled.replicas", "0:x", `must be * or a list of partitionId:brokerId pairs`},
	}
	for _, tt := range tests {
		_, err := ResolveTopic(b, map[string]string{tt.key: tt.value})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%s: err = %v, want %q", tt.key, tt.value, err, tt.want)
		}
	}
	if _, err := ResolveTopic(b, map[string]string{"leader.replication.throttled.replicas": "0:1,1:2"}); err != nil {
		t.Errorf("valid throttled replicas: %v", err)
	}
	_, err = ResolveTopic(b, map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
	if err == nil || !strings.Contains(err.Error(), "min.compaction.lag.ms") {
		t.Errorf("min > max compaction lag: err = %v", err)
	}
	_, err = ResolveTopic(b, map[string]string{"bogus": "1", "segment.bytes": "1"})
	if err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "segment.bytes") {
		t.Errorf("want every topic error joined: %v", err)
	}
}

func findEntry(t *testing.T, entries []Entry, name string) Entry {
	t.Helper()
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return Entry{}
}

func synonymsString(ss []Synonym) string {
	var parts []string
	for _, s := range ss {
		v := "null"
		if s.Value != nil {
			v = *s.Value
		}
		parts = append(parts, s.Source.String()+":"+s.Name+"="+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func TestDescribeTopic(t *testing.T) {
	b := mustBroker(t, map[string]string{"log.retention.ms": "5000", "log.retention.hours": "1", "log.segment.bytes": "1048576"})
	entries := DescribeTopic(b, map[string]string{"segment.bytes": "4096", "cleanup.policy": "compact , delete"})
	if len(entries) != len(TopicKeys) {
		t.Fatalf("%d entries, want %d", len(entries), len(TopicKeys))
	}
	tests := []struct {
		name, value string
		source      kmsg.ConfigSource
		synonyms    string
	}{
		{"segment.bytes", "4096", kmsg.ConfigSourceDynamicTopicConfig,
			"{DYNAMIC_TOPIC_CONFIG:segment.bytes=4096, STATIC_BROKER_CONFIG:log.segment.bytes=1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}"},
		{"retention.ms", "5000", kmsg.ConfigSourceStaticBrokerConfig,
			"{STATIC_BROKER_CONFIG:log.retention.ms=5000, STATIC_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168}"},
		{"cleanup.policy", "compact,delete", kmsg.ConfigSourceDynamicTopicConfig,
			"{DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}"},
		{"max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig, "{DEFAULT_CONFIG:message.max.bytes=1048588}"},
		// Kafka drops the chain when the first broker synonym (log.roll.ms) is set nowhere.
		{"segment.ms", "604800000", kmsg.ConfigSourceDefaultConfig, "{}"},
		{"remote.storage.enable", "false", kmsg.ConfigSourceDefaultConfig, "{}"},
	}
	for _, tt := range tests {
		e := findEntry(t, entries, tt.name)
		if e.Value == nil || *e.Value != tt.value || e.Source != tt.source || synonymsString(e.Synonyms) != tt.synonyms {
			t.Errorf("%s: value=%v source=%v synonyms=%s\nwant value=%s source=%v synonyms=%s",
				tt.name, ptrString(e.Value), e.Source, synonymsString(e.Synonyms), tt.value, tt.source, tt.synonyms)
		}
		if e.ReadOnly || e.Sensitive || e.Doc == "" {
			t.Errorf("%s: readOnly=%v sensitive=%v doc=%q", tt.name, e.ReadOnly, e.Sensitive, e.Doc)
		}
	}
	if e := findEntry(t, entries, "min.cleanable.dirty.ratio"); e.Type != kmsg.ConfigTypeDouble || *e.Value != "0.5" {
		t.Errorf("min.cleanable.dirty.ratio: type=%v value=%s", e.Type, ptrString(e.Value))
	}

	// A double is printed as Java's Double.toString prints the parsed
	// value (ConfigDef.convertToString), in the entry and in the topic's
	// synonym, whatever form was set (kafkactl's tests compare it).
	for set, want := range map[string]string{"0.0001": "1.0E-4", "1.0E-4": "1.0E-4", "0.00001": "1.0E-5", "0.25": "0.25", "1": "1.0"} {
		e := findEntry(t, DescribeTopic(b, map[string]string{"min.cleanable.dirty.ratio": set}), "min.cleanable.dirty.ratio")
		if got := synonymsString(e.Synonyms); *e.Value != want || !strings.HasPrefix(got, "{DYNAMIC_TOPIC_CONFIG:min.cleanable.dirty.ratio="+want+",") {
			t.Errorf("min.cleanable.dirty.ratio=%s: value=%s synonyms=%s, want %s", set, ptrString(e.Value), got, want)
		}
	}

	// Dynamic broker configs come before static ones in the chain.
	d, err := b.WithDynamic(map[string]string{"log.segment.bytes": "2097152"}, map[string]string{"log.segment.bytes": "3145728"})
	if err != nil {
		t.Fatal(err)
	}
	e := findEntry(t, DescribeTopic(d, nil), "segment.bytes")
	want := "{DYNAMIC_BROKER_CONFIG:log.segment.bytes=2097152, DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728, STATIC_BROKER_CONFIG:log.segment.bytes=1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}"
	if *e.Value != "2097152" || e.Source != kmsg.ConfigSourceDynamicBrokerConfig || synonymsString(e.Synonyms) != want {
		t.Errorf("dynamic: value=%s source=%v synonyms=%s", ptrString(e.Value), e.Source, synonymsString(e.Synonyms))
	}
	if tc, _ := ResolveTopic(d, nil); tc.SegmentBytes != 2097152 {
		t.Errorf("ResolveTopic after dynamic: SegmentBytes = %d", tc.SegmentBytes)
	}
}

func ptrString(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestDescribeBroker(t *testing.T) {
	b := mustBroker(t, map[string]string{"num.io.threads": "4", "ssl.keystore.password": "secret", "log.retention.hours": "1"})
	entries := DescribeBroker(b, map[string]string{"log.retention.ms": "777"}, nil)
	if len(entries) < len(BrokerKeys()) {
		t.Fatalf("%d entries, want every broker key", len(entries))
	}
	e := findEntry(t, entries, "num.io.threads")
	if ptrString(e.Value) != "4" || e.Source != kmsg.ConfigSourceStaticBrokerConfig || e.ReadOnly || e.Type != kmsg.ConfigTypeInt ||
		synonymsString(e.Synonyms) != "{STATIC_BROKER_CONFIG:num.io.threads=4, DEFAULT_CONFIG:num.io.threads=8}" {
		t.Errorf("num.io.threads: %+v %s", e, synonymsString(e.Synonyms))
	}
	e = findEntry(t, entries, "num.partitions")
	if ptrString(e.Value) != "1" || e.Source != kmsg.ConfigSourceDefaultConfig || !e.ReadOnly {
		t.Errorf("num.partitions: %+v", e)
	}
	e = findEntry(t, entries, "ssl.keystore.password")
	if e.Value != nil || !e.Sensitive || e.Source != kmsg.ConfigSourceStaticBrokerConfig || e.Type != kmsg.ConfigTypePassword {
		t.Errorf("password: %+v", e)
	}
	for _, s := range e.Synonyms {
		if s.Value != nil {
			t.Errorf("password synonym leaks value: %+v", s)
		}
	}
	e = findEntry(t, entries, "log.retention.ms")
	if ptrString(e.Value) != "777" || e.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("log.retention.ms: %+v", e)
	}
	e = findEntry(t, entries, "log.retention.hours")
	if ptrString(e.Value) != "1" || synonymsString(e.Synonyms) != "{STATIC_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168}" {
		t.Errorf("log.retention.hours: %s %s", ptrString(e.Value), synonymsString(e.Synonyms))
	}
	e = findEntry(t, entries, "log.roll.ms")
	if e.Value != nil || e.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("log.roll.ms (null default): %+v", e)
	}
	e = findEntry(t, entries, "node.id")
	if ptrString(e.Value) != "1" || e.Doc == "" {
		t.Errorf("node.id: %+v", e)
	}
}

func TestValidateBrokerDynamic(t *testing.T) {
	for _, k := range []string{"log.retention.ms", "log.segment.bytes", "message.max.bytes", "num.io.threads", "num.network.threads", "compression.type", "listeners"} {
		v := map[string]string{"compression.type": "gzip", "listeners": "PLAINTEXT://127.0.0.1:9092"}[k]
		if v == "" {
			v = "100000"
		}
		if err := ValidateBrokerDynamic(k, v); err != nil {
			t.Errorf("%s should be dynamic: %v", k, err)
		}
	}
	if err := ValidateBrokerDynamic("num.partitions", "3"); err == nil || err.Error() != "Cannot update these configs dynamically: Set(num.partitions)" {
		t.Errorf("num.partitions: err = %v", err)
	}
	if err := ValidateBrokerDynamic("num.io.threads", "0"); err == nil || !strings.Contains(err.Error(), "must be an integer >= 1") {
		t.Errorf("num.io.threads=0: err = %v", err)
	}
	// As Kafka: a name that is no broker config is accepted (and ignored).
	if err := ValidateBrokerDynamic("some.plugin.setting", "1"); err != nil {
		t.Errorf("unknown key: %v, want it accepted", err)
	}
	b := DefaultBroker()
	u, err := b.WithDynamic(map[string]string{"some.plugin.setting": "x"}, nil)
	if err != nil {
		t.Fatalf("WithDynamic(unknown key): %v", err)
	}
	if v, _ := u.Value("some.plugin.setting"); v != "x" || !slices.Contains(u.Ignored, "some.plugin.setting") {
		t.Errorf("unknown dynamic key: value %q, ignored %v; want stored and ignored", v, u.Ignored)
	}
	if _, err := Load("", []string{"some.plugin.setting=x"}); err == nil {
		t.Error("unknown key in server.properties: want an error still")
	}
	if _, err := b.WithDynamic(map[string]string{"log.dirs": "/x"}, nil); err == nil {
		t.Error("WithDynamic(log.dirs): want error")
	}
	d, err := b.WithDynamic(map[string]string{"num.io.threads": "2"}, map[string]string{"num.io.threads": "3", "log.retention.ms": "9"})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumIOThreads != 2 || d.LogRetentionMs != 9 || b.NumIOThreads != 8 {
		t.Errorf("WithDynamic: io=%d retention=%d original io=%d", d.NumIOThreads, d.LogRetentionMs, b.NumIOThreads)
	}
}
