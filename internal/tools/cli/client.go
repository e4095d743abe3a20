package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Role says which kind of Kafka client a property set configures; each
// accepts the common properties plus its own.
type Role int

const (
	// Admin is a client for metadata and admin requests (kadm).
	Admin Role = iota
	// Producer is a client that produces records.
	Producer
	// Consumer is a client that consumes records, alone or in a group.
	Consumer
)

func (r Role) String() string {
	switch r {
	case Producer:
		return "producer"
	case Consumer:
		return "consumer"
	default:
		return "admin"
	}
}

// ConnectTimeout bounds how long NewClient waits for a bootstrap server to
// answer before it reports the cluster unreachable.
const ConnectTimeout = 15 * time.Second

// NewClient maps props (which must include bootstrap.servers) to kgo options
// for role, appends extra (later options win), builds the client and checks
// that a bootstrap server answers within ConnectTimeout or ctx, whichever
// ends first. The error for an unreachable cluster, or one that refuses the
// client (a failed SASL login), names the servers.
func NewClient(ctx context.Context, role Role, props Props, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := ClientOpts(role, props)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("create %s client: %w", role, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := cl.Ping(pingCtx); err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no bootstrap server (%s) answered within %v", props["bootstrap.servers"], ConnectTimeout)
		}
		if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
			// The broker answered: a failed SASL login, usually.
			return nil, fmt.Errorf("bootstrap server(s) %s refused the %s client: %w", props["bootstrap.servers"], role, err)
		}
		return nil, fmt.Errorf("cannot reach bootstrap server(s) %s: %w", props["bootstrap.servers"], err)
	}
	return cl, nil
}

type roleSet uint8

const (
	forAdmin roleSet = 1 << iota
	forProducer
	forConsumer
	forAll = forAdmin | forProducer | forConsumer
)

func (s roleSet) has(r Role) bool {
	switch r {
	case Producer:
		return s&forProducer != 0
	case Consumer:
		return s&forConsumer != 0
	default:
		return s&forAdmin != 0
	}
}

// clientConfig collects what the properties ask for while they are read;
// settings that depend on each other (acks, idempotence, in-flight
// requests, batch and request sizes, partitioner) are resolved at the end.
type clientConfig struct {
	role Role
	opts []kgo.Opt

	acks           *kgo.Acks
	acksAll        bool
	idempotence    *bool
	maxInFlight    int
	batchSize      int32
	maxRequestSize int32
	compression    string
	compressLevel  map[string]int
	partitioner    string
	ignoreKeys     *bool
	adaptive       *bool
	transactional  bool

	group             bool
	disableAutoCommit bool
}

type propSpec struct {
	roles roleSet
	// apply reads the value; nil means accepted and ignored.
	apply func(c *clientConfig, v string) error
}

func opt(o kgo.Opt) []kgo.Opt { return []kgo.Opt{o} }

func msValue(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("not a non-negative number of type LONG")
	}
	return time.Duration(n) * time.Millisecond, nil
}

func intValue(v string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, errors.New("not a number of type INT")
	}
	return int(n), nil
}

func boolValue(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("expected value to be either true or false")
}

func durationProp(f func(time.Duration) kgo.Opt) func(*clientConfig, string) error {
	return func(c *clientConfig, v string) error {
		d, err := msValue(v)
		if err != nil {
			return err
		}
		c.opts = append(c.opts, f(d))
		return nil
	}
}

func intProp(f func(int) kgo.Opt) func(*clientConfig, string) error {
	return func(c *clientConfig, v string) error {
		n, err := intValue(v)
		if err != nil {
			return err
		}
		if n < 0 {
			return errors.New("value must be at least 0")
		}
		c.opts = append(c.opts, f(n))
		return nil
	}
}

func int32Prop(f func(int32) kgo.Opt) func(*clientConfig, string) error {
	return intProp(func(n int) kgo.Opt { return f(int32(n)) })
}

// balancers maps partition.assignment.strategy entries (Java class names or
// the short names) to kgo group balancers.
var balancers = map[string]func() kgo.GroupBalancer{
	"org.apache.kafka.clients.consumer.RangeAssignor":             kgo.RangeBalancer,
	"org.apache.kafka.clients.consumer.RoundRobinAssignor":        kgo.RoundRobinBalancer,
	"org.apache.kafka.clients.consumer.StickyAssignor":            kgo.StickyBalancer,
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": kgo.CooperativeStickyBalancer,
	"range":              kgo.RangeBalancer,
	"roundrobin":         kgo.RoundRobinBalancer,
	"sticky":             kgo.StickyBalancer,
	"cooperative-sticky": kgo.CooperativeStickyBalancer,
}

// partitioners are the partitioner.class values understood.
var partitioners = map[string]bool{
	"org.apache.kafka.clients.producer.internals.DefaultPartitioner": true,
	"org.apache.kafka.clients.producer.RoundRobinPartitioner":        true,
	"org.apache.kafka.clients.producer.UniformStickyPartitioner":     true,
}

var props map[string]propSpec

func init() {
	ignore := func(roles roleSet) propSpec { return propSpec{roles: roles} }
	props = map[string]propSpec{
		// Common.
		"bootstrap.servers": {forAll, func(c *clientConfig, v string) error {
			var seeds []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					seeds = append(seeds, s)
				}
			}
			if len(seeds) == 0 {
				return errors.New("no server given")
			}
			c.opts = append(c.opts, kgo.SeedBrokers(seeds...))
			return nil
		}},
		"client.id": {forAll, func(c *clientConfig, v string) error {
			c.opts = append(c.opts, kgo.ClientID(v))
			return nil
		}},
		"security.protocol": {forAll, func(c *clientConfig, v string) error {
			switch strings.ToUpper(strings.TrimSpace(v)) {
			case Plaintext, SSL, SASLPlaintext, SASLSSL:
				return nil // read with the ssl.* and sasl.* properties by securityOpts
			}
			return errors.New("expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
		}},
		"metadata.max.age.ms":     {forAll, durationProp(func(d time.Duration) kgo.Opt { return kgo.MetadataMaxAge(d) })},
		"connections.max.idle.ms": {forAll, durationProp(func(d time.Duration) kgo.Opt { return kgo.ConnIdleTimeout(d) })},
		"socket.connection.setup.timeout.ms": {forAll, durationProp(func(d time.Duration) kgo.Opt {
			return kgo.DialTimeout(d)
		})},
		"retry.backoff.ms": {forAll, durationProp(func(d time.Duration) kgo.Opt {
			return kgo.RetryBackoffFn(func(int) time.Duration { return d })
		})},
		"request.timeout.ms": {forAll, func(c *clientConfig, v string) error {
			d, err := msValue(v)
			if err != nil {
				return err
			}
			if c.role == Producer {
				// The Java producer sends request.timeout.ms as the
				// produce request's own timeout.
				c.opts = append(c.opts, kgo.ProduceRequestTimeout(d))
			}
			c.opts = append(c.opts, kgo.RequestTimeoutOverhead(d))
			return nil
		}},
		"default.api.timeout.ms": {forAdmin | forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.RetryTimeout(d) })},
		"retries": {forAll, func(c *clientConfig, v string) error {
			n, err := intValue(v)
			if err != nil {
				return err
			}
			if n < 0 {
				return errors.New("value must be at least 0")
			}
			c.opts = append(c.opts, kgo.RequestRetries(n))
			if c.role == Producer {
				c.opts = append(c.opts, kgo.RecordRetries(n))
			}
			return nil
		}},
		"enable.metrics.push": {forProducer | forConsumer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			if err != nil {
				return err
			}
			if !b {
				c.opts = append(c.opts, kgo.DisableClientMetrics())
			}
			return nil
		}},
		"retry.backoff.max.ms":                     ignore(forAll),
		"reconnect.backoff.ms":                     ignore(forAll),
		"reconnect.backoff.max.ms":                 ignore(forAll),
		"socket.connection.setup.timeout.max.ms":   ignore(forAll),
		"send.buffer.bytes":                        ignore(forAll),
		"receive.buffer.bytes":                     ignore(forAll),
		"client.dns.lookup":                        ignore(forAll),
		"metadata.recovery.strategy":               ignore(forAll),
		"metadata.recovery.rebootstrap.trigger.ms": ignore(forAll),
		"metrics.sample.window.ms":                 ignore(forAll),
		"metrics.num.samples":                      ignore(forAll),
		"metrics.recording.level":                  ignore(forAll),
		"metric.reporters":                         ignore(forAll),
		"auto.include.jmx.reporter":                ignore(forAll),

		// Producer.
		"acks": {forProducer, func(c *clientConfig, v string) error {
			var a kgo.Acks
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "0":
				a = kgo.NoAck()
			case "1":
				a = kgo.LeaderAck()
			case "-1", "all":
				a = kgo.AllISRAcks()
				c.acksAll = true
			default:
				return errors.New("expected one of all, -1, 0, 1")
			}
			c.acks = &a
			return nil
		}},
		"enable.idempotence": {forProducer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			c.idempotence = &b
			return err
		}},
		"max.in.flight.requests.per.connection": {forProducer, func(c *clientConfig, v string) error {
			n, err := intValue(v)
			if err != nil {
				return err
			}
			if n < 1 {
				return errors.New("value must be at least 1")
			}
			c.maxInFlight = n
			return nil
		}},
		"linger.ms":           {forProducer, durationProp(func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) })},
		"delivery.timeout.ms": {forProducer, durationProp(func(d time.Duration) kgo.Opt { return kgo.RecordDeliveryTimeout(d) })},
		"batch.size": {forProducer, func(c *clientConfig, v string) error {
			n, err := intValue(v)
			if err != nil {
				return err
			}
			if n < 0 {
				return errors.New("value must be at least 0")
			}
			c.batchSize = int32(n)
			return nil
		}},
		"max.request.size": {forProducer, func(c *clientConfig, v string) error {
			n, err := intValue(v)
			if err != nil {
				return err
			}
			if n < 1 {
				return errors.New("value must be at least 1")
			}
			c.maxRequestSize = int32(n)
			return nil
		}},
		"buffer.memory": {forProducer, func(c *clientConfig, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return errors.New("not a non-negative number of type LONG")
			}
			// Java bounds the buffer by bytes only; lift kgo's record
			// count bound so that the byte bound is the one that binds.
			c.opts = append(c.opts, kgo.MaxBufferedBytes(int(n)), kgo.MaxBufferedRecords(1<<30))
			return nil
		}},
		"compression.type": {forProducer, func(c *clientConfig, v string) error {
			v = strings.ToLower(strings.TrimSpace(v))
			switch v {
			case "none", "gzip", "snappy", "lz4", "zstd":
				c.compression = v
				return nil
			}
			return errors.New("expected one of none, gzip, snappy, lz4, zstd")
		}},
		"compression.gzip.level": {forProducer, compressionLevel("gzip")},
		"compression.lz4.level":  {forProducer, compressionLevel("lz4")},
		"compression.zstd.level": {forProducer, compressionLevel("zstd")},
		"transactional.id": {forProducer, func(c *clientConfig, v string) error {
			if v == "" {
				return errors.New("must not be empty")
			}
			c.transactional = true
			c.opts = append(c.opts, kgo.TransactionalID(v))
			return nil
		}},
		"transaction.timeout.ms": {forProducer, durationProp(func(d time.Duration) kgo.Opt { return kgo.TransactionTimeout(d) })},
		"partitioner.class": {forProducer, func(c *clientConfig, v string) error {
			v = strings.TrimSpace(v)
			if !partitioners[v] {
				return errors.New("unknown partitioner; known: org.apache.kafka.clients.producer.internals.DefaultPartitioner, " +
					"org.apache.kafka.clients.producer.RoundRobinPartitioner, org.apache.kafka.clients.producer.UniformStickyPartitioner")
			}
			c.partitioner = v
			return nil
		}},
		"partitioner.ignore.keys": {forProducer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			c.ignoreKeys = &b
			return err
		}},
		"partitioner.adaptive.partitioning.enable": {forProducer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			c.adaptive = &b
			return err
		}},
		"partitioner.availability.timeout.ms": ignore(forProducer),
		"max.block.ms":                        ignore(forProducer),
		"key.serializer":                      ignore(forProducer),
		"value.serializer":                    ignore(forProducer),

		// Consumer.
		"group.id": {forConsumer, func(c *clientConfig, v string) error {
			if v == "" {
				return nil // Java: no group
			}
			c.group = true
			c.opts = append(c.opts, kgo.ConsumerGroup(v))
			return nil
		}},
		"group.instance.id": {forConsumer, func(c *clientConfig, v string) error {
			c.opts = append(c.opts, kgo.InstanceID(v))
			return nil
		}},
		"group.protocol": {forConsumer, func(c *clientConfig, v string) error {
			if strings.ToLower(strings.TrimSpace(v)) != "classic" {
				return errors.New("only the classic group protocol is supported")
			}
			return nil
		}},
		"auto.offset.reset": {forConsumer, func(c *clientConfig, v string) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "earliest":
				c.opts = append(c.opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			case "latest":
				c.opts = append(c.opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			case "none":
				c.opts = append(c.opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
			default:
				return errors.New("expected one of earliest, latest, none")
			}
			return nil
		}},
		"fetch.min.bytes":           {forConsumer, int32Prop(func(n int32) kgo.Opt { return kgo.FetchMinBytes(n) })},
		"fetch.max.bytes":           {forConsumer, int32Prop(func(n int32) kgo.Opt { return kgo.FetchMaxBytes(n) })},
		"max.partition.fetch.bytes": {forConsumer, int32Prop(func(n int32) kgo.Opt { return kgo.FetchMaxPartitionBytes(n) })},
		"fetch.max.wait.ms":         {forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.FetchMaxWait(d) })},
		"isolation.level": {forConsumer, func(c *clientConfig, v string) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "read_uncommitted":
				c.opts = append(c.opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
			case "read_committed":
				c.opts = append(c.opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			default:
				return errors.New("expected one of read_uncommitted, read_committed")
			}
			return nil
		}},
		"enable.auto.commit": {forConsumer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			if err != nil {
				return err
			}
			// Without a group there is nothing to commit; kgo rejects the
			// option then, Java ignores it.
			c.disableAutoCommit = !b
			return nil
		}},
		"auto.commit.interval.ms": {forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.AutoCommitInterval(d) })},
		"session.timeout.ms":      {forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.SessionTimeout(d) })},
		"heartbeat.interval.ms":   {forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.HeartbeatInterval(d) })},
		"max.poll.interval.ms":    {forConsumer, durationProp(func(d time.Duration) kgo.Opt { return kgo.RebalanceTimeout(d) })},
		"partition.assignment.strategy": {forConsumer, func(c *clientConfig, v string) error {
			var bs []kgo.GroupBalancer
			for _, name := range strings.Split(v, ",") {
				name = strings.TrimSpace(name)
				if name == "" {
					continue
				}
				f, ok := balancers[name]
				if !ok {
					return fmt.Errorf("unknown assignor %q; known: range, roundrobin, sticky, cooperative-sticky and their Java class names", name)
				}
				bs = append(bs, f())
			}
			if len(bs) == 0 {
				return errors.New("no assignor given")
			}
			c.opts = append(c.opts, kgo.Balancers(bs...))
			return nil
		}},
		"client.rack": {forConsumer, func(c *clientConfig, v string) error {
			c.opts = append(c.opts, kgo.Rack(v))
			return nil
		}},
		"check.crcs": {forConsumer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			if err != nil {
				return err
			}
			if !b {
				c.opts = append(c.opts, kgo.DisableFetchCRCValidation())
			}
			return nil
		}},
		"allow.auto.create.topics": {forConsumer, func(c *clientConfig, v string) error {
			b, err := boolValue(v)
			if err != nil {
				return err
			}
			if b {
				c.opts = append(c.opts, kgo.AllowAutoTopicCreation())
			}
			return nil
		}},
		"max.poll.records":              ignore(forConsumer),
		"exclude.internal.topics":       ignore(forConsumer),
		"internal.leave.group.on.close": ignore(forConsumer),
		"key.deserializer":              ignore(forConsumer),
		"value.deserializer":            ignore(forConsumer),
		"interceptor.classes":           ignore(forProducer | forConsumer),
	}
}

func compressionLevel(codec string) func(*clientConfig, string) error {
	return func(c *clientConfig, v string) error {
		n, err := intValue(v)
		if err != nil {
			return err
		}
		if c.compressLevel == nil {
			c.compressLevel = map[string]int{}
		}
		c.compressLevel[codec] = n
		return nil
	}
}

// isSecurityProp reports whether name is an ssl.* or sasl.* property. They
// are read together, after the others, by securityOpts; the Java client
// accepts every name of these families (many only tune the JVM), and so
// do the tools.
func isSecurityProp(name string) bool {
	return strings.HasPrefix(name, "ssl.") || strings.HasPrefix(name, "sasl.")
}

// ClientOpts maps Kafka client properties to kgo options for role.
//
// Common to all roles: bootstrap.servers, client.id, metadata.max.age.ms,
// connections.max.idle.ms, socket.connection.setup.timeout.ms,
// retry.backoff.ms, request.timeout.ms, retries; default.api.timeout.ms for
// admin and consumer clients; accepted and ignored: reconnect.backoff.*,
// send/receive.buffer.bytes, client.dns.lookup, metrics.*, metric.reporters.
//
// Security, common to all roles: security.protocol PLAINTEXT (the default),
// SSL, SASL_PLAINTEXT or SASL_SSL. SSL and SASL_SSL dial with TLS
// (kgo.DialTLSConfig) set up by security.NewClientTLS from
// ssl.truststore.location/.type/.password, ssl.truststore.certificates,
// ssl.keystore.location/.type/.password, ssl.key.password,
// ssl.keystore.key/.certificate.chain (a client certificate for mTLS),
// ssl.endpoint.identification.algorithm (https, the default, checks the
// server's name; empty does not), ssl.enabled.protocols, ssl.protocol and
// ssl.cipher.suites. SASL_PLAINTEXT and SASL_SSL log in with sasl.mechanism
// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER; Kafka's default,
// GSSAPI, is refused) and the credentials of sasl.jaas.config:
// PlainLoginModule or ScramLoginModule with username and password (and
// tokenauth for delegation tokens), or OAuthBearerLoginModule with Kafka's
// unsecured-token options (see UnsecuredLogin). Other ssl.* and sasl.*
// names are accepted and ignored, as are ssl.* under PLAINTEXT and sasl.*
// under SSL, except those naming Java classes or a token endpoint
// (sasl.client.callback.handler.class, sasl.login.class,
// sasl.login.callback.handler.class other than the unsecured one,
// sasl.oauthbearer.token.endpoint.url, ssl.engine.factory.class), which are
// refused where they would apply.
//
// Producer: acks, enable.idempotence, max.in.flight.requests.per.connection,
// linger.ms, batch.size (ProducerBatchMaxBytes), max.request.size (also caps
// the batch size), buffer.memory (MaxBufferedBytes), compression.type and
// compression.*.level, delivery.timeout.ms, transactional.id,
// transaction.timeout.ms, partitioner.class (DefaultPartitioner,
// RoundRobinPartitioner, UniformStickyPartitioner), partitioner.ignore.keys,
// partitioner.adaptive.partitioning.enable, enable.metrics.push; accepted
// and ignored: key/value.serializer, max.block.ms,
// partitioner.availability.timeout.ms, interceptor.classes. As in the Java
// client, idempotence is on unless acks is not all or more than 5 requests
// may be in flight, and asking for it explicitly with those is an error.
// compression.type defaults to none, Kafka's default (kgo's is snappy).
//
// Consumer: group.id, group.instance.id, group.protocol (classic),
// auto.offset.reset, fetch.min.bytes, fetch.max.bytes,
// max.partition.fetch.bytes, fetch.max.wait.ms, isolation.level,
// enable.auto.commit, auto.commit.interval.ms, session.timeout.ms,
// heartbeat.interval.ms, max.poll.interval.ms (rebalance timeout),
// partition.assignment.strategy (range, roundrobin, sticky,
// cooperative-sticky or the Java class names, comma-separated), client.rack,
// check.crcs, allow.auto.create.topics, enable.metrics.push; accepted and
// ignored: max.poll.records, exclude.internal.topics, key/value.deserializer,
// interceptor.classes.
//
// Any other name, or a name of another role, is an error naming it, and so
// is a value that does not parse.
func ClientOpts(role Role, p Props) ([]kgo.Opt, error) {
	c := &clientConfig{role: role}
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		spec, ok := props[name]
		if !ok {
			if isSecurityProp(name) {
				continue
			}
			return nil, fmt.Errorf("unknown %s property %q", role, name)
		}
		if !spec.roles.has(role) {
			return nil, fmt.Errorf("property %q is not a %s property", name, role)
		}
		if spec.apply == nil {
			continue
		}
		if err := spec.apply(c, p[name]); err != nil {
			return nil, fmt.Errorf("invalid value %q for configuration %s: %w", p[name], name, err)
		}
	}
	if _, ok := p["bootstrap.servers"]; !ok {
		return nil, errors.New("no bootstrap server given (bootstrap.servers / --bootstrap-server)")
	}
	sec, err := securityOpts(p)
	if err != nil {
		return nil, err
	}
	c.opts = append(c.opts, sec...)
	if role == Producer {
		if err := c.resolveProducer(); err != nil {
			return nil, err
		}
	}
	if c.disableAutoCommit && c.group {
		c.opts = append(c.opts, kgo.DisableAutoCommit())
	}
	return c.opts, nil
}

func (c *clientConfig) resolveProducer() error {
	acksAll := c.acks == nil || c.acksAll
	idempotent := acksAll && c.maxInFlight <= 5
	if c.idempotence != nil {
		if *c.idempotence {
			if !acksAll {
				return errors.New("must set acks to all in order to use the idempotent producer (enable.idempotence=true)")
			}
			if c.maxInFlight > 5 {
				return errors.New("must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer")
			}
		}
		idempotent = *c.idempotence
	}
	if c.transactional && !idempotent {
		return errors.New("transactional.id requires the idempotent producer (acks=all, enable.idempotence not false)")
	}
	if c.acks != nil {
		c.opts = append(c.opts, kgo.RequiredAcks(*c.acks))
	}
	if !idempotent {
		c.opts = append(c.opts, kgo.DisableIdempotentWrite())
		n := c.maxInFlight
		if n == 0 {
			n = 5 // Java's default
		}
		c.opts = append(c.opts, kgo.MaxProduceRequestsInflightPerBroker(n))
	}

	batch := c.batchSize
	if c.maxRequestSize > 0 && (batch == 0 || c.maxRequestSize < batch) {
		batch = c.maxRequestSize
	}
	if batch > 0 {
		// kgo needs room for the batch header; Java's batch.size is a
		// soft target a lone large record may exceed anyway.
		if batch < 512 {
			batch = 512
		}
		c.opts = append(c.opts, kgo.ProducerBatchMaxBytes(batch))
	}

	codec := kgo.NoCompression()
	switch c.compression {
	case "gzip":
		codec = kgo.GzipCompression()
	case "snappy":
		codec = kgo.SnappyCompression()
	case "lz4":
		codec = kgo.Lz4Compression()
	case "zstd":
		codec = kgo.ZstdCompression()
	}
	if lvl, ok := c.compressLevel[c.compression]; ok {
		codec = codec.WithLevel(lvl)
	}
	c.opts = append(c.opts, kgo.ProducerBatchCompression(codec))

	ignoreKeys := c.ignoreKeys != nil && *c.ignoreKeys
	adaptive := c.adaptive == nil || *c.adaptive
	switch c.partitioner {
	case "org.apache.kafka.clients.producer.internals.DefaultPartitioner":
		c.opts = append(c.opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	case "org.apache.kafka.clients.producer.RoundRobinPartitioner":
		c.opts = append(c.opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case "org.apache.kafka.clients.producer.UniformStickyPartitioner":
		c.opts = append(c.opts, kgo.RecordPartitioner(kgo.StickyPartitioner()))
	default:
		if c.ignoreKeys != nil || c.adaptive != nil {
			sticky := 64 << 10
			if c.batchSize > 0 {
				sticky = int(c.batchSize)
			}
			c.opts = append(c.opts, kgo.RecordPartitioner(kgo.UniformBytesPartitioner(sticky, adaptive, !ignoreKeys, nil)))
		}
	}
	return nil
}

// NewAdmin is what every admin tool does first: load --command-config,
// point it at --bootstrap-server, and connect (see NewClient). The caller
// closes the returned client.
func NewAdmin(ctx context.Context, commandConfig, bootstrap string) (*kgo.Client, *kadm.Client, error) {
	props, err := LoadProps(commandConfig)
	if err != nil {
		return nil, nil, err
	}
	props["bootstrap.servers"] = bootstrap
	cl, err := NewClient(ctx, Admin, props)
	if err != nil {
		return nil, nil, err
	}
	return cl, kadm.NewClient(cl), nil
}
