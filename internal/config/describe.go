package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Entry is one config of a DescribeConfigs response resource, with the
// fields kmsg.DescribeConfigsResponseResourceConfig needs.
type Entry struct {
	Name      string
	Value     *string // nil for sensitive values and null values
	Source    kmsg.ConfigSource
	ReadOnly  bool
	Sensitive bool
	Type      kmsg.ConfigType
	Doc       string
	// Synonyms is the precedence chain, winning value first, as Kafka
	// reports it when IncludeSynonyms is set.
	Synonyms []Synonym
}

// Synonym is one step of an Entry's precedence chain.
type Synonym struct {
	Name   string
	Value  *string
	Source kmsg.ConfigSource
}

// brokerSynonyms are the broker keys that set the same thing as name, in
// priority order (Kafka's DynamicBrokerConfig.brokerConfigSynonyms).
func brokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// configSynonyms builds the chain for a broker key the way Kafka's
// ConfigHelper does: dynamic per-broker values, then dynamic cluster
// defaults, then static values, then non-null defaults, each in synonym
// order; entries before name itself are dropped.
//
// perBroker and clusterDefault, when not nil, are dynamic values newer
// than b's (the metadata image's), laid over b's two dynamic levels.
func (b *Broker) configSynonyms(name string, synonyms []string, sensitive bool, perBroker, clusterDefault map[string]string) []Synonym {
	var out []Synonym
	add := func(m map[string]string, src kmsg.ConfigSource) {
		for _, s := range synonyms {
			v, ok := m[s]
			if !ok {
				continue
			}
			var vp *string
			if !sensitive {
				vp = &v
			}
			out = append(out, Synonym{Name: s, Value: vp, Source: src})
		}
	}
	over := func(base, newer map[string]string) map[string]string {
		if len(newer) == 0 {
			return base
		}
		m := copyMap(base)
		for k, v := range newer {
			m[k] = strings.TrimSpace(v)
		}
		return m
	}
	add(over(b.dynamicBroker, perBroker), kmsg.ConfigSourceDynamicBrokerConfig)
	add(over(b.dynamicDefault, clusterDefault), kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	add(b.static, kmsg.ConfigSourceStaticBrokerConfig)
	defaults := map[string]string{}
	for _, s := range synonyms {
		if k, ok := brokerKeyIndex[s]; ok {
			if d := k.defaultValue(); d != nil {
				defaults[s] = *d
			}
		}
	}
	add(defaults, kmsg.ConfigSourceDefaultConfig)
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

// DescribeTopic describes every topic config for a topic with the given
// overrides, sorted by name. Values are effective values; sources and
// synonyms follow Kafka: DYNAMIC_TOPIC_CONFIG for an override, then the
// broker keys that supply the default. Like Kafka, when a topic key's first
// broker synonym is set nowhere (e.g. log.retention.ms unset while
// log.retention.hours is), the chain is empty and the source DEFAULT_CONFIG.
// Overrides are assumed valid (ResolveTopic first); an invalid one is
// reported as set.
func DescribeTopic(b *Broker, overrides map[string]string) []Entry {
	if b == nil {
		b = DefaultBroker()
	}
	out := make([]Entry, 0, len(TopicKeys))
	for i := range TopicKeys {
		k := &TopicKeys[i]
		var value string
		var chain []Synonym
		if len(k.Synonyms) > 0 {
			chain = b.configSynonyms(k.Synonyms[0], brokerSynonyms(k.Synonyms[0]), false, nil, nil)
		}
		if ov, ok := overrides[k.Name]; ok {
			value = canonical(k.Type, ov)
			v := value
			chain = append([]Synonym{{Name: k.Name, Value: &v, Source: kmsg.ConfigSourceDynamicTopicConfig}}, chain...)
		} else {
			value, _ = brokerTopicDefault(b, k)
		}
		src := kmsg.ConfigSourceDefaultConfig
		if len(chain) > 0 {
			src = chain[0].Source
		}
		v := value
		out = append(out, Entry{
			Name: k.Name, Value: &v, Source: src, Type: k.Type, Doc: k.Doc, Synonyms: chain,
		})
	}
	return out
}

// DescribeBroker describes every broker key Kafka and Silkworm know (and
// any set prefixed key such as listener.name.*), sorted by name, for the
// broker resource of DescribeConfigs. perBroker and clusterDefault hold
// extra dynamic configs (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG)
// on top of those b was built with; either may be nil. Passwords are
// sensitive and have a nil value.
func DescribeBroker(b *Broker, perBroker, clusterDefault map[string]string) []Entry {
	names := make([]string, 0, len(brokerKeyIndex))
	for n := range brokerKeyIndex {
		names = append(names, n)
	}
	for n := range b.values {
		if _, ok := brokerKeyIndex[n]; !ok {
			names = append(names, n)
		}
	}
	for _, dynamic := range []map[string]string{perBroker, clusterDefault} {
		for n := range dynamic {
			if _, ok := brokerKeyIndex[n]; !ok && !contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		typ, mode := kmsg.ConfigTypeString, PerBroker // prefixed keys: listener overrides are per-broker
		if k, ok := brokerKeyIndex[n]; ok {
			typ, mode = k.typ, k.mode
		} else if _, lk, _ := splitListenerKey(n); brokerKeyIndex[lk] != nil {
			// listener.name.<l>.<key> is as sensitive as <key> (a
			// keystore key, a password).
			typ = brokerKeyIndex[lk].typ
		} else if strings.Contains(n, "password") || strings.HasSuffix(n, "jaas.config") ||
			strings.HasSuffix(n, ".ssl.keystore.key") {
			typ = kmsg.ConfigTypePassword
		}
		sensitive := typ == kmsg.ConfigTypePassword
		chain := b.configSynonyms(n, brokerSynonyms(n), sensitive, perBroker, clusterDefault)
		var value *string
		if len(chain) > 0 {
			value = chain[0].Value
		}
		src := kmsg.ConfigSourceDefaultConfig
		if len(chain) > 0 {
			src = chain[0].Source
		}
		out = append(out, Entry{
			Name: n, Value: value, Source: src, ReadOnly: mode == ReadOnly,
			Sensitive: sensitive, Type: typ, Doc: brokerDocs[n], Synonyms: chain,
		})
	}
	return out
}

// DescribeBrokerDefaults describes the cluster-wide dynamic broker configs
// (the BROKER resource named ""), as Kafka answers for it: only the keys
// set at that level, without per-broker synonyms.
func DescribeBrokerDefaults(b *Broker, clusterDefault map[string]string) []Entry {
	var out []Entry
	for _, e := range DescribeBroker(b, nil, clusterDefault) {
		if _, ok := clusterDefault[e.Name]; !ok {
			continue
		}
		for len(e.Synonyms) > 0 && e.Synonyms[0].Source == kmsg.ConfigSourceDynamicBrokerConfig {
			e.Synonyms = e.Synonyms[1:]
		}
		if len(e.Synonyms) > 0 {
			e.Value, e.Source = e.Synonyms[0].Value, e.Synonyms[0].Source
		}
		out = append(out, e)
	}
	return out
}

// PerBrokerOnly reports whether key can only be set for one broker, not as
// a cluster-wide default (Kafka's DynamicBrokerConfig "Cannot update these
// configs at default cluster level, broker id must be specified"): the
// per-broker keys and every listener.name.* override.
func PerBrokerOnly(key string) bool {
	if rest, ok := strings.CutPrefix(key, "listener.name."); ok {
		_, base, _ := strings.Cut(rest, ".")
		switch base {
		case "max.connections", "max.connection.creation.rate", "num.network.threads":
			return false // Kafka's ClusterLevelListenerConfigs
		}
		return true
	}
	k, ok := brokerKeyIndex[key]
	return ok && k.mode == PerBroker
}

// ValidateBrokerDynamic checks that key may be altered at runtime and that
// value is valid for it. As Kafka's DynamicBrokerConfig.validate, only the
// names it knows to be read-only are refused ("Cannot update these configs
// dynamically"); dynamic keys (per-broker or cluster-wide), listener.name.*
// overrides and names that are no broker config at all are accepted (the
// last are stored and ignored, as Kafka does).
func ValidateBrokerDynamic(key, value string) error {
	if strings.HasPrefix(key, "listener.name.") {
		return nil
	}
	k, ok := brokerKeyIndex[key]
	if !ok {
		return nil
	}
	if k.mode == ReadOnly {
		return fmt.Errorf("Cannot update these configs dynamically: Set(%s)", key)
	}
	_, err := checkValue(k, value)
	return err
}
