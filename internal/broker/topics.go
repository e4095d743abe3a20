package broker

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// maxTopicNameLength is Kafka's limit (249, so that partition directory
// names fit in 255 bytes).
const maxTopicNameLength = 249

// errInvalidTopic marks an illegal topic name.
var errInvalidTopic = errors.New("invalid topic")

// validateTopicName applies Kafka's Topic.validate rules.
func validateTopicName(name string) error {
	if err := topicNameProblem(name); err != nil {
		return fmt.Errorf("%w: %w", errInvalidTopic, err)
	}
	return nil
}

func topicNameProblem(name string) error {
	// Kafka 4's wording (Topic.validate): "Topic name is invalid: <reason>".
	reason := ""
	switch {
	case name == "":
		reason = "the empty string is not allowed"
	case name == ".":
		reason = "'.' is not allowed"
	case name == "..":
		reason = "'..' is not allowed"
	case len(name) > maxTopicNameLength:
		reason = fmt.Sprintf("the length of '%s' is longer than the max allowed length %d", name, maxTopicNameLength)
	default:
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				reason = fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return errors.New("Topic name is invalid: " + reason)
}

// isInternalTopic reports Kafka's internal topics.
func isInternalTopic(name string) bool {
	return name == offsetsTopic || name == transactionStateTopic || name == shareStateTopic
}

// internalTopicSpec is how Kafka creates an internal topic, by
// CreateTopics of its coordinator or by Metadata's auto-creation alike
// (AutoTopicCreationManager.creatableTopic): its partitions, replication
// factor (at most the registered brokers) and configs. ok is false for
// other topics.
func (b *Broker) internalTopicSpec(name string) (partitions int32, rf int16, configs map[string]string, ok bool) {
	brokers := len(b.meta.Image().Brokers)
	replicas := func(want int) int { return max(min(want, brokers), 1) }
	switch name {
	case offsetsTopic:
		return int32(b.cfg.OffsetsTopicNumPartitions), int16(replicas(b.cfg.OffsetsTopicReplicationFactor)), map[string]string{
			"cleanup.policy":   "compact",
			"segment.bytes":    strconv.Itoa(b.cfg.OffsetsTopicSegmentBytes),
			"compression.type": "producer",
		}, true
	case transactionStateTopic:
		n := replicas(b.cfg.TransactionStateLogReplicationFactor)
		return int32(b.cfg.TransactionStateLogNumPartitions), int16(n), map[string]string{
			"cleanup.policy":      "compact",
			"segment.bytes":       strconv.Itoa(b.cfg.TransactionStateLogSegmentBytes),
			"compression.type":    "producer",
			"min.insync.replicas": strconv.Itoa(min(b.cfg.TransactionStateLogMinISR, n)),
		}, true
	case shareStateTopic:
		n := replicas(int(intConfig(b.cfg, "share.coordinator.state.topic.replication.factor", 3)))
		return int32(intConfig(b.cfg, "share.coordinator.state.topic.num.partitions", 50)), int16(n), map[string]string{
			"cleanup.policy":      "compact",
			"segment.bytes":       strconv.FormatInt(intConfig(b.cfg, "share.coordinator.state.topic.segment.bytes", 104857600), 10),
			"compression.type":    "producer",
			"min.insync.replicas": strconv.Itoa(min(int(intConfig(b.cfg, "share.coordinator.state.topic.min.isr", 2)), n)),
		}, true
	}
	return 0, 0, nil, false
}

// createInternalTopic creates the internal topic name as its spec says;
// that it exists already is no error.
func (b *Broker) createInternalTopic(name string) error {
	partitions, rf, configs, _ := b.internalTopicSpec(name)
	_, err := b.meta.CreateTopic(name, partitions, rf, configs)
	if err != nil && !errors.Is(err, metadata.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err == nil {
		b.log.Info("created internal topic", "topic", name, "partitions", partitions, "replication.factor", rf)
	}
	return nil
}

// ensureInternalTopic returns the internal topic name, creating it if
// needed.
func (b *Broker) ensureInternalTopic(name string) (*topicState, error) {
	if ts := b.topic(name); ts != nil {
		return ts, nil
	}
	if err := b.createInternalTopic(name); err != nil {
		return nil, err
	}
	ts := b.topic(name)
	if ts == nil {
		return nil, fmt.Errorf("%s was created but has no local replicas", name)
	}
	return ts, nil
}

// errInvalidConfig marks a topic config error for the INVALID_CONFIG code.
var errInvalidConfig = errors.New("invalid config")

// createTopic creates a topic through the metadata store. partitions or
// replicationFactor of -1 take the broker defaults.
func (b *Broker) createTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) (*metadata.Topic, error) {
	if err := validateTopicName(name); err != nil {
		return nil, err
	}
	if partitions == -1 {
		partitions = int32(b.cfg.NumPartitions)
	}
	if replicationFactor == -1 {
		replicationFactor = int16(b.cfg.DefaultReplicationFactor)
	}
	if _, err := config.ResolveTopic(b.cfg, configs); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidConfig, err)
	}
	return b.meta.CreateTopic(name, partitions, replicationFactor, configs)
}

// errorCode maps an internal error to a Kafka error code at the handler
// boundary.
func errorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errClusterAuthorization):
		return kerr.ClusterAuthorizationFailed.Code
	case errors.Is(err, metadata.ErrTopicExists):
		return kerr.TopicAlreadyExists.Code
	case errors.Is(err, metadata.ErrUnknownTopic):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, metadata.ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code
	case errors.Is(err, metadata.ErrInvalidReplicas):
		return kerr.InvalidReplicationFactor.Code
	case errors.Is(err, errInvalidConfig):
		return kerr.InvalidConfig.Code
	case errors.Is(err, partition.ErrNotEnoughReplicas):
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, partition.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, storage.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, storage.ErrLogOffline):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, record.ErrCorruptMessage):
		return kerr.CorruptMessage.Code
	case errors.Is(err, record.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, record.ErrUnsupportedCompression):
		return kerr.UnsupportedCompressionType.Code
	case errors.Is(err, record.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, record.ErrUnsupportedVersion):
		return kerr.InvalidRecord.Code // Kafka: magic must be 2 in Produce v3+
	case errors.Is(err, errInvalidTopic):
		return kerr.InvalidTopicException.Code
	}
	return kerr.UnknownServerError.Code
}
