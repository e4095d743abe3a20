package embed

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is what NewCluster starts. Get one from DefaultConfig, change it
// with Options (or directly), and pass it to Start; Validate reports a
// config that cannot run. A Config is a plain value: Start copies what it
// keeps.
type Config struct {
	// Brokers is the number of brokers, node ids 1..Brokers.
	Brokers int
	// Dir is the directory under which node n keeps its data, in
	// <Dir>/node-<n>. "" makes a temporary directory that Close removes.
	Dir string
	// BrokerConfigs are server.properties settings for every broker, by
	// Kafka's key names ("min.insync.replicas": "2"). They win over the
	// embedding defaults and lose to NodeConfigs.
	BrokerConfigs map[string]string
	// NodeConfigs are settings for one node, by node id.
	NodeConfigs map[int32]map[string]string
	// Topics are created (through the Kafka protocol) before NewCluster
	// returns, and waited for until every replica is in sync.
	Topics []Topic
	// ListenHost is the address every listener binds: "127.0.0.1" by
	// default, "0.0.0.0" to accept connections from other machines or
	// containers.
	ListenHost string
	// AdvertisedHost, when set, is the host brokers give clients (and each
	// other) in metadata instead of the listen address; it must reach this
	// machine.
	AdvertisedHost string
	// Ports are the client ports of nodes 1, 2, ...; 0 or a missing entry
	// lets the kernel choose. A restarted node keeps its port.
	Ports []int
	// Logger receives every broker's log, with a "node" attribute. nil
	// discards it.
	Logger *slog.Logger
	// StartTimeout bounds how long NewCluster waits for the seed topics to
	// be created and in sync. (A node of a cluster waits for a quorum of
	// controllers on its own: up to 2 minutes.)
	StartTimeout time.Duration
	// ClientOpts are added to the clients the cluster itself opens (to
	// create seed topics, for WaitISR): the security settings when the
	// listener is not PLAINTEXT.
	ClientOpts []kgo.Opt
}

// Topic is a topic to create when the cluster starts.
type Topic struct {
	Name string
	// Partitions defaults to 1.
	Partitions int32
	// ReplicationFactor defaults to the number of brokers, at most 3.
	ReplicationFactor int16
	// Configs are topic settings by Kafka's names ("cleanup.policy").
	Configs map[string]string
}

// embeddingDefaults are the broker settings an embedded cluster uses where
// Kafka's defaults would make tests slow: a fenced broker is noticed in
// seconds, a lagging follower leaves the ISR in seconds, a new consumer
// group does not wait 3 s for more members, followers long-poll briefly.
var embeddingDefaults = map[string]string{
	"group.initial.rebalance.delay.ms": "0",
	"broker.session.timeout.ms":        "3000",
	"broker.heartbeat.interval.ms":     "500",
	"replica.lag.time.max.ms":          "2000",
	"replica.fetch.wait.max.ms":        "100",
	"offsets.topic.num.partitions":     "3",
}

// DefaultConfig is one broker on 127.0.0.1 with its data in a temporary
// directory, the embedding defaults (group.initial.rebalance.delay.ms=0,
// broker.session.timeout.ms=3000, broker.heartbeat.interval.ms=500,
// replica.lag.time.max.ms=2000, replica.fetch.wait.max.ms=100,
// offsets.topic.num.partitions=3) and a 30 s start timeout.
func DefaultConfig() Config {
	return Config{
		Brokers:       1,
		BrokerConfigs: maps.Clone(embeddingDefaults),
		ListenHost:    "127.0.0.1",
		StartTimeout:  30 * time.Second,
	}
}

// reservedKeys are set by the cluster itself for every node; a broker or
// node config naming one would break the wiring (ports, voters, data dirs).
var reservedKeys = []string{
	"node.id", "broker.id", "process.roles", "listeners", "controller.quorum.voters",
	"controller.listener.names", "log.dirs", "log.dir",
}

// Validate reports every problem of c at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Brokers < 1 {
		errs = append(errs, fmt.Errorf("embed: %d brokers: at least 1", c.Brokers))
	}
	for _, m := range append([]map[string]string{c.BrokerConfigs}, slices.Collect(maps.Values(c.NodeConfigs))...) {
		for k := range m {
			if slices.Contains(reservedKeys, k) {
				errs = append(errs, fmt.Errorf("embed: %s is set by the cluster (node ids, ports, voters, data dirs); use Brokers, Ports, Dir", k))
			}
		}
	}
	for n := range c.NodeConfigs {
		if n < 1 || int(n) > c.Brokers {
			errs = append(errs, fmt.Errorf("embed: node config for node %d: nodes are 1..%d", n, c.Brokers))
		}
	}
	if len(c.Ports) > c.Brokers {
		errs = append(errs, fmt.Errorf("embed: %d ports for %d brokers", len(c.Ports), c.Brokers))
	}
	for i, p := range c.Ports {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("embed: port %d of node %d", p, i+1))
		}
	}
	if c.ListenHost == "" || (net.ParseIP(c.ListenHost) == nil && c.ListenHost != "localhost") {
		errs = append(errs, fmt.Errorf("embed: listen host %q: an IP address or localhost", c.ListenHost))
	}
	if strings.ContainsAny(c.AdvertisedHost, ":/,") && net.ParseIP(c.AdvertisedHost) == nil {
		errs = append(errs, fmt.Errorf("embed: advertised host %q: a host name or IP address", c.AdvertisedHost))
	}
	if c.StartTimeout <= 0 {
		errs = append(errs, errors.New("embed: StartTimeout must be > 0"))
	}
	seen := map[string]bool{}
	for _, t := range c.Topics {
		switch {
		case t.Name == "":
			errs = append(errs, errors.New("embed: seed topic without a name"))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("embed: seed topic %s twice", t.Name))
		case t.Partitions < 0:
			errs = append(errs, fmt.Errorf("embed: seed topic %s: %d partitions", t.Name, t.Partitions))
		case t.ReplicationFactor < 0 || int(t.ReplicationFactor) > c.Brokers:
			errs = append(errs, fmt.Errorf("embed: seed topic %s: replication factor %d with %d brokers", t.Name, t.ReplicationFactor, c.Brokers))
		}
		seen[t.Name] = true
	}
	return errors.Join(errs...)
}

// Option changes a Config; NewCluster applies options to DefaultConfig in
// order.
type Option func(*Config)

// Brokers sets the number of brokers (node ids 1..n).
func Brokers(n int) Option { return func(c *Config) { c.Brokers = n } }

// Dir keeps node n's data in dir/node-<n>, left in place by Close, so a
// new cluster on the same dir starts from it.
func Dir(dir string) Option { return func(c *Config) { c.Dir = dir } }

// BrokerConfig sets a server.properties key on every broker
// ("min.insync.replicas", "2").
func BrokerConfig(key, value string) Option {
	return func(c *Config) {
		if c.BrokerConfigs == nil {
			c.BrokerConfigs = map[string]string{}
		}
		c.BrokerConfigs[key] = value
	}
}

// NodeConfig sets a server.properties key on one node ("broker.rack").
func NodeConfig(node int32, key, value string) Option {
	return func(c *Config) {
		if c.NodeConfigs == nil {
			c.NodeConfigs = map[int32]map[string]string{}
		}
		if c.NodeConfigs[node] == nil {
			c.NodeConfigs[node] = map[string]string{}
		}
		c.NodeConfigs[node][key] = value
	}
}

// SeedTopics creates topics of the given number of partitions, replicated
// on every broker (at most 3), with the broker's topic defaults.
func SeedTopics(partitions int32, topics ...string) Option {
	return func(c *Config) {
		for _, t := range topics {
			c.Topics = append(c.Topics, Topic{Name: t, Partitions: partitions})
		}
	}
}

// SeedTopic creates one topic with its own settings.
func SeedTopic(t Topic) Option { return func(c *Config) { c.Topics = append(c.Topics, t) } }

// ListenHost sets the address every listener binds.
func ListenHost(host string) Option { return func(c *Config) { c.ListenHost = host } }

// AdvertisedHost sets the host brokers advertise to clients and to each
// other (for clients in containers, "host.docker.internal").
func AdvertisedHost(host string) Option { return func(c *Config) { c.AdvertisedHost = host } }

// Ports fixes the client ports of nodes 1, 2, ... (0: the kernel chooses).
func Ports(ports ...int) Option { return func(c *Config) { c.Ports = ports } }

// Logger sends the brokers' logs to l.
func Logger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }

// StartTimeout bounds the seed topics' creation.
func StartTimeout(d time.Duration) Option { return func(c *Config) { c.StartTimeout = d } }

// ClientOpts are options for the clients the cluster opens itself (seed
// topics, WaitISR), such as kgo.SASL and kgo.DialTLSConfig for a secured
// listener (BrokerConfig("listener.security.protocol.map",
// "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT") keeps the listener's
// name and changes its protocol).
func ClientOpts(opts ...kgo.Opt) Option {
	return func(c *Config) { c.ClientOpts = append(c.ClientOpts, opts...) }
}
