package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// UpdateMode says whether and how a broker key can be changed at runtime
// (Kafka's "Update Mode" column in its broker config docs).
type UpdateMode int8

const (
	// ReadOnly keys need a restart: only server.properties and --override set them.
	ReadOnly UpdateMode = iota
	// PerBroker keys can be altered dynamically for one broker.
	PerBroker
	// ClusterWide keys can be altered dynamically for one broker or as the
	// cluster-wide default.
	ClusterWide
)

func (m UpdateMode) String() string {
	switch m {
	case PerBroker:
		return "per-broker"
	case ClusterWide:
		return "cluster-wide"
	default:
		return "read-only"
	}
}

// kafkaKey is one row of kafkaBrokerKeys.
type kafkaKey struct {
	name  string
	typ   kmsg.ConfigType
	def   *string // Kafka's default; nil means null (no default)
	valid string  // Kafka's "Valid Values" text, interpreted by checkValue
	mode  UpdateMode
}

func ptr(s string) *string { return &s }

// BrokerKey describes one broker configuration key for DescribeConfigs and
// for callers that list or document keys.
type BrokerKey struct {
	Name string
	Type kmsg.ConfigType
	// Default is the default value Silkworm uses (Kafka's, except where
	// silkwormDefaults documents a deviation); nil means null.
	Default *string
	// Valid is Kafka's description of the allowed values ("[1,...]", a list of
	// choices, or "").
	Valid string
	Mode  UpdateMode
	// Supported is false for keys Kafka knows that Silkworm accepts and ignores.
	Supported bool
	Doc       string
}

var brokerKeyIndex = func() map[string]*kafkaKey {
	m := make(map[string]*kafkaKey, len(kafkaBrokerKeys)+len(silkwormKeys))
	for i := range kafkaBrokerKeys {
		m[kafkaBrokerKeys[i].name] = &kafkaBrokerKeys[i]
	}
	for i := range silkwormKeys {
		m[silkwormKeys[i].name] = &silkwormKeys[i]
	}
	return m
}()

// silkwormKeys are configuration keys that only Silkworm knows. They all start
// with "silkworm.".
var silkwormKeys = []kafkaKey{
	// Kafka keeps the cluster id in meta.properties (written by kafka-storage
	// format); Silkworm also accepts it as a config so a single node needs no
	// format step.
	{"silkworm.cluster.id", kmsg.ConfigTypeString, nil, "", ReadOnly},
	// The broker's HTTP listeners (off when empty): Prometheus metrics at
	// /metrics and the web console at /. The value is host:port, or
	// http://host:port or https://host:port (TLS with the broker's
	// ssl.keystore.* settings).
	{"silkworm.metrics.listener", kmsg.ConfigTypeString, nil, "", ReadOnly},
	{"silkworm.console.listener", kmsg.ConfigTypeString, nil, "", ReadOnly},
	// Directory the console lists `silkworm bench` runs from.
	{"silkworm.console.bench.dir", kmsg.ConfigTypeString, nil, "bench-results", ReadOnly},
	// Bounds of the storage caches (Kafka keeps every segment file open and
	// every index mapped): .log handles of rolled segments kept open, at
	// most half of RLIMIT_NOFILE whatever the value, and bytes of index
	// entries loaded from index files.
	{"silkworm.log.max.open.segment.files", kmsg.ConfigTypeInt, ptr("1000"), "[1,...]", ReadOnly},
	{"silkworm.log.index.cache.bytes", kmsg.ConfigTypeLong, ptr("33554432"), "[1,...]", ReadOnly},
}

// silkwormDefaults are the defaults where Silkworm deviates from Kafka so that
// "silkworm server" with no config file starts a usable single node.
var silkwormDefaults = map[string]string{
	// Kafka requires node.id in KRaft mode; a single node has an obvious id.
	"node.id": "1",
	// Kafka listens on all interfaces (PLAINTEXT://:9092); we start on loopback.
	"listeners": "PLAINTEXT://127.0.0.1:9092",
	// Kafka's default is /tmp/kafka-logs.
	"log.dir": "./silkworm-data",
	// Silkworm's own key: where silkworm bench writes its runs by default.
	"silkworm.console.bench.dir": "bench-results",
}

// prefixes of keys Kafka accepts with a free suffix; all are ignored for now.
var knownPrefixes = []string{
	"listener.name.",    // per-listener overrides of SSL/SASL/connection keys
	"config.providers.", // AbstractConfig config providers
	"rlmm.config.",      // remote log metadata manager plugin configs
	"rsm.config.",       // remote storage manager plugin configs
}

// LookupBrokerKey returns the metadata of a broker key Kafka or Silkworm knows.
func LookupBrokerKey(name string) (BrokerKey, bool) {
	k, ok := brokerKeyIndex[name]
	if !ok {
		return BrokerKey{}, false
	}
	return k.public(), true
}

// BrokerKeys returns every broker key Kafka (3.x and 4.x) and Silkworm know,
// sorted by name.
func BrokerKeys() []BrokerKey {
	out := make([]BrokerKey, 0, len(brokerKeyIndex))
	for _, k := range brokerKeyIndex {
		out = append(out, k.public())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (k *kafkaKey) public() BrokerKey {
	return BrokerKey{
		Name:      k.name,
		Type:      k.typ,
		Default:   k.defaultValue(),
		Valid:     k.valid,
		Mode:      k.mode,
		Supported: supportedBrokerKeys[k.name],
		Doc:       brokerDocs[k.name],
	}
}

// defaultValue is Silkworm's default for the key: Kafka's unless overridden.
func (k *kafkaKey) defaultValue() *string {
	if d, ok := silkwormDefaults[k.name]; ok {
		return &d
	}
	return k.def
}

func hasKnownPrefix(name string) bool {
	for _, p := range knownPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return name == "config.providers"
}

// invalidValue is the error for a value a key does not allow.
func invalidValue(key, value, allowed string) error {
	return fmt.Errorf("invalid value %q for configuration %s: %s", value, key, allowed)
}

// checkValue validates raw against the key's type and Kafka's valid-values
// rule, and returns the trimmed value. The error names the key, the value
// and what is allowed.
func checkValue(k *kafkaKey, raw string) (string, error) {
	v := strings.TrimSpace(raw)
	return v, checkTyped(k.name, k.typ, k.valid, v)
}

func checkTyped(name string, typ kmsg.ConfigType, valid, v string) error {
	switch typ {
	case kmsg.ConfigTypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return invalidValue(name, v, "must be true or false")
		}
		return nil
	case kmsg.ConfigTypeInt, kmsg.ConfigTypeShort, kmsg.ConfigTypeLong:
		bits, what := 32, "an integer"
		switch typ {
		case kmsg.ConfigTypeShort:
			bits, what = 16, "a short integer"
		case kmsg.ConfigTypeLong:
			bits, what = 64, "a long integer"
		}
		n, err := strconv.ParseInt(v, 10, bits)
		r := parseRange(valid)
		if err != nil {
			return invalidValue(name, v, "must be "+what+r.describe())
		}
		if !r.contains(float64(n)) {
			return invalidValue(name, v, "must be "+what+r.describe())
		}
		return nil
	case kmsg.ConfigTypeDouble:
		f, err := strconv.ParseFloat(v, 64)
		r := parseRange(valid)
		if err != nil || math.IsNaN(f) || !r.contains(f) {
			return invalidValue(name, v, "must be a number"+r.describe())
		}
		return nil
	case kmsg.ConfigTypeList:
		items := SplitList(v)
		// Kafka documents controller.quorum.voters and .bootstrap.servers as
		// "non-empty list" yet defaults them to empty; no check here.
		if choices := parseChoices(valid); choices != nil {
			for _, it := range items {
				if !contains(choices, it) {
					return invalidValue(name, v, "each item must be one of "+strings.Join(choices, ", "))
				}
			}
		}
		return nil
	default: // STRING, CLASS, PASSWORD
		if (valid == "non-empty string") && v == "" {
			return invalidValue(name, v, "must be a non-empty string")
		}
		if choices := parseChoices(valid); choices != nil && !contains(choices, v) {
			return invalidValue(name, v, "must be one of "+strings.Join(choices, ", "))
		}
		return nil
	}
}

// SplitList splits a Kafka LIST value: comma-separated, items trimmed, an
// empty value is an empty list.
func SplitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// valueRange is Kafka's Range validator ("[1,...]", "[0,...,1]") with an
// optional single extra allowed value ("[1,...,9] or -1").
type valueRange struct {
	hasMin, hasMax bool
	min, max       float64
	orValue        *float64
}

func parseRange(valid string) valueRange {
	var r valueRange
	s := valid
	if i := strings.Index(s, "] or "); i >= 0 {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s[i+5:]), 64); err == nil {
			r.orValue = &f
		}
		s = s[:i+1]
	}
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || !strings.Contains(s, "...") {
		return r
	}
	parts := strings.Split(s[1:len(s)-1], ",")
	if len(parts) >= 2 && strings.TrimSpace(parts[0]) != "..." {
		if f, err := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64); err == nil {
			r.hasMin, r.min = true, f
		}
	}
	if len(parts) == 3 {
		if f, err := strconv.ParseFloat(strings.TrimSpace(parts[2]), 64); err == nil {
			r.hasMax, r.max = true, f
		}
	}
	return r
}

func (r valueRange) contains(f float64) bool {
	if r.orValue != nil && f == *r.orValue {
		return true
	}
	return (!r.hasMin || f >= r.min) && (!r.hasMax || f <= r.max)
}

func (r valueRange) describe() string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	var s string
	switch {
	case r.hasMin && r.hasMax:
		s = fmt.Sprintf(" in [%s, %s]", num(r.min), num(r.max))
	case r.hasMin:
		s = " >= " + num(r.min)
	case r.hasMax:
		s = " <= " + num(r.max)
	}
	if r.orValue != nil {
		s += " or " + num(*r.orValue)
	}
	return s
}

// parseChoices reads Kafka's ValidString/ValidList text "[a, b, c]"; it
// returns nil for anything else (ranges, free text).
func parseChoices(valid string) []string {
	if !strings.HasPrefix(valid, "[") || !strings.HasSuffix(valid, "]") || strings.Contains(valid, "...") {
		return nil
	}
	parts := strings.Split(valid[1:len(valid)-1], ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}
