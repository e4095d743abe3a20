package txn

import (
	"errors"
	"fmt"
	"time"
)

// Config is the coordinator's configuration, from the broker's
// transaction.* settings.
type Config struct {
	// NumPartitions is transaction.state.log.num.partitions (fixed once
	// __transaction_state exists).
	NumPartitions int32
	// MaxTimeout is transaction.max.timeout.ms: the longest
	// transaction.timeout.ms a producer may ask for.
	MaxTimeout time.Duration
	// AbortCheckInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms.
	AbortCheckInterval time.Duration
	// RetryBackoff is how long to wait before writing markers again after
	// a failure.
	RetryBackoff time.Duration
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
}

// DefaultConfig is Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		NumPartitions:      50,
		MaxTimeout:         15 * time.Minute,
		AbortCheckInterval: 10 * time.Second,
		RetryBackoff:       100 * time.Millisecond,
	}
}

// Validate reports a configuration the coordinator cannot run with.
func (c Config) Validate() error {
	var errs []error
	if c.NumPartitions <= 0 {
		errs = append(errs, fmt.Errorf("transaction.state.log.num.partitions must be positive, got %d", c.NumPartitions))
	}
	if c.MaxTimeout <= 0 {
		errs = append(errs, fmt.Errorf("transaction.max.timeout.ms must be positive, got %v", c.MaxTimeout))
	}
	if c.AbortCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("transaction.abort.timed.out.transaction.cleanup.interval.ms must be positive, got %v", c.AbortCheckInterval))
	}
	if c.RetryBackoff <= 0 {
		errs = append(errs, errors.New("marker retry backoff must be positive"))
	}
	return errors.Join(errs...)
}
