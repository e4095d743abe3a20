package configs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func TestConfigsEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := Run(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &errOut)
		return out.String(), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("configs %q: %v (stdout %q)", args, err, out)
		}
		return out
	}

	// Topics: no overrides, then two, then one deleted.
	if out := mustRun("--describe", "--entity-type", "topics", "--entity-name", "orders"); out != "Dynamic configs for topic orders are:\n" {
		t.Errorf("describe without overrides: %q", out)
	}
	if out := mustRun("--alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]"); out != "Completed updating config for topic orders.\n" {
		t.Errorf("alter: %q", out)
	}
	out := mustRun("--describe", "--topic", "orders")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "Dynamic configs for topic orders are:" ||
		!strings.HasPrefix(lines[1], "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete") ||
		!strings.HasPrefix(lines[2], "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000") {
		t.Errorf("describe after alter:\n%s", out)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rcs.On("orders", nil); err != nil {
		t.Fatal(err)
	} else {
		var retention string
		for _, e := range c.Configs {
			if e.Key == "retention.ms" && e.Value != nil {
				retention = *e.Value
			}
		}
		if retention != "1000" {
			t.Errorf("retention.ms read back over the protocol: %q", retention)
		}
	}
	mustRun("--alter", "--entity-type", "topics", "--entity-name", "orders", "--delete-config", "retention.ms")
	out = mustRun("--describe", "--entity-type", "topics", "--entity-name", "orders")
	if strings.Contains(out, "retention.ms") || !strings.Contains(out, "cleanup.policy=compact,delete") {
		t.Errorf("describe after delete-config:\n%s", out)
	}
	out = mustRun("--describe", "--all", "--entity-type", "topics", "--entity-name", "orders")
	if !strings.HasPrefix(out, "All configs for topic orders are:\n") || !strings.Contains(out, "\n  retention.ms=604800000 sensitive=false synonyms={") {
		t.Errorf("describe --all:\n%s", out)
	}
	// All topics are described without --entity-name.
	if out := mustRun("--describe", "--entity-type", "topics"); !strings.Contains(out, "Dynamic configs for topic orders are:\n") {
		t.Errorf("describe all topics:\n%s", out)
	}
	if out, err := run("--alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config", "no.such.config=1"); err == nil || !strings.Contains(err.Error(), "no.such.config") {
		t.Errorf("unknown topic config: %q %v", out, err)
	}
	if _, err := run("--alter", "--entity-type", "topics", "--entity-name", "missing", "--add-config", "retention.ms=1"); err == nil {
		t.Error("alter of a missing topic: want an error")
	}

	// Brokers: a dynamic per-broker override, read back and removed.
	if out := mustRun("--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "compression.type=gzip"); out != "Completed updating config for broker 1.\n" {
		t.Errorf("alter broker: %q", out)
	}
	out = mustRun("--describe", "--broker", "1")
	if !strings.HasPrefix(out, "Dynamic configs for broker 1 are:\n  compression.type=gzip sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:compression.type=gzip") {
		t.Errorf("describe broker:\n%s", out)
	}
	out = mustRun("--describe", "--all", "--entity-type", "brokers", "--entity-name", "1")
	if !strings.HasPrefix(out, "All configs for broker 1 are:\n") || !strings.Contains(out, "\n  compression.type=gzip ") || !strings.Contains(out, "\n  log.dirs=") {
		t.Errorf("describe --all broker:\n%s", out)
	}
	mustRun("--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config", "compression.type")
	if out := mustRun("--describe", "--entity-type", "brokers", "--entity-name", "1"); out != "Dynamic configs for broker 1 are:\n" {
		t.Errorf("describe broker after delete:\n%s", out)
	}
	if out := mustRun("--describe", "--entity-type", "brokers", "--entity-default"); !strings.HasPrefix(out, "Default configs for brokers in the cluster are:\n") {
		t.Errorf("describe broker defaults:\n%s", out)
	}
	if _, err := run("--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.dirs=/tmp/x"); err == nil {
		t.Error("altering a read-only broker config: want an error")
	}
	if _, err := run("--describe", "--entity-type", "widgets"); err == nil {
		t.Error("unsupported entity type: want an error")
	}
	if out := mustRun("--describe", "--entity-type", "topics", "--entity-name", "missing"); out != "The topic 'missing' doesn't exist and doesn't have dynamic config.\n" {
		t.Errorf("describe a missing topic: %q", out)
	}
	if out := mustRun("--describe", "--broker", "7"); out != "The broker '7' doesn't exist and doesn't have dynamic config.\n" {
		t.Errorf("describe a missing broker: %q", out)
	}
	if _, err := run("--alter", "--topic", "orders", "--delete-config", "retention.ms"); err == nil || !strings.Contains(err.Error(), "Invalid config(s): retention.ms") {
		t.Errorf("delete of a config that is not set: %v", err)
	}
}

// requireAPIs skips the test unless the broker at addr supports every API
// key given. The broker's security APIs are being added; the tests against
// it run as soon as it advertises them.
func requireAPIs(t *testing.T, addr string, keys ...int16) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	vs, err := kadm.NewClient(cl).ApiVersions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Err != nil {
			t.Fatal(v.Err)
		}
		for _, k := range keys {
			if _, ok := v.KeyMaxVersion(k); !ok {
				t.Skip("broker API not yet available")
			}
		}
	}
}

func TestUsersAndClientsBroker(t *testing.T) {
	addr := brokertest.Start(t)
	// DescribeClientQuotas, AlterClientQuotas, DescribeUserScramCredentials,
	// AlterUserScramCredentials.
	requireAPIs(t, addr, 48, 49, 50, 51)
	testUsersAndClients(t, addr)

	// Like a KRaft Kafka, the broker refuses two mechanisms of one user in
	// one request; the tool reports it.
	c := configsTool{t, addr}
	if _, err := c.run("--alter", "--user", "bob", "--add-config", "SCRAM-SHA-256=[password=b1],SCRAM-SHA-512=[iterations=5000,password=b2]"); !errors.Is(err, kerr.DuplicateResource) {
		t.Errorf("alter two mechanisms of a user at once: %v, want DUPLICATE_RESOURCE", err)
	}
}
