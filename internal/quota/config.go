package quota

import (
	"fmt"
	"time"
)

// Config is the broker's quota sampling configuration, from Kafka's
// broker keys. A zero field takes Kafka's default.
type Config struct {
	// WindowNum is quota.window.num: samples kept for the produce, fetch
	// and request quotas (11: ten whole windows and the current one).
	WindowNum int
	// WindowSize is quota.window.size.seconds (1 s). It also caps the
	// request quota's throttle time, as Kafka caps it.
	WindowSize time.Duration
	// ControllerWindowNum is controller.quota.window.num (11): with the
	// window size and the quota it makes the token bucket's burst.
	ControllerWindowNum int
	// ControllerWindowSize is controller.quota.window.size.seconds (1 s).
	ControllerWindowSize time.Duration
	// NumIOThreads is num.io.threads (8). Kafka does not scale
	// request_percentage by it: the quota is a percentage of one
	// thread's time, so a client may be given more than 100 (up to
	// (num.io.threads + num.network.threads) × 100). It is kept for
	// the broker to report and does not change any computation.
	NumIOThreads int
}

// Kafka's defaults for Config.
const (
	DefaultWindowNum    = 11
	DefaultWindowSize   = time.Second
	DefaultNumIOThreads = 8
)

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		WindowNum:            DefaultWindowNum,
		WindowSize:           DefaultWindowSize,
		ControllerWindowNum:  DefaultWindowNum,
		ControllerWindowSize: DefaultWindowSize,
		NumIOThreads:         DefaultNumIOThreads,
	}
}

// Validate checks c as Kafka checks the keys: window counts at least 1,
// window sizes whole seconds of at least 1 s (zero fields are defaults).
func (c Config) Validate() error {
	for _, n := range []struct {
		key string
		v   int
	}{{"quota.window.num", c.WindowNum}, {"controller.quota.window.num", c.ControllerWindowNum}, {"num.io.threads", c.NumIOThreads}} {
		if n.v < 0 {
			return fmt.Errorf("quota config: %s must be at least 1, got %d", n.key, n.v)
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"quota.window.size.seconds", c.WindowSize}, {"controller.quota.window.size.seconds", c.ControllerWindowSize}} {
		if d.v < 0 || d.v%time.Second != 0 {
			return fmt.Errorf("quota config: %s must be a whole number of seconds, at least 1, got %v", d.key, d.v)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.WindowNum <= 0 {
		c.WindowNum = d.WindowNum
	}
	if c.WindowSize <= 0 {
		c.WindowSize = d.WindowSize
	}
	if c.ControllerWindowNum <= 0 {
		c.ControllerWindowNum = d.ControllerWindowNum
	}
	if c.ControllerWindowSize <= 0 {
		c.ControllerWindowSize = d.ControllerWindowSize
	}
	if c.NumIOThreads <= 0 {
		c.NumIOThreads = d.NumIOThreads
	}
	return c
}
