package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Kind is the shape of the workload a scenario runs.
type Kind string

const (
	// KindProduce runs the producers alone.
	KindProduce Kind = "produce"
	// KindConsume fills the topic first (not measured), then runs the
	// consumers alone.
	KindConsume Kind = "consume"
	// KindProduceThenConsume runs the producers, then the consumers over
	// what they wrote, measuring both.
	KindProduceThenConsume Kind = "produce-then-consume"
	// KindProduceConsume runs producers and consumers at the same time.
	KindProduceConsume Kind = "produce-consume"
	// KindStoredData keeps one producer writing and samples its throughput
	// against the bytes already stored.
	KindStoredData Kind = "stored-data"
	// KindRetention writes at a fixed rate for a while, then samples the
	// bytes on disk while time-based retention deletes them.
	KindRetention Kind = "retention"
	// KindEndToEnd measures end-to-end latency (send to receive) at a fixed
	// rate with producers and consumers running together.
	KindEndToEnd Kind = "e2e-latency"
)

var kinds = []Kind{KindProduce, KindConsume, KindProduceThenConsume, KindProduceConsume, KindStoredData, KindRetention, KindEndToEnd}

// Consumer group modes.
const (
	// GroupShared puts all consumers in one group: they split the
	// partitions, and consumers beyond the partition count are idle.
	GroupShared = "shared"
	// GroupSeparate gives each consumer all partitions (no group): each
	// reads every record, as separate consumer-perf-test processes do.
	GroupSeparate = "separate"
)

// Duration is a time.Duration written as "1.5s", "200ms", "5m" in YAML.
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes the duration as a string (JSON results).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// TopicSpec is the layout of the topic each run creates.
type TopicSpec struct {
	Partitions        int               `yaml:"partitions" json:"partitions"`
	ReplicationFactor int               `yaml:"replication_factor" json:"replication_factor"`
	Configs           map[string]string `yaml:"configs,omitempty" json:"configs,omitempty"`
}

// Sweep names one parameter and the values it takes. Parameter is one of
// partitions, replication_factor, producers, consumers, record_size, acks,
// compression, rate, or "broker.<server property>" or "topic.<topic config>".
type Sweep struct {
	Parameter string   `yaml:"parameter" json:"parameter"`
	Values    []string `yaml:"values" json:"values"`
}

// Sizes is the part of a scenario a profile scales: how much each run does
// and how often it is repeated. Zero fields leave the scenario's value.
type Sizes struct {
	Records     int64    `yaml:"records,omitempty" json:"records,omitempty"`
	MaxBytes    int64    `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
	Duration    Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Observe     Duration `yaml:"observe,omitempty" json:"observe,omitempty"`
	Rate        float64  `yaml:"rate,omitempty" json:"rate,omitempty"`
	Repetitions int      `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	// Values replaces the sweep values (a shorter sweep for quick runs).
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
	// Topic replaces topic configs (e.g. shorter segment.ms).
	Topic map[string]string `yaml:"topic,omitempty" json:"topic,omitempty"`
	// Broker replaces broker settings.
	Broker map[string]string `yaml:"broker,omitempty" json:"broker,omitempty"`
}

// Scenario is one experiment of the study, read from a YAML file. The
// fields at the top level are the full profile (the seeds' sizes); Quick
// holds the scaled-down sizes of the quick profile.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Title       string `yaml:"title" json:"title"`
	Seed        string `yaml:"seed" json:"seed"` // which study and section it reproduces
	Description string `yaml:"description" json:"description"`
	Kind        Kind   `yaml:"kind" json:"kind"`

	// Brokers is the cluster size the scenario asks for; an embedded
	// cluster that cannot start that many runs the points whose
	// replication factor fits and skips the others.
	Brokers int               `yaml:"brokers" json:"brokers"`
	Broker  map[string]string `yaml:"broker,omitempty" json:"broker,omitempty"`
	Topic   TopicSpec         `yaml:"topic" json:"topic"`

	Producers     int               `yaml:"producers" json:"producers"`
	Consumers     int               `yaml:"consumers" json:"consumers"`
	ConsumerGroup string            `yaml:"consumer_group,omitempty" json:"consumer_group,omitempty"`
	RecordSize    int               `yaml:"record_size" json:"record_size"`
	Acks          string            `yaml:"acks" json:"acks"`
	Compression   string            `yaml:"compression" json:"compression"`
	ProducerProps map[string]string `yaml:"producer_props,omitempty" json:"producer_props,omitempty"`
	ConsumerProps map[string]string `yaml:"consumer_props,omitempty" json:"consumer_props,omitempty"`

	// Records is the total number of records per run, split evenly over
	// the producers. MaxBytes, when set, lowers it to MaxBytes/RecordSize
	// (so a record-size sweep writes comparable volumes).
	Records  int64 `yaml:"records" json:"records"`
	MaxBytes int64 `yaml:"max_bytes,omitempty" json:"max_bytes,omitempty"`
	// Duration bounds time-based kinds (retention); Observe is how long
	// retention is watched after writing stops.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Observe  Duration `yaml:"observe,omitempty" json:"observe,omitempty"`
	// Rate is the total records/s over all producers; 0 is unlimited.
	Rate float64 `yaml:"rate,omitempty" json:"rate,omitempty"`
	// Samples is how many throughput samples stored-data takes.
	Samples     int `yaml:"samples,omitempty" json:"samples,omitempty"`
	Repetitions int `yaml:"repetitions" json:"repetitions"`

	Sweep  Sweep `yaml:"sweep" json:"sweep"`
	Series Sweep `yaml:"series,omitempty" json:"series,omitempty"`

	Quick Sizes `yaml:"quick" json:"quick"`

	// Charts lists the metrics drawn for this scenario (see report.go).
	Charts []ChartSpec `yaml:"charts,omitempty" json:"charts,omitempty"`
}

// ChartSpec is one chart of a scenario: the metrics drawn as lines (or bars)
// against the swept parameter, one line per metric and series.
type ChartSpec struct {
	Title   string   `yaml:"title" json:"title"`
	Metrics []string `yaml:"metrics" json:"metrics"`
	// X is "sweep" (default), or "samples" for the time series of
	// stored-data and retention runs.
	X string `yaml:"x,omitempty" json:"x,omitempty"`
	// PerClient adds one line per producer (p_i_j of the seed charts).
	PerClient bool   `yaml:"per_client,omitempty" json:"per_client,omitempty"`
	Bars      bool   `yaml:"bars,omitempty" json:"bars,omitempty"`
	YLabel    string `yaml:"y_label,omitempty" json:"y_label,omitempty"`
}

// Profile selects the sizes of a run: "full" uses the scenario's top-level
// sizes, "quick" applies its Quick block. The caps (when > 0) shrink every
// scenario further, for tests and smoke runs.
type Profile struct {
	Name           string
	MaxRecords     int64
	MaxRepetitions int
	MaxDuration    time.Duration
}

// Profiles by name.
var (
	ProfileQuick = Profile{Name: "quick"}
	ProfileFull  = Profile{Name: "full"}
)

// ProfileByName returns the quick or full profile.
func ProfileByName(name string) (Profile, error) {
	switch name {
	case "quick":
		return ProfileQuick, nil
	case "full":
		return ProfileFull, nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q (want quick or full)", name)
}

// ParseScenario reads one scenario from YAML; unknown fields are errors.
func ParseScenario(data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	s.setDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScenarios reads every *.yaml file of dir in fsys, sorted by file
// name. Each error names its file.
func LoadScenarios(fsys fs.FS, dir string) ([]*Scenario, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read scenarios: %w", err)
	}
	var out []*Scenario
	seen := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		p := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", p, err)
		}
		s, err := ParseScenario(data)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", p, err)
		}
		if prev, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("scenario %s: name %q already used by %s", p, s.Name, prev)
		}
		seen[s.Name] = p
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario files in %s", dir)
	}
	return out, nil
}

// LoadScenarioDir reads the scenarios of a directory on disk.
func LoadScenarioDir(dir string) ([]*Scenario, error) {
	return LoadScenarios(os.DirFS(dir), ".")
}

func (s *Scenario) setDefaults() {
	if s.Brokers == 0 {
		s.Brokers = 1
	}
	if s.Topic.Partitions == 0 {
		s.Topic.Partitions = 1
	}
	if s.Topic.ReplicationFactor == 0 {
		s.Topic.ReplicationFactor = 1
	}
	if s.Producers == 0 && s.Kind != KindConsume {
		s.Producers = 1
	}
	if s.Kind == KindConsume && s.Producers == 0 {
		s.Producers = 1 // the fill producer
	}
	if s.Acks == "" {
		s.Acks = "1"
	}
	if s.Compression == "" {
		s.Compression = "none"
	}
	if s.ConsumerGroup == "" {
		s.ConsumerGroup = GroupShared
	}
	if s.Repetitions == 0 {
		s.Repetitions = 1
	}
	if s.Samples == 0 {
		s.Samples = 20
	}
}

// Validate reports the first problem of the scenario, naming the field.
func (s *Scenario) Validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if !slices.Contains(kinds, s.Kind) {
		errs = append(errs, fmt.Errorf("kind %q is not one of %v", s.Kind, kinds))
	}
	if s.RecordSize <= 0 {
		errs = append(errs, fmt.Errorf("record_size %d must be > 0", s.RecordSize))
	}
	if s.Kind == KindEndToEnd && s.RecordSize < 8 {
		errs = append(errs, errors.New("record_size must be >= 8 for e2e-latency (the send time is in the value)"))
	}
	if s.Records <= 0 && s.Kind != KindRetention {
		errs = append(errs, errors.New("records must be > 0"))
	}
	if s.Kind == KindRetention && (s.Duration <= 0 || s.Rate <= 0) {
		errs = append(errs, errors.New("retention needs duration and rate"))
	}
	if (s.Kind == KindConsume || s.Kind == KindProduceConsume || s.Kind == KindProduceThenConsume || s.Kind == KindEndToEnd) && s.Consumers <= 0 {
		errs = append(errs, fmt.Errorf("kind %s needs consumers > 0", s.Kind))
	}
	if s.ConsumerGroup != GroupShared && s.ConsumerGroup != GroupSeparate {
		errs = append(errs, fmt.Errorf("consumer_group %q is not shared or separate", s.ConsumerGroup))
	}
	for _, sw := range []Sweep{s.Sweep, s.Series} {
		if sw.Parameter == "" {
			if len(sw.Values) > 0 {
				errs = append(errs, errors.New("sweep values without a parameter"))
			}
			continue
		}
		for _, v := range sw.Values {
			if _, err := s.with(sw.Parameter, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if s.Sweep.Parameter != "" && s.Sweep.Parameter == s.Series.Parameter {
		errs = append(errs, errors.New("sweep and series name the same parameter"))
	}
	for _, v := range s.Quick.Values {
		if _, err := s.with(s.Sweep.Parameter, v); err != nil {
			errs = append(errs, fmt.Errorf("quick: %w", err))
		}
	}
	return errors.Join(errs...)
}

// with returns a copy of s with parameter set to value.
func (s Scenario) with(param, value string) (Scenario, error) {
	atoi := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s: %q is not a positive integer", param, value)
		}
		return n, nil
	}
	var err error
	switch {
	case param == "partitions":
		s.Topic.Partitions, err = atoi()
	case param == "replication_factor":
		s.Topic.ReplicationFactor, err = atoi()
	case param == "producers":
		s.Producers, err = atoi()
	case param == "consumers":
		s.Consumers, err = atoi()
	case param == "record_size":
		s.RecordSize, err = atoi()
	case param == "brokers":
		s.Brokers, err = atoi()
	case param == "acks":
		if value != "0" && value != "1" && value != "all" && value != "-1" {
			return s, fmt.Errorf("acks: %q is not 0, 1, all or -1", value)
		}
		s.Acks = value
	case param == "compression":
		if !slices.Contains([]string{"none", "gzip", "snappy", "lz4", "zstd"}, value) {
			return s, fmt.Errorf("compression: %q is not none, gzip, snappy, lz4 or zstd", value)
		}
		s.Compression = value
	case param == "rate":
		s.Rate, err = strconv.ParseFloat(value, 64)
	case strings.HasPrefix(param, "broker."):
		s.Broker = maps.Clone(s.Broker)
		if s.Broker == nil {
			s.Broker = map[string]string{}
		}
		s.Broker[strings.TrimPrefix(param, "broker.")] = value
	case strings.HasPrefix(param, "topic."):
		s.Topic.Configs = maps.Clone(s.Topic.Configs)
		if s.Topic.Configs == nil {
			s.Topic.Configs = map[string]string{}
		}
		s.Topic.Configs[strings.TrimPrefix(param, "topic.")] = value
	default:
		return s, fmt.Errorf("unknown sweep parameter %q", param)
	}
	return s, err
}

// Point is one cell of a scenario: the scenario with its swept parameter
// (and series parameter) set, sized for a profile.
type Point struct {
	Scenario *Scenario `json:"-"`
	// Series and Value are the series and sweep values ("" when the
	// scenario has none).
	Series string `json:"series,omitempty"`
	Value  string `json:"value,omitempty"`
	// Spec is the resolved experiment.
	Spec Scenario `json:"-"`
}

// Label names the point, e.g. "acks=all replication_factor=3".
func (p Point) Label() string {
	var parts []string
	if p.Scenario.Series.Parameter != "" {
		parts = append(parts, p.Scenario.Series.Parameter+"="+p.Series)
	}
	if p.Scenario.Sweep.Parameter != "" {
		parts = append(parts, p.Scenario.Sweep.Parameter+"="+p.Value)
	}
	if len(parts) == 0 {
		return "baseline"
	}
	return strings.Join(parts, " ")
}

// Points expands the scenario into its points for profile, series-major.
func (s *Scenario) Points(prof Profile) ([]Point, error) {
	base := *s
	if prof.Name == ProfileQuick.Name {
		q := s.Quick
		if q.Records > 0 {
			base.Records = q.Records
		}
		if q.MaxBytes > 0 {
			base.MaxBytes = q.MaxBytes
		}
		if q.Duration > 0 {
			base.Duration = q.Duration
		}
		if q.Observe > 0 {
			base.Observe = q.Observe
		}
		if q.Rate > 0 {
			base.Rate = q.Rate
		}
		if q.Repetitions > 0 {
			base.Repetitions = q.Repetitions
		}
		if len(q.Values) > 0 {
			base.Sweep.Values = q.Values
		}
		if len(q.Topic) > 0 {
			base.Topic.Configs = maps.Clone(base.Topic.Configs)
			if base.Topic.Configs == nil {
				base.Topic.Configs = map[string]string{}
			}
			maps.Copy(base.Topic.Configs, q.Topic)
		}
		if len(q.Broker) > 0 {
			base.Broker = maps.Clone(base.Broker)
			if base.Broker == nil {
				base.Broker = map[string]string{}
			}
			maps.Copy(base.Broker, q.Broker)
		}
	}
	if prof.MaxRecords > 0 && base.Records > prof.MaxRecords {
		base.Records = prof.MaxRecords
	}
	if prof.MaxRepetitions > 0 && base.Repetitions > prof.MaxRepetitions {
		base.Repetitions = prof.MaxRepetitions
	}
	if prof.MaxDuration > 0 {
		if time.Duration(base.Duration) > prof.MaxDuration {
			base.Duration = Duration(prof.MaxDuration)
		}
		if time.Duration(base.Observe) > 4*prof.MaxDuration {
			base.Observe = Duration(4 * prof.MaxDuration)
		}
	}
	series := []string{""}
	if base.Series.Parameter != "" {
		series = base.Series.Values
	}
	values := []string{""}
	if base.Sweep.Parameter != "" {
		values = base.Sweep.Values
	}
	var out []Point
	for _, sv := range series {
		for _, v := range values {
			spec := base
			var err error
			if sv != "" {
				if spec, err = spec.with(base.Series.Parameter, sv); err != nil {
					return nil, err
				}
			}
			if v != "" {
				if spec, err = spec.with(base.Sweep.Parameter, v); err != nil {
					return nil, err
				}
			}
			if spec.MaxBytes > 0 && spec.Records*int64(spec.RecordSize) > spec.MaxBytes {
				spec.Records = max(spec.MaxBytes/int64(spec.RecordSize), int64(spec.Producers))
			}
			if spec.Records < int64(spec.Producers) {
				spec.Records = int64(spec.Producers)
			}
			out = append(out, Point{Scenario: s, Series: sv, Value: v, Spec: spec})
		}
	}
	return out, nil
}

// BrokersNeeded is the cluster size the point needs at least: its
// replication factor.
func (p Point) BrokersNeeded() int { return p.Spec.Topic.ReplicationFactor }
