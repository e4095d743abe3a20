package configs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Entry is one config line of --describe.
type Entry struct {
	Name      string
	Value     *string
	Sensitive bool
	Synonyms  []Synonym
}

// Synonym is one synonym of an Entry, with the source name Kafka prints.
type Synonym struct {
	Source string
	Name   string
	Value  *string
}

func javaString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// WriteDescription prints the configs of one entity. entityType is
// "topics" or "brokers"; name "" is the brokers' cluster default.
func WriteDescription(w io.Writer, entityType, name string, all bool, entries []Entry) {
	if name == "" {
		fmt.Fprintf(w, "Default configs for %s in the cluster are:\n", entityType)
	} else {
		kind := "Dynamic"
		if all {
			kind = "All"
		}
		fmt.Fprintf(w, "%s configs for %s %s are:\n", kind, strings.TrimSuffix(entityType, "s"), name)
	}
	for _, e := range entries {
		syn := make([]string, len(e.Synonyms))
		for i, s := range e.Synonyms {
			syn[i] = s.Source + ":" + s.Name + "=" + javaString(s.Value)
		}
		fmt.Fprintf(w, "  %s=%s sensitive=%t synonyms={%s}\n", e.Name, javaString(e.Value), e.Sensitive, strings.Join(syn, ", "))
	}
}

// sourceName is Kafka's ConfigEntry.ConfigSource enum name.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "DYNAMIC_TOPIC_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "DYNAMIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "STATIC_BROKER_CONFIG"
	case kmsg.ConfigSourceDefaultConfig:
		return "DEFAULT_CONFIG"
	case kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	case kmsg.ConfigSourceClientMetricsConfig:
		return "CLIENT_METRICS_CONFIG"
	}
	return "UNKNOWN"
}

// ParseAddConfig reads --add-config: k1=v1,k2=[v2,v3] (square brackets
// group a value that holds commas).
func ParseAddConfig(s string) (map[string]string, error) {
	out := map[string]string{}
	depth, start := 0, 0
	var parts []string
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("invalid entity config: all configs to be added must be in the format \"key=val\", got %q", p)
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// Run is `silkworm configs` with Kafka's kafka-configs.sh options.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("configs", "This tool helps to manipulate and describe entity config for a topic or broker")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server to connect to", "The Kafka server to connect to.", "")
	commandConfig := p.String("command-config", "command config property file", "Property file containing configs to be passed to Admin Client.", "")
	entityType := p.List("entity-type", "type", "Type of entity (topics/brokers)")
	entityName := p.List("entity-name", "name", "Name of entity (topic name/broker id)")
	entityDefault := p.Flag("entity-default", "Default entity name for brokers (applies to corresponding entity type in command line)")
	_ = p.Flag("describe", "List configs for the given entity.")
	alter := p.Flag("alter", "Alter the configuration for the entity.")
	addConfig := p.String("add-config", "k1=v1,k2=[v1,v2,v2],k3=v3", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.", "")
	deleteConfig := p.String("delete-config", "k1,k2", "config keys to remove 'k1,k2'", "")
	all := p.Flag("all", "List all configs for the given topic or broker entity (includes static configuration when the entity type is brokers)")
	topic := p.String("topic", "topic", "The topic's name.", "")
	broker := p.String("broker", "broker-id", "The broker's ID.", "")
	brokerDefaults := p.Flag("broker-defaults", "The config defaults for all brokers.")
	p.Ignored("force", "", "Suppress console prompts")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return err
	}
	if err := p.RequireOneOf("describe", "alter"); err != nil {
		return fmt.Errorf("command must include exactly one action: --describe, --alter (%w)", err)
	}
	typ, name, isDefault := "", "", *entityDefault || *brokerDefaults
	switch {
	case p.Has("topic"):
		typ, name = "topics", *topic
	case p.Has("broker"):
		typ, name = "brokers", *broker
	case *brokerDefaults:
		typ = "brokers"
	case len(*entityType) == 1:
		typ = (*entityType)[0]
		if len(*entityName) > 0 {
			name = (*entityName)[0]
		}
	default:
		return errors.New("exactly one entity type must be given: --entity-type topics|brokers (or --topic, --broker, --broker-defaults)")
	}
	if typ != "topics" && typ != "brokers" {
		return fmt.Errorf("invalid entity type %s: only topics and brokers are supported", typ)
	}
	if typ == "topics" && name == "" && (*alter || isDefault) {
		return errors.New("an entity name must be specified with --alter of topics")
	}
	if typ == "brokers" && name != "" {
		if _, err := strconv.ParseInt(name, 10, 32); err != nil {
			return fmt.Errorf("the entity name for brokers must be a valid integer broker id, found: %s", name)
		}
	}
	if *alter && !p.Has("add-config") && !p.Has("delete-config") {
		return errors.New("must specify --add-config or --delete-config with --alter")
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, *bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	if *alter {
		return alterConfigs(ctx, adm, typ, name, *addConfig, *deleteConfig, stdout)
	}
	return describeConfigs(ctx, adm, typ, name, isDefault, *all, stdout)
}

func alterConfigs(ctx context.Context, adm *kadm.Client, typ, name, add, del string, w io.Writer) error {
	adds, err := ParseAddConfig(add)
	if err != nil {
		return err
	}
	var ops []kadm.AlterConfig
	keys := make([]string, 0, len(adds))
	for k := range adds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(adds[k])})
	}
	for _, k := range strings.Split(del, ",") {
		if k = strings.TrimSpace(k); k != "" {
			if _, dup := adds[k]; dup {
				return fmt.Errorf("config %s cannot be both added and deleted", k)
			}
			ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
		}
	}
	var resps kadm.AlterConfigsResponses
	if typ == "topics" {
		resps, err = adm.AlterTopicConfigs(ctx, ops, name)
	} else if name == "" {
		resps, err = adm.AlterBrokerConfigs(ctx, ops)
	} else {
		id, _ := strconv.ParseInt(name, 10, 32)
		resps, err = adm.AlterBrokerConfigs(ctx, ops, int32(id))
	}
	if err != nil {
		return fmt.Errorf("alter configs: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("alter configs of %s %s: %w: %s", strings.TrimSuffix(typ, "s"), r.Name, r.Err, r.ErrMessage)
			}
			return fmt.Errorf("alter configs of %s %s: %w", strings.TrimSuffix(typ, "s"), r.Name, r.Err)
		}
	}
	if name == "" {
		fmt.Fprintf(w, "Completed updating default config for %s in the cluster.\n", typ)
	} else {
		fmt.Fprintf(w, "Completed updating config for %s %s.\n", strings.TrimSuffix(typ, "s"), name)
	}
	return nil
}

func describeConfigs(ctx context.Context, adm *kadm.Client, typ, name string, isDefault, all bool, w io.Writer) error {
	var names []string
	switch {
	case name != "":
		names = []string{name}
	case isDefault:
		names = []string{""}
	case typ == "topics":
		td, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		names = td.Names()
	default:
		bs, err := adm.ListBrokers(ctx)
		if err != nil {
			return fmt.Errorf("describe cluster: %w", err)
		}
		for _, b := range bs {
			names = append(names, strconv.Itoa(int(b.NodeID)))
		}
		names = append(names, "")
	}
	for _, n := range names {
		var rcs kadm.ResourceConfigs
		var err error
		if typ == "topics" {
			rcs, err = adm.DescribeTopicConfigs(ctx, n)
		} else if n == "" {
			rcs, err = adm.DescribeBrokerConfigs(ctx)
		} else {
			id, _ := strconv.ParseInt(n, 10, 32)
			rcs, err = adm.DescribeBrokerConfigs(ctx, int32(id))
		}
		if err != nil {
			return fmt.Errorf("describe configs of %s %s: %w", strings.TrimSuffix(typ, "s"), n, err)
		}
		if len(rcs) != 1 {
			return fmt.Errorf("describe configs of %s %s: got %d resources", strings.TrimSuffix(typ, "s"), n, len(rcs))
		}
		if rcs[0].Err != nil {
			return fmt.Errorf("describe configs of %s %s: %w", strings.TrimSuffix(typ, "s"), n, rcs[0].Err)
		}
		want := kmsg.ConfigSourceDynamicTopicConfig
		if typ == "brokers" {
			want = kmsg.ConfigSourceDynamicBrokerConfig
			if n == "" {
				want = kmsg.ConfigSourceDynamicDefaultBrokerConfig
			}
		}
		var entries []Entry
		for _, c := range rcs[0].Configs {
			if !all && c.Source != want {
				continue
			}
			e := Entry{Name: c.Key, Value: c.Value, Sensitive: c.Sensitive}
			for _, s := range c.Synonyms {
				e.Synonyms = append(e.Synonyms, Synonym{Source: sourceName(s.Source), Name: s.Key, Value: s.Value})
			}
			entries = append(entries, e)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		WriteDescription(w, typ, n, all, entries)
	}
	return nil
}
