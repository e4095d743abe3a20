package embed

import (
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

func TestConfigValidate(t *testing.T) {
	if err := func() *Config { c := DefaultConfig(); return &c }().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"no brokers", []Option{Brokers(0)}, "0 brokers"},
		{"wiring key", []Option{BrokerConfig("listeners", "PLAINTEXT://:9092")}, "listeners is set by the cluster"},
		{"node out of range", []Option{Brokers(3), NodeConfig(4, "broker.rack", "a")}, "node 4"},
		{"too many ports", []Option{Ports(1, 2)}, "2 ports for 1 brokers"},
		{"replication factor", []Option{SeedTopic(Topic{Name: "t", ReplicationFactor: 2})}, "replication factor 2"},
		{"topic twice", []Option{SeedTopics(1, "t", "t")}, "seed topic t twice"},
		{"listen host", []Option{ListenHost("example.com")}, "listen host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			for _, o := range tc.opts {
				o(&cfg)
			}
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			}
			if _, err := Start(cfg); err == nil {
				t.Fatal("Start accepted an invalid config")
			}
		})
	}
}

// A config the broker refuses (an unknown key) fails NewCluster with the
// broker's message, and leaves no goroutine and no temporary dir behind.
func TestStartFailureLeavesNothing(t *testing.T) {
	verifyNone(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := NewCluster(BrokerConfig("no.such.key", "1"))
	if err == nil || !strings.Contains(err.Error(), "no.such.key") {
		t.Fatalf("NewCluster with an unknown key: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("left %d entries in the temp dir", len(left))
	}
}

// Broker and node configs reach the brokers; the advertised host is what
// clients are told; a temporary data dir is removed by Close.
func TestConfigReachesBrokers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c, err := NewCluster(AdvertisedHost("localhost"), NodeConfig(1, "broker.rack", "rack-a"),
		SeedTopic(Topic{Name: "compacted", Partitions: 2, Configs: map[string]string{"cleanup.policy": "compact"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	cl := client(t, c)
	md, err := kadmClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Host != "localhost" || md.Brokers[0].Rack == nil || *md.Brokers[0].Rack != "rack-a" {
		t.Fatalf("brokers: %+v", md.Brokers)
	}
	rc, err := kadmClient(cl).DescribeTopicConfigs(ctx, "compacted")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On("compacted", nil); err != nil || configValue(v.Configs, "cleanup.policy") != "compact" {
		t.Fatalf("compacted topic configs: %+v, %v", v, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("Close left %d entries of its temporary dir", len(left))
	}
}

// A secured listener: the cluster's own clients (seed topics, WaitISR)
// authenticate with ClientOpts.
func TestSecuredListener(t *testing.T) {
	auth := kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())
	c := newCluster(t,
		BrokerConfig("listener.security.protocol.map", "PLAINTEXT:SASL_PLAINTEXT"),
		BrokerConfig("sasl.enabled.mechanisms", "PLAIN"),
		BrokerConfig("listener.name.plaintext.plain.sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";`),
		ClientOpts(auth), SeedTopics(1, "secured"))
	ctx := testCtx(t)
	if err := c.WaitISR(ctx, "secured"); err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, c, "secured", auth)
	p.produce(ctx, 0, 3)
	checkAcked(t, ctx, c, "secured", p.acked, auth)
}
