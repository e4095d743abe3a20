package group

import (
	"errors"
	"fmt"
	"time"
)

// Config is the coordinator's configuration, taken from the broker's
// group.* and offsets.* settings.
type Config struct {
	// NumPartitions is offsets.topic.num.partitions: how many partitions
	// __consumer_offsets has (fixed once the topic exists).
	NumPartitions int32
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms: how long
	// the first rebalance of an Empty group waits for more members.
	InitialRebalanceDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the session timeout a
	// member may ask for (group.min/max.session.timeout.ms).
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxSize is group.max.size: the most members a group may have.
	MaxSize int
	// OffsetsRetention is offsets.retention.minutes.
	OffsetsRetention time.Duration
	// RetentionCheckInterval is offsets.retention.check.interval.ms.
	RetentionCheckInterval time.Duration
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes: the longest
	// commit metadata string accepted.
	OffsetMetadataMaxBytes int
	// MaxBatchBytes is the largest batch written to __consumer_offsets
	// (the topic's max.message.bytes); larger group metadata fails the
	// SyncGroup as Kafka does.
	MaxBatchBytes int
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time

	// Consumer configures KIP-848 consumer groups.
	Consumer ConsumerConfig
}

// ConsumerConfig is the group.consumer.* settings: how KIP-848 consumer
// groups (ConsumerGroupHeartbeat) run.
type ConsumerConfig struct {
	// Enabled is false when group.coordinator.rebalance.protocols does not
	// list consumer: ConsumerGroupHeartbeat answers UNSUPPORTED_VERSION.
	Enabled bool
	// Assignors are the server-side assignors members may name
	// (group.consumer.assignors, "uniform" and "range"); the first is
	// the default.
	Assignors []string
	// SessionTimeout is group.consumer.session.timeout.ms: a member that
	// does not heartbeat for this long is removed.
	SessionTimeout time.Duration
	// HeartbeatInterval is group.consumer.heartbeat.interval.ms, told to
	// members in every response.
	HeartbeatInterval time.Duration
	// MaxSize is group.consumer.max.size.
	MaxSize int
	// MigrationPolicy is group.consumer.migration.policy (disabled,
	// downgrade, upgrade, bidirectional).
	MigrationPolicy string
}

// DefaultConfig is Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		NumPartitions:          50,
		InitialRebalanceDelay:  3 * time.Second,
		MinSessionTimeout:      6 * time.Second,
		MaxSessionTimeout:      30 * time.Minute,
		MaxSize:                1<<31 - 1,
		OffsetsRetention:       7 * 24 * time.Hour,
		RetentionCheckInterval: 10 * time.Minute,
		OffsetMetadataMaxBytes: 4096,
		MaxBatchBytes:          1048588,
		Consumer: ConsumerConfig{
			Enabled:           true,
			Assignors:         []string{"uniform", "range"},
			SessionTimeout:    45 * time.Second,
			HeartbeatInterval: 5 * time.Second,
			MaxSize:           1<<31 - 1,
			MigrationPolicy:   "bidirectional",
		},
	}
}

// Validate reports a configuration the coordinator cannot run with.
func (c Config) Validate() error {
	var errs []error
	if c.NumPartitions <= 0 {
		errs = append(errs, fmt.Errorf("offsets.topic.num.partitions must be positive, got %d", c.NumPartitions))
	}
	if c.InitialRebalanceDelay < 0 {
		errs = append(errs, fmt.Errorf("group.initial.rebalance.delay.ms must not be negative, got %v", c.InitialRebalanceDelay))
	}
	if c.MinSessionTimeout > c.MaxSessionTimeout {
		errs = append(errs, fmt.Errorf("group.min.session.timeout.ms (%v) exceeds group.max.session.timeout.ms (%v)", c.MinSessionTimeout, c.MaxSessionTimeout))
	}
	if c.MaxSize <= 0 {
		errs = append(errs, fmt.Errorf("group.max.size must be positive, got %d", c.MaxSize))
	}
	if c.OffsetsRetention <= 0 {
		errs = append(errs, fmt.Errorf("offsets.retention.minutes must be positive, got %v", c.OffsetsRetention))
	}
	if c.RetentionCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("offsets.retention.check.interval.ms must be positive, got %v", c.RetentionCheckInterval))
	}
	if c.OffsetMetadataMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("offset.metadata.max.bytes must not be negative, got %d", c.OffsetMetadataMaxBytes))
	}
	if c.Consumer.Enabled {
		if len(c.Consumer.Assignors) == 0 {
			errs = append(errs, errors.New("group.consumer.assignors must name at least one assignor"))
		}
		for _, a := range c.Consumer.Assignors {
			if assignorByName(a) == nil {
				errs = append(errs, fmt.Errorf("group.consumer.assignors: unknown assignor %q", a))
			}
		}
		if c.Consumer.SessionTimeout <= 0 || c.Consumer.HeartbeatInterval <= 0 {
			errs = append(errs, errors.New("group.consumer.session.timeout.ms and heartbeat.interval.ms must be positive"))
		}
		if c.Consumer.MaxSize <= 0 {
			errs = append(errs, fmt.Errorf("group.consumer.max.size must be positive, got %d", c.Consumer.MaxSize))
		}
	}
	return errors.Join(errs...)
}
