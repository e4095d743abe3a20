package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// OMBWorkload is an OpenMessaging Benchmark workload file: the fields of
// OMB's Workload class, with its YAML names. ProducerRate, the durations
// and the backlog size are read as numbers (OMB's integers parse too; a
// fraction of a minute is allowed for short runs).
type OMBWorkload struct {
	Name               string `yaml:"name"`
	Topics             int    `yaml:"topics"`
	PartitionsPerTopic int    `yaml:"partitionsPerTopic"`
	// KeyDistributor is NO_KEY (default), KEY_ROUND_ROBIN or RANDOM_NANO.
	KeyDistributor            string  `yaml:"keyDistributor"`
	MessageSize               int     `yaml:"messageSize"`
	UseRandomizedPayloads     bool    `yaml:"useRandomizedPayloads"`
	RandomBytesRatio          float64 `yaml:"randomBytesRatio"`
	RandomizedPayloadPoolSize int     `yaml:"randomizedPayloadPoolSize"`
	PayloadFile               string  `yaml:"payloadFile"`
	SubscriptionsPerTopic     int     `yaml:"subscriptionsPerTopic"`
	ConsumerPerSubscription   int     `yaml:"consumerPerSubscription"`
	ProducersPerTopic         int     `yaml:"producersPerTopic"`
	// ProducerRate is messages/s over all producers; 0 searches for the
	// highest rate the consumers keep up with, as OMB's rate controller does.
	ProducerRate float64 `yaml:"producerRate"`
	// ConsumerBacklogSizeGB > 0: consumers pause until this much is
	// waiting for them, then drain it (OMB's backlog mode).
	ConsumerBacklogSizeGB float64 `yaml:"consumerBacklogSizeGB"`
	// BacklogDrainRatio is the part of the backlog that must be drained
	// (default 1).
	BacklogDrainRatio     float64  `yaml:"backlogDrainRatio"`
	TestDurationMinutes   float64  `yaml:"testDurationMinutes"`
	WarmupDurationMinutes *float64 `yaml:"warmupDurationMinutes"` // nil: OMB's default, 1

	// Unknown lists fields of the file this reader does not know (OMB
	// forks add some); they are reported, not applied.
	Unknown []string `yaml:"-"`
	// Dir is the directory of the file, for a relative payloadFile.
	Dir string `yaml:"-"`
}

// ombWorkloadFields are the YAML names OMBWorkload reads.
var ombWorkloadFields = []string{"name", "topics", "partitionsPerTopic", "keyDistributor", "messageSize",
	"useRandomizedPayloads", "randomBytesRatio", "randomizedPayloadPoolSize", "payloadFile",
	"subscriptionsPerTopic", "consumerPerSubscription", "producersPerTopic", "producerRate",
	"consumerBacklogSizeGB", "backlogDrainRatio", "testDurationMinutes", "warmupDurationMinutes"}

// Key distributors of OMB.
const (
	OMBNoKey         = "NO_KEY"
	OMBKeyRoundRobin = "KEY_ROUND_ROBIN"
	OMBRandomNano    = "RANDOM_NANO"
)

// ParseOMBWorkload reads an OMB workload file's YAML and applies OMB's
// defaults (warm-up 1 minute, drain ratio 1, no key).
func ParseOMBWorkload(data []byte) (*OMBWorkload, error) {
	var w OMBWorkload
	if err := yaml.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("omb workload: %w", err)
	}
	var all map[string]any
	if err := yaml.Unmarshal(data, &all); err == nil {
		for _, k := range slices.Sorted(maps.Keys(all)) {
			if !slices.Contains(ombWorkloadFields, k) {
				w.Unknown = append(w.Unknown, k)
			}
		}
	}
	if w.WarmupDurationMinutes == nil {
		one := 1.0
		w.WarmupDurationMinutes = &one
	}
	if w.BacklogDrainRatio == 0 {
		w.BacklogDrainRatio = 1
	}
	if w.KeyDistributor == "" {
		w.KeyDistributor = OMBNoKey
	}
	if w.SubscriptionsPerTopic == 0 && w.ConsumerPerSubscription > 0 {
		w.SubscriptionsPerTopic = 1
	}
	var errs []error
	if w.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if w.Topics <= 0 || w.PartitionsPerTopic <= 0 {
		errs = append(errs, fmt.Errorf("topics (%d) and partitionsPerTopic (%d) must be > 0", w.Topics, w.PartitionsPerTopic))
	}
	if w.MessageSize <= 0 {
		errs = append(errs, fmt.Errorf("messageSize %d must be > 0", w.MessageSize))
	}
	if w.ProducersPerTopic <= 0 {
		errs = append(errs, fmt.Errorf("producersPerTopic %d must be > 0", w.ProducersPerTopic))
	}
	if w.ProducerRate < 0 || w.ConsumerBacklogSizeGB < 0 || w.TestDurationMinutes <= 0 || *w.WarmupDurationMinutes < 0 {
		errs = append(errs, errors.New("producerRate, consumerBacklogSizeGB and warmupDurationMinutes must be >= 0 and testDurationMinutes > 0"))
	}
	if w.ConsumerBacklogSizeGB > 0 && w.SubscriptionsPerTopic*w.ConsumerPerSubscription == 0 {
		errs = append(errs, errors.New("consumerBacklogSizeGB needs consumers"))
	}
	if !slices.Contains([]string{OMBNoKey, OMBKeyRoundRobin, OMBRandomNano}, w.KeyDistributor) {
		errs = append(errs, fmt.Errorf("keyDistributor %q is not NO_KEY, KEY_ROUND_ROBIN or RANDOM_NANO", w.KeyDistributor))
	}
	if w.UseRandomizedPayloads && (w.RandomBytesRatio < 0 || w.RandomBytesRatio > 1) {
		errs = append(errs, fmt.Errorf("randomBytesRatio %v is not within 0..1", w.RandomBytesRatio))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("omb workload %q: %w", w.Name, err)
	}
	return &w, nil
}

// LoadOMBWorkload reads a workload file.
func LoadOMBWorkload(path string) (*OMBWorkload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("omb workload: %w", err)
	}
	w, err := ParseOMBWorkload(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.Dir = filepath.Dir(path)
	return w, nil
}

// TestDuration and WarmupDuration are the workload's minutes as durations.
func (w *OMBWorkload) TestDuration() time.Duration {
	return time.Duration(w.TestDurationMinutes * float64(time.Minute))
}

// WarmupDuration is warmupDurationMinutes as a duration.
func (w *OMBWorkload) WarmupDuration() time.Duration {
	return time.Duration(*w.WarmupDurationMinutes * float64(time.Minute))
}

// OMBDriver is an OMB Kafka driver file (driver-kafka/*.yaml): the
// replication factor of the topics it creates and the client properties,
// as Java properties text.
type OMBDriver struct {
	Name              string `yaml:"name"`
	DriverClass       string `yaml:"driverClass"`
	ReplicationFactor int    `yaml:"replicationFactor"`
	Reset             bool   `yaml:"reset"`
	TopicConfig       string `yaml:"topicConfig"`
	CommonConfig      string `yaml:"commonConfig"`
	ProducerConfig    string `yaml:"producerConfig"`
	ConsumerConfig    string `yaml:"consumerConfig"`
}

// DefaultOMBDriver is OMB's kafka-latency driver on one replica: acks=all,
// linger.ms=1, batch.size=131072, consumers from the earliest offset
// without auto-commit.
func DefaultOMBDriver() *OMBDriver {
	return &OMBDriver{
		Name: "Kafka", DriverClass: "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
		ReplicationFactor: 1, Reset: true,
		ProducerConfig: "acks=all\nlinger.ms=1\nbatch.size=131072\n",
		ConsumerConfig: "auto.offset.reset=earliest\nenable.auto.commit=false\n",
	}
}

// ParseOMBDriver reads a driver file's YAML.
func ParseOMBDriver(data []byte) (*OMBDriver, error) {
	var d OMBDriver
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("omb driver: %w", err)
	}
	if d.Name == "" {
		d.Name = "Kafka"
	}
	if d.ReplicationFactor <= 0 {
		d.ReplicationFactor = 1
	}
	for _, s := range []string{d.TopicConfig, d.CommonConfig, d.ProducerConfig, d.ConsumerConfig} {
		if _, err := parseProperties(s); err != nil {
			return nil, fmt.Errorf("omb driver %s: %w", d.Name, err)
		}
	}
	return &d, nil
}

// LoadOMBDriver reads a driver file.
func LoadOMBDriver(path string) (*OMBDriver, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("omb driver: %w", err)
	}
	d, err := ParseOMBDriver(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// parseProperties reads Java properties text (key=value or key: value
// lines, # and ! comments); the driver files use no escapes.
func parseProperties(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if c := strings.IndexByte(line, ':'); !ok || (c >= 0 && c < len(k)) {
			k, v, ok = strings.Cut(line, ":")
		}
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("properties line %d: %q is not key=value", i+1, line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// clientProps are the driver's properties for role (common, then the
// role's own), split into those the client applies and those it does
// not know (reported; Java-only settings such as default.api.timeout.ms).
func (d *OMBDriver) clientProps(role cli.Role) (apply cli.Props, ignored []string) {
	common, _ := parseProperties(d.CommonConfig)
	own := d.ProducerConfig
	if role == cli.Consumer {
		own = d.ConsumerConfig
	}
	mine, _ := parseProperties(own)
	all := cli.Props{}
	maps.Copy(all, common)
	maps.Copy(all, mine)
	delete(all, "bootstrap.servers") // the run's cluster decides
	apply = cli.Props{}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		probe := cli.Props{"bootstrap.servers": "127.0.0.1:9092", k: all[k]}
		if _, err := cli.ClientOpts(role, probe); err != nil {
			ignored = append(ignored, k+"="+all[k])
			continue
		}
		apply[k] = all[k]
	}
	return apply, ignored
}

// topicConfigs are the driver's topicConfig properties.
func (d *OMBDriver) topicConfigs() map[string]string {
	m, _ := parseProperties(d.TopicConfig)
	return m
}

// BuiltinOMBWorkload reads the workload file name (with or without
// ".yaml") from fsys, the built-in set of bench/omb.
func BuiltinOMBWorkload(fsys fs.FS, name string) (*OMBWorkload, error) {
	file := strings.TrimSuffix(name, ".yaml") + ".yaml"
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		names, _ := BuiltinOMBWorkloads(fsys)
		return nil, fmt.Errorf("omb workload %q: not a file and not built in (built in: %s)", name, strings.Join(names, ", "))
	}
	w, err := ParseOMBWorkload(data)
	if err != nil {
		return nil, fmt.Errorf("built-in %s: %w", file, err)
	}
	return w, nil
}

// BuiltinOMBWorkloads lists the workload names of fsys.
func BuiltinOMBWorkloads(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
			out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	return out, nil
}
