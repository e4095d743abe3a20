package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/javafmt"
)

// TopicKey describes one topic-level config (Kafka's TopicConfig).
type TopicKey struct {
	Name string
	Type kmsg.ConfigType
	// Synonyms are the broker keys that supply the default, highest priority
	// first (Kafka's ServerTopicConfigSynonyms); empty if none.
	Synonyms []string
	// Default is Kafka's built-in default, used when no broker key applies.
	Default string
	// Valid is Kafka's description of the allowed values.
	Valid string
	Doc   string
}

// ServerDefault is the broker key that supplies this key's default
// (Kafka's "Server Default Property"), or "".
func (k TopicKey) ServerDefault() string {
	if len(k.Synonyms) == 0 {
		return ""
	}
	return k.Synonyms[0]
}

const longMax = "9223372036854775807"

// TopicKeys is every topic config Kafka 3.x/4.x knows, sorted by name.
var TopicKeys = []TopicKey{
	{"cleanup.policy", kmsg.ConfigTypeList, []string{"log.cleanup.policy"}, "delete", "[compact, delete]",
		"Retention policy for old segments: delete them by time or size, compact them by key, or both."},
	{"compression.gzip.level", kmsg.ConfigTypeInt, []string{"compression.gzip.level"}, "-1", "[1,...,9] or -1",
		"Compression level when compression.type is gzip; -1 is the codec default."},
	{"compression.lz4.level", kmsg.ConfigTypeInt, []string{"compression.lz4.level"}, "9", "[1,...,17]",
		"Compression level when compression.type is lz4."},
	{"compression.type", kmsg.ConfigTypeString, []string{"compression.type"}, "producer", "[uncompressed, zstd, lz4, snappy, gzip, producer]",
		"Codec the broker stores batches with; producer keeps the producer's codec, uncompressed stores plain batches."},
	{"compression.zstd.level", kmsg.ConfigTypeInt, []string{"compression.zstd.level"}, "3", "[-131072,...,22]",
		"Compression level when compression.type is zstd."},
	{"delete.retention.ms", kmsg.ConfigTypeLong, []string{"log.cleaner.delete.retention.ms"}, "86400000", "[0,...]",
		"How long tombstones stay in a compacted topic, so a reader starting at the log start still sees deletions."},
	{"file.delete.delay.ms", kmsg.ConfigTypeLong, []string{"log.segment.delete.delay.ms"}, "60000", "[0,...]",
		"Delay before a segment removed from the log is deleted from disk."},
	{"flush.messages", kmsg.ConfigTypeLong, []string{"log.flush.interval.messages"}, longMax, "[1,...]",
		"Force an fsync after this many messages; the default leaves flushing to the OS and relies on replication."},
	{"flush.ms", kmsg.ConfigTypeLong, []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}, longMax, "[0,...]",
		"Force an fsync when unflushed data is older than this many milliseconds."},
	{"follower.replication.throttled.replicas", kmsg.ConfigTypeList, nil, "", "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
		"Replicas whose follower fetches are throttled, as partition:broker pairs or *."},
	{"index.interval.bytes", kmsg.ConfigTypeInt, []string{"log.index.interval.bytes"}, "4096", "[0,...]",
		"Bytes appended between two entries of the sparse offset index."},
	{"leader.replication.throttled.replicas", kmsg.ConfigTypeList, nil, "", "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
		"Replicas whose leader-side replication is throttled, as partition:broker pairs or *."},
	{"local.retention.bytes", kmsg.ConfigTypeLong, []string{"log.local.retention.bytes"}, "-2", "[-2,...]",
		"With tiered storage, bytes kept locally per partition; -2 means use retention.bytes."},
	{"local.retention.ms", kmsg.ConfigTypeLong, []string{"log.local.retention.ms"}, "-2", "[-2,...]",
		"With tiered storage, time data is kept locally; -2 means use retention.ms."},
	{"max.compaction.lag.ms", kmsg.ConfigTypeLong, []string{"log.cleaner.max.compaction.lag.ms"}, longMax, "[1,...]",
		"Longest time a message may stay uncompacted in a compacted topic."},
	{"max.message.bytes", kmsg.ConfigTypeInt, []string{"message.max.bytes"}, "1048588", "[0,...]",
		"Largest record batch, after compression, the topic accepts."},
	{"message.downconversion.enable", kmsg.ConfigTypeBoolean, []string{"log.message.downconversion.enable"}, "true", "",
		"Whether old fetch versions may get down-converted batches (removed in Kafka 4.0)."},
	{"message.format.version", kmsg.ConfigTypeString, []string{"log.message.format.version"}, "3.0-IV1", "",
		"Deprecated message format version; ignored for modern formats (removed in Kafka 4.0)."},
	{"message.timestamp.after.max.ms", kmsg.ConfigTypeLong, []string{"log.message.timestamp.after.max.ms"}, "3600000", "[0,...]",
		"With CreateTime, how far in the future a batch timestamp may be relative to the broker clock."},
	{"message.timestamp.before.max.ms", kmsg.ConfigTypeLong, []string{"log.message.timestamp.before.max.ms"}, longMax, "[0,...]",
		"With CreateTime, how far in the past a batch timestamp may be relative to the broker clock."},
	{"message.timestamp.difference.max.ms", kmsg.ConfigTypeLong, []string{"log.message.timestamp.difference.max.ms"}, longMax, "[0,...]",
		"Deprecated: allowed difference between a record timestamp and the broker clock (removed in Kafka 4.0)."},
	{"message.timestamp.type", kmsg.ConfigTypeString, []string{"log.message.timestamp.type"}, "CreateTime", "[CreateTime, LogAppendTime]",
		"Whether record timestamps are the producer's (CreateTime) or the broker's append time (LogAppendTime)."},
	{"min.cleanable.dirty.ratio", kmsg.ConfigTypeDouble, []string{"log.cleaner.min.cleanable.ratio"}, "0.5", "[0,...,1]",
		"Share of the log that must be uncompacted before the cleaner compacts it."},
	{"min.compaction.lag.ms", kmsg.ConfigTypeLong, []string{"log.cleaner.min.compaction.lag.ms"}, "0", "[0,...]",
		"Shortest time a message stays uncompacted in a compacted topic."},
	{"min.insync.replicas", kmsg.ConfigTypeInt, []string{"min.insync.replicas"}, "1", "[1,...]",
		"With acks=all, the fewest in-sync replicas that must have a write for it to succeed."},
	{"preallocate", kmsg.ConfigTypeBoolean, []string{"log.preallocate"}, "false", "",
		"Preallocate the file of a new segment."},
	{"remote.log.copy.disable", kmsg.ConfigTypeBoolean, nil, "false", "",
		"With tiered storage, stop copying segments to remote storage."},
	{"remote.log.delete.on.disable", kmsg.ConfigTypeBoolean, nil, "false", "",
		"With tiered storage, delete remote data when tiering is turned off."},
	{"remote.storage.enable", kmsg.ConfigTypeBoolean, nil, "false", "",
		"Enable tiered storage for the topic."},
	{"retention.bytes", kmsg.ConfigTypeLong, []string{"log.retention.bytes"}, "-1", "",
		"Largest size a partition may grow to before old segments are deleted; -1 means no size limit."},
	{"retention.ms", kmsg.ConfigTypeLong, []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}, "604800000", "[-1,...]",
		"How long a segment is kept after its newest record before deletion; -1 means no time limit."},
	{"segment.bytes", kmsg.ConfigTypeInt, []string{"log.segment.bytes"}, "1073741824", "[14,...]",
		"Size at which the active segment is rolled."},
	{"segment.index.bytes", kmsg.ConfigTypeInt, []string{"log.index.size.max.bytes"}, "10485760", "[4,...]",
		"Size of the offset and time index files of a segment."},
	{"segment.jitter.ms", kmsg.ConfigTypeLong, []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}, "0", "[0,...]",
		"Random amount subtracted from segment.ms so segments do not all roll at once."},
	{"segment.ms", kmsg.ConfigTypeLong, []string{"log.roll.ms", "log.roll.hours"}, "604800000", "[1,...]",
		"Time after which the active segment is rolled even if not full."},
	{"unclean.leader.election.enable", kmsg.ConfigTypeBoolean, []string{"unclean.leader.election.enable"}, "false", "",
		"Allow an out-of-sync replica to become leader as a last resort, at the cost of data loss."},
}

var topicKeyIndex = func() map[string]*TopicKey {
	m := make(map[string]*TopicKey, len(TopicKeys))
	for i := range TopicKeys {
		m[TopicKeys[i].Name] = &TopicKeys[i]
	}
	return m
}()

// LookupTopicKey returns the metadata of a topic config key.
func LookupTopicKey(name string) (TopicKey, bool) {
	k, ok := topicKeyIndex[name]
	if !ok {
		return TopicKey{}, false
	}
	return *k, true
}

// Topic is the effective configuration of one topic: overrides, else the
// broker's settings, else Kafka's defaults. Plain value; safe to copy.
type Topic struct {
	CleanupPolicy                        []string // "delete", "compact"
	CompressionGzipLevel                 int
	CompressionLz4Level                  int
	CompressionType                      string
	CompressionZstdLevel                 int
	DeleteRetentionMs                    int64
	FileDeleteDelayMs                    int64
	FlushMessages                        int64
	FlushMs                              int64
	FollowerReplicationThrottledReplicas []string
	IndexIntervalBytes                   int
	LeaderReplicationThrottledReplicas   []string
	LocalRetentionBytes                  int64
	LocalRetentionMs                     int64
	MaxCompactionLagMs                   int64
	MaxMessageBytes                      int
	MessageDownconversionEnable          bool
	MessageFormatVersion                 string
	MessageTimestampAfterMaxMs           int64
	MessageTimestampBeforeMaxMs          int64
	MessageTimestampDifferenceMaxMs      int64
	MessageTimestampType                 string // "CreateTime" or "LogAppendTime"
	MinCleanableDirtyRatio               float64
	MinCompactionLagMs                   int64
	MinInsyncReplicas                    int
	Preallocate                          bool
	RemoteLogCopyDisable                 bool
	RemoteLogDeleteOnDisable             bool
	RemoteStorageEnable                  bool
	RetentionBytes                       int64 // -1 unlimited
	RetentionMs                          int64 // -1 unlimited
	SegmentBytes                         int
	SegmentIndexBytes                    int
	SegmentJitterMs                      int64
	SegmentMs                            int64
	UncleanLeaderElectionEnable          bool
}

var topicFields = map[string]func(t *Topic) any{
	"cleanup.policy":                          func(t *Topic) any { return &t.CleanupPolicy },
	"compression.gzip.level":                  func(t *Topic) any { return &t.CompressionGzipLevel },
	"compression.lz4.level":                   func(t *Topic) any { return &t.CompressionLz4Level },
	"compression.type":                        func(t *Topic) any { return &t.CompressionType },
	"compression.zstd.level":                  func(t *Topic) any { return &t.CompressionZstdLevel },
	"delete.retention.ms":                     func(t *Topic) any { return &t.DeleteRetentionMs },
	"file.delete.delay.ms":                    func(t *Topic) any { return &t.FileDeleteDelayMs },
	"flush.messages":                          func(t *Topic) any { return &t.FlushMessages },
	"flush.ms":                                func(t *Topic) any { return &t.FlushMs },
	"follower.replication.throttled.replicas": func(t *Topic) any { return &t.FollowerReplicationThrottledReplicas },
	"index.interval.bytes":                    func(t *Topic) any { return &t.IndexIntervalBytes },
	"leader.replication.throttled.replicas":   func(t *Topic) any { return &t.LeaderReplicationThrottledReplicas },
	"local.retention.bytes":                   func(t *Topic) any { return &t.LocalRetentionBytes },
	"local.retention.ms":                      func(t *Topic) any { return &t.LocalRetentionMs },
	"max.compaction.lag.ms":                   func(t *Topic) any { return &t.MaxCompactionLagMs },
	"max.message.bytes":                       func(t *Topic) any { return &t.MaxMessageBytes },
	"message.downconversion.enable":           func(t *Topic) any { return &t.MessageDownconversionEnable },
	"message.format.version":                  func(t *Topic) any { return &t.MessageFormatVersion },
	"message.timestamp.after.max.ms":          func(t *Topic) any { return &t.MessageTimestampAfterMaxMs },
	"message.timestamp.before.max.ms":         func(t *Topic) any { return &t.MessageTimestampBeforeMaxMs },
	"message.timestamp.difference.max.ms":     func(t *Topic) any { return &t.MessageTimestampDifferenceMaxMs },
	"message.timestamp.type":                  func(t *Topic) any { return &t.MessageTimestampType },
	"min.cleanable.dirty.ratio":               func(t *Topic) any { return &t.MinCleanableDirtyRatio },
	"min.compaction.lag.ms":                   func(t *Topic) any { return &t.MinCompactionLagMs },
	"min.insync.replicas":                     func(t *Topic) any { return &t.MinInsyncReplicas },
	"preallocate":                             func(t *Topic) any { return &t.Preallocate },
	"remote.log.copy.disable":                 func(t *Topic) any { return &t.RemoteLogCopyDisable },
	"remote.log.delete.on.disable":            func(t *Topic) any { return &t.RemoteLogDeleteOnDisable },
	"remote.storage.enable":                   func(t *Topic) any { return &t.RemoteStorageEnable },
	"retention.bytes":                         func(t *Topic) any { return &t.RetentionBytes },
	"retention.ms":                            func(t *Topic) any { return &t.RetentionMs },
	"segment.bytes":                           func(t *Topic) any { return &t.SegmentBytes },
	"segment.index.bytes":                     func(t *Topic) any { return &t.SegmentIndexBytes },
	"segment.jitter.ms":                       func(t *Topic) any { return &t.SegmentJitterMs },
	"segment.ms":                              func(t *Topic) any { return &t.SegmentMs },
	"unclean.leader.election.enable":          func(t *Topic) any { return &t.UncleanLeaderElectionEnable },
}

// ValidateTopicConfig checks one topic override as CreateTopics and
// AlterConfigs must: unknown names and invalid values are errors whose text
// is what Kafka puts in the INVALID_CONFIG error message.
func ValidateTopicConfig(name, value string) error {
	k, ok := topicKeyIndex[name]
	if !ok {
		return fmt.Errorf("Unknown topic config name: %s", name)
	}
	return checkTopicValue(k, strings.TrimSpace(value))
}

func checkTopicValue(k *TopicKey, v string) error {
	if strings.HasSuffix(k.Name, ".replication.throttled.replicas") {
		return checkThrottledReplicas(k.Name, v)
	}
	return checkTyped(k.Name, k.Type, k.Valid, v)
}

// checkThrottledReplicas accepts "*" or partition:broker pairs.
func checkThrottledReplicas(name, v string) error {
	items := SplitList(v)
	if len(items) == 1 && items[0] == "*" {
		return nil
	}
	for _, it := range items {
		p, r, ok := strings.Cut(it, ":")
		_, err1 := strconv.ParseUint(strings.TrimSpace(p), 10, 31)
		_, err2 := strconv.ParseUint(strings.TrimSpace(r), 10, 31)
		if !ok || err1 != nil || err2 != nil {
			return invalidValue(name, v, "must be * or a list of partitionId:brokerId pairs")
		}
	}
	return nil
}

// ResolveTopic computes a topic's configuration: each key from overrides
// (the topic's own configs) if present, else from the broker setting that
// supplies its default, else Kafka's default. An unknown key or an invalid
// value is an error naming the key, the value and what is allowed; all
// problems are joined.
func ResolveTopic(b *Broker, overrides map[string]string) (Topic, error) {
	values, err := resolveTopicValues(b, overrides)
	if err != nil {
		return Topic{}, err
	}
	var t Topic
	for name, ptr := range topicFields {
		setField(ptr(&t), values[name])
	}
	return t, nil
}

// resolveTopicValues returns the effective string value of every topic key.
func resolveTopicValues(b *Broker, overrides map[string]string) (map[string]string, error) {
	var errs []error
	for _, name := range sortedKeys(overrides) {
		if err := ValidateTopicConfig(name, overrides[name]); err != nil {
			errs = append(errs, err)
		}
	}
	values := make(map[string]string, len(TopicKeys))
	for i := range TopicKeys {
		k := &TopicKeys[i]
		if v, ok := overrides[k.Name]; ok {
			values[k.Name] = strings.TrimSpace(v)
		} else {
			values[k.Name], _ = brokerTopicDefault(b, k)
		}
	}
	// Cross-key check from Kafka's LogConfig.validate.
	if minLag, maxLag := parseInt64(values["min.compaction.lag.ms"]), parseInt64(values["max.compaction.lag.ms"]); len(errs) == 0 && minLag > maxLag {
		errs = append(errs, fmt.Errorf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return values, nil
}

func parseInt64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// brokerTopicDefault is the value a topic key takes without an override,
// and whether a broker key supplied it (false: Kafka's built-in default).
func brokerTopicDefault(b *Broker, k *TopicKey) (string, bool) {
	if b == nil || len(k.Synonyms) == 0 {
		return k.Default, false
	}
	switch k.Name {
	case "retention.ms":
		return strconv.FormatInt(b.LogRetentionMs, 10), true
	case "segment.ms":
		return strconv.FormatInt(b.LogRollMs, 10), true
	case "segment.jitter.ms":
		return strconv.FormatInt(b.LogRollJitterMs, 10), true
	case "flush.ms":
		return strconv.FormatInt(b.LogFlushIntervalMs, 10), true
	}
	v, ok := b.Value(k.Synonyms[0])
	if !ok {
		return k.Default, false
	}
	if key, ok := brokerKeyIndex[k.Synonyms[0]]; ok {
		v = canonical(key.typ, v)
	}
	return v, true
}

// canonical formats a validated value the way Kafka prints parsed values.
func canonical(typ kmsg.ConfigType, v string) string {
	switch typ {
	case kmsg.ConfigTypeBoolean:
		return strings.ToLower(strings.TrimSpace(v))
	case kmsg.ConfigTypeInt, kmsg.ConfigTypeShort, kmsg.ConfigTypeLong:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case kmsg.ConfigTypeDouble:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return javafmt.Double(f)
		}
	case kmsg.ConfigTypeList:
		return strings.Join(SplitList(v), ",")
	}
	return strings.TrimSpace(v)
}

// TopicKeyNames returns the topic config names, sorted.
func TopicKeyNames() []string {
	out := make([]string, 0, len(TopicKeys))
	for _, k := range TopicKeys {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

// Compacted reports whether cleanup.policy includes compact.
func (t Topic) Compacted() bool {
	for _, p := range t.CleanupPolicy {
		if p == "compact" {
			return true
		}
	}
	return false
}
