package configs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Entity types, as kafka-configs.sh names them.
const (
	Topics  = "topics"
	Brokers = "brokers"
	Users   = "users"
	Clients = "clients"
	IPs     = "ips"
)

// entityTypes are the entity types this tool handles, in Kafka's order.
var entityTypes = []string{Topics, Clients, Users, Brokers, IPs}

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

// outsideBrackets reports whether position i of s is outside square
// brackets the way Kafka's split lookahead (?=[^\]]*(?:\[|$)) decides it:
// from i on, a '[' or the end comes before any ']'.
func outsideBrackets(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case '[':
			return true
		case ']':
			return false
		}
	}
	return true
}

// splitOutside splits s at every sep that is outside square brackets. It
// also reports whether it found any.
func splitOutside(s string, sep byte) ([]string, bool) {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == sep && outsideBrackets(s, i+1) {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), start > 0
}

var configKey = regexp.MustCompile(`^[$a-zA-Z0-9._-]*$`)

// ParseAddConfig reads --add-config as kafka-configs.sh does:
// k1=v1,k2=[v2,v3] splits at the commas and '=' outside square brackets
// (so a value holding commas or '=' is bracketed:
// SCRAM-SHA-512=[iterations=8192,password=secret]), spaces around '=' and
// the brackets themselves are dropped, and a key may only hold letters,
// digits and $._-. Trailing empty items are ignored, as Java's split
// ignores them ("a=1," is a=1), but an empty string is an error.
func ParseAddConfig(s string) (map[string]string, error) {
	items, split := splitOutside(s, ',')
	for split && len(items) > 0 && items[len(items)-1] == "" {
		items = items[:len(items)-1] // Java's split drops trailing empty strings
	}
	out := map[string]string{}
	for _, item := range items {
		kv, _ := splitOutside(item, '=')
		if len(kv) != 2 {
			return nil, errors.New(`invalid entity config: all configs to be added must be in the format "key=val" or "key=[val1,val2]" to group values which contain commas`)
		}
		k := strings.TrimSpace(kv[0])
		v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))
		if !configKey.MatchString(k) {
			return nil, fmt.Errorf("invalid character found for config key: %s", k)
		}
		out[k] = v
	}
	return out, nil
}

// options is the parsed command line of `silkworm configs`.
type options struct {
	p                        *cli.Parser
	bootstrap, commandConfig *string
	describe, alter, all     *bool
	addConfig, addConfigFile *string
	deleteConfig             *[]string
	types                    []string // Kafka's entityTypes
	names                    []string // Kafka's entityNames; "" is a default entity
}

// entityFlags are the shorthand options naming an entity, in the order
// Kafka collects them; entityDefaultFlags name a type's default entity.
var (
	entityFlags        = []struct{ flag, typ string }{{"topic", Topics}, {"client", Clients}, {"user", Users}, {"broker", Brokers}, {"ip", IPs}}
	entityDefaultFlags = []struct{ flag, typ string }{{"client-defaults", Clients}, {"user-defaults", Users}, {"broker-defaults", Brokers}, {"ip-defaults", IPs}}
)

func parse(args []string, stdout io.Writer) (*options, error) {
	p := cli.NewParser("configs", "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip")
	p.Output = stdout
	o := &options{p: p}
	o.bootstrap = p.String("bootstrap-server", "server to connect to", "The Kafka servers to connect to.", "")
	o.commandConfig = p.String("command-config", "command config property file", "Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs.", "")
	o.alter = p.Flag("alter", "Alter the configuration for the entity.")
	o.describe = p.Flag("describe", "List configs for the given entity.")
	o.all = p.Flag("all", "List all configs for the given entity, including static configs if available.")
	entityType := p.List("entity-type", "", "Type of entity (topics/clients/users/brokers/ips)")
	p.List("entity-name", "", "Name of entity (topic name/client id/user principal name/broker id/ip)")
	p.Flag("entity-default", "Default entity name for clients/users/brokers/ips (applies to corresponding entity type)")
	o.addConfig = p.String("add-config", "", "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. The following is a list of valid configurations: "+
		"For entity-type 'users': "+strings.Join(userConfigNames(), " ")+" "+
		"For entity-type 'clients': "+strings.Join(quotaConfigNames, " ")+" "+
		"For entity-type 'ips': "+strings.Join(ipConfigNames, " ")+" "+
		"Entity types 'users' and 'clients' may be specified together to update config for clients of a specific user.", "")
	o.addConfigFile = p.String("add-config-file", "", "Path to a properties file with configs to add. See add-config for a list of valid configurations.", "")
	o.deleteConfig = p.List("delete-config", "", "config keys to remove 'k1,k2'")
	p.Ignored("force", "", "Suppress console prompts")
	flagValues := map[string]*string{}
	flagValues["topic"] = p.String("topic", "", "The topic's name.", "")
	flagValues["client"] = p.String("client", "", "The client's ID.", "")
	p.Flag("client-defaults", "The config defaults for all clients.")
	flagValues["user"] = p.String("user", "", "The user's principal name.", "")
	p.Flag("user-defaults", "The config defaults for all users.")
	flagValues["broker"] = p.String("broker", "", "The broker's ID.", "")
	p.Flag("broker-defaults", "The config defaults for all brokers.")
	flagValues["ip"] = p.String("ip", "", "The IP address.", "")
	p.Flag("ip-defaults", "The config defaults for all IPs.")
	if err := p.Parse(args); err != nil {
		return nil, err
	}

	// Kafka's entityTypes and entityNames: --entity-type values, then the
	// shorthand flags in a fixed order; --entity-name and --entity-default
	// in command-line order, then the shorthand values, then "" for each
	// defaults flag.
	o.types = append(o.types, *entityType...)
	for _, f := range entityFlags {
		if p.Has(f.flag) {
			o.types = append(o.types, f.typ)
		}
	}
	for _, f := range entityDefaultFlags {
		if p.Has(f.flag) {
			o.types = append(o.types, f.typ)
		}
	}
	for _, oc := range p.Occurrences("entity-name", "entity-default") {
		o.names = append(o.names, oc.Value)
	}
	for _, f := range entityFlags {
		if p.Has(f.flag) {
			o.names = append(o.names, *flagValues[f.flag])
		}
	}
	for _, f := range entityDefaultFlags {
		if p.Has(f.flag) {
			o.names = append(o.names, "")
		}
	}
	return o, nil
}

// check is Kafka's ConfigCommandOptions.checkArgs for the entity types
// this tool handles, in its order and wording.
func (o *options) check(ctx context.Context) error {
	p := o.p
	if len(p.Args()) > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return err
	}
	if *o.describe == *o.alter {
		return errors.New("Command must include exactly one action: --describe, --alter")
	}
	if err := p.CheckInvalid("describe", "alter", "add-config", "add-config-file", "delete-config"); err != nil {
		return err
	}
	var dups []string
	for i, t := range o.types {
		if slices.Contains(o.types[:i], t) && !slices.Contains(dups, t) {
			dups = append(dups, t)
		}
	}
	if len(dups) > 0 {
		return fmt.Errorf("Duplicate entity type(s) specified: %s", strings.Join(dups, ","))
	}
	for _, t := range o.types {
		if !slices.Contains(entityTypes, t) {
			return fmt.Errorf("Invalid entity type %s, the entity type must be one of %s with a --bootstrap-server argument", t, strings.Join(entityTypes, ", "))
		}
	}
	switch {
	case len(o.types) == 0:
		return errors.New("At least one entity type must be specified")
	case len(o.types) > 1 && !(len(o.types) == 2 && slices.Contains(o.types, Users) && slices.Contains(o.types, Clients)):
		return errors.New("Only 'users' and 'clients' entity types may be specified together")
	}
	usesFlags := false
	for _, f := range append(slices.Clone(entityFlags), entityDefaultFlags...) {
		usesFlags = usesFlags || p.Has(f.flag)
	}
	if usesFlags && (p.Has("entity-name") || p.Has("entity-type") || p.Has("entity-default")) {
		return errors.New("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
	}
	hasName := slices.ContainsFunc(o.names, func(n string) bool { return n != "" })
	hasDefault := slices.Contains(o.names, "")
	if hasName && slices.Contains(o.types, Brokers) {
		for _, n := range o.names {
			if _, err := strconv.ParseInt(n, 10, 32); n != "" && err != nil {
				return fmt.Errorf("The entity name for %s must be a valid integer broker id, but it is: %s", o.types[0], n)
			}
		}
	}
	if hasName && slices.Contains(o.types, IPs) {
		for _, n := range o.names {
			if n != "" && !validIPEntity(ctx, n) {
				return fmt.Errorf("The entity name for %s must be a valid IP or resolvable host, but it is: %s", o.types[0], n)
			}
		}
	}
	quotaOrBroker := slices.ContainsFunc(o.types, func(t string) bool { return t != Topics })
	if *o.describe && !quotaOrBroker && p.Has("entity-default") {
		return fmt.Errorf("--entity-default must not be specified with --describe of %s", strings.Join(o.types, ","))
	}
	if *o.alter {
		if quotaOrBroker {
			if !hasName && !hasDefault {
				return errors.New("An entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
			}
		} else if !hasName {
			return fmt.Errorf("An entity name must be specified with --alter of %s", strings.Join(o.types, ","))
		}
		if p.Has("add-config") && p.Has("add-config-file") {
			return errors.New("Only one of --add-config or --add-config-file must be specified")
		}
		if !p.Has("add-config") && !p.Has("add-config-file") && !p.Has("delete-config") {
			return errors.New("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")
		}
		if len(o.types) != len(o.names) {
			return errors.New("An entity name must be specified for every entity type")
		}
	}
	return nil
}

// validIPEntity is Kafka's InetAddress.getByName check: an IP address, or
// a host name that resolves.
func validIPEntity(ctx context.Context, s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, s)
	return err == nil && len(addrs) > 0
}

// adds returns the configs of --add-config-file and --add-config (which
// wins where both name a key).
func (o *options) adds() (map[string]string, error) {
	out := map[string]string{}
	if o.p.Has("add-config-file") {
		props, err := cli.LoadProps(*o.addConfigFile)
		if err != nil {
			return nil, err
		}
		for k, v := range props {
			if !configKey.MatchString(k) {
				return nil, fmt.Errorf("invalid character found for config key: %s", k)
			}
			out[k] = v
		}
	}
	if o.p.Has("add-config") {
		m, err := ParseAddConfig(*o.addConfig)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			out[k] = v
		}
	}
	return out, nil
}

// deletes returns the keys of every --delete-config, split at commas.
func (o *options) deletes() []string {
	var out []string
	for _, d := range *o.deleteConfig {
		for _, k := range strings.Split(d, ",") {
			out = append(out, strings.TrimSpace(k))
		}
	}
	return out
}

// Run is `silkworm configs` with Kafka's kafka-configs.sh options, for the
// topics, brokers, users, clients and ips entity types.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout)
	if err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := o.check(ctx); err != nil {
		return err
	}
	var adds map[string]string
	var dels []string
	if *o.alter {
		if adds, err = o.adds(); err != nil {
			return err
		}
		dels = o.deletes()
	}
	cl, adm, err := cli.NewAdmin(ctx, *o.commandConfig, *o.bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	typ := o.types[0]
	switch typ {
	case Topics, Brokers:
		name, hasName := "", len(o.names) > 0
		if hasName {
			name = o.names[0]
		}
		if *o.alter {
			err = alterConfigs(ctx, adm, typ, name, adds, dels)
		} else {
			return describeConfigs(ctx, adm, typ, name, hasName, *o.all, stdout)
		}
	case IPs:
		if *o.alter {
			err = alterIPQuotas(ctx, adm, o.types, o.names, adds, dels)
		} else {
			return describeQuotas(ctx, adm, o.types, o.names, stdout)
		}
	default: // users, clients
		if *o.alter {
			err = alterUsersOrClients(ctx, adm, o.types, o.names, adds, dels)
		} else {
			return describeUsersOrClients(ctx, adm, o.types, o.names, stdout)
		}
	}
	if err != nil {
		return err
	}
	if name := o.names[0]; name != "" {
		fmt.Fprintf(stdout, "Completed updating config for %s %s.\n", strings.TrimSuffix(typ, "s"), name)
	} else {
		fmt.Fprintf(stdout, "Completed updating default config for %s in the cluster.\n", typ)
	}
	return nil
}

// dynamicSource is the config source --describe shows without --all.
func dynamicSource(typ, name string) kmsg.ConfigSource {
	switch {
	case typ == Topics:
		return kmsg.ConfigSourceDynamicTopicConfig
	case name == "":
		return kmsg.ConfigSourceDynamicDefaultBrokerConfig
	}
	return kmsg.ConfigSourceDynamicBrokerConfig
}

// resourceConfigs is Kafka's getResourceConfig: the configs of one topic or
// broker ("" for the brokers' default), all of them or only those of the
// entity's dynamic source, sorted by name.
func resourceConfigs(ctx context.Context, adm *kadm.Client, typ, name string, all bool) ([]kadm.Config, error) {
	var rcs kadm.ResourceConfigs
	var err error
	switch {
	case typ == Topics:
		rcs, err = adm.DescribeTopicConfigs(ctx, name)
	case name == "":
		rcs, err = adm.DescribeBrokerConfigs(ctx)
	default:
		id, _ := strconv.ParseInt(name, 10, 32)
		rcs, err = adm.DescribeBrokerConfigs(ctx, int32(id))
	}
	if err != nil {
		return nil, fmt.Errorf("describe configs of %s %s: %w", strings.TrimSuffix(typ, "s"), name, err)
	}
	if len(rcs) != 1 {
		return nil, fmt.Errorf("describe configs of %s %s: got %d resources", strings.TrimSuffix(typ, "s"), name, len(rcs))
	}
	if rcs[0].Err != nil {
		return nil, fmt.Errorf("describe configs of %s %s: %w", strings.TrimSuffix(typ, "s"), name, rcs[0].Err)
	}
	want := dynamicSource(typ, name)
	var out []kadm.Config
	for _, c := range rcs[0].Configs {
		if all || c.Source == want {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// alterConfigs is Kafka's alterResourceConfig: IncrementalAlterConfigs of
// one topic or broker, after checking that every key to delete is set.
func alterConfigs(ctx context.Context, adm *kadm.Client, typ, name string, adds map[string]string, dels []string) error {
	current, err := resourceConfigs(ctx, adm, typ, name, false)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range dels {
		if !slices.ContainsFunc(current, func(c kadm.Config) bool { return c.Key == k }) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	var ops []kadm.AlterConfig
	for _, k := range dels {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	keys := make([]string, 0, len(adds))
	for k := range adds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(adds[k])})
	}
	var resps kadm.AlterConfigsResponses
	switch {
	case typ == Topics:
		resps, err = adm.AlterTopicConfigs(ctx, ops, name)
	case name == "":
		resps, err = adm.AlterBrokerConfigs(ctx, ops)
	default:
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
	return nil
}

// describeConfigs is Kafka's describeResourceConfig. Without a name it
// describes every topic, or every broker and then the brokers' default;
// a named topic or broker that does not exist gets Kafka's one line.
func describeConfigs(ctx context.Context, adm *kadm.Client, typ, name string, hasName, all bool, w io.Writer) error {
	var names []string
	switch {
	case hasName:
		names = []string{name}
	case typ == Topics:
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
	if hasName && name != "" && !all {
		exists, err := entityExists(ctx, adm, typ, name)
		if err != nil {
			return err
		}
		if !exists {
			fmt.Fprintf(w, "The %s '%s' doesn't exist and doesn't have dynamic config.\n", strings.TrimSuffix(typ, "s"), name)
			return nil
		}
	}
	for _, n := range names {
		cs, err := resourceConfigs(ctx, adm, typ, n, all)
		if err != nil {
			return err
		}
		entries := make([]Entry, 0, len(cs))
		for _, c := range cs {
			e := Entry{Name: c.Key, Value: c.Value, Sensitive: c.Sensitive}
			for _, s := range c.Synonyms {
				e.Synonyms = append(e.Synonyms, Synonym{Source: sourceName(s.Source), Name: s.Key, Value: s.Value})
			}
			entries = append(entries, e)
		}
		WriteDescription(w, typ, n, all, entries)
	}
	return nil
}

// entityExists reports whether the named topic or broker is in the cluster.
func entityExists(ctx context.Context, adm *kadm.Client, typ, name string) (bool, error) {
	if typ == Topics {
		td, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return false, fmt.Errorf("list topics: %w", err)
		}
		return td.Has(name), nil
	}
	bs, err := adm.ListBrokers(ctx)
	if err != nil {
		return false, fmt.Errorf("describe cluster: %w", err)
	}
	return slices.ContainsFunc(bs, func(b kadm.BrokerDetail) bool { return strconv.Itoa(int(b.NodeID)) == name }), nil
}
