package configs

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// configsTool runs `silkworm configs` against one cluster.
type configsTool struct {
	t    *testing.T
	addr string
}

func (c configsTool) run(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), append([]string{"--bootstrap-server", c.addr}, args...), &out, &errOut)
	return out.String(), err
}

func (c configsTool) mustRun(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("configs %q: %v (stdout %q)", args, err, out)
	}
	return out
}

func TestUsersAndClientsKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testUsersAndClients(t, c.ListenAddrs()[0])
}

func TestUsersAndClientsKfakeSASL(t *testing.T) {
	// SASL on, so that the SCRAM credentials the tool sets can be used
	// to log in; the tool itself connects as the superuser.
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "admin-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cfg := t.TempDir() + "/admin.properties"
	writeFile(t, cfg, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`+"\n")
	testUsersAndClients(t, addr, "--command-config", cfg)

	// carol logs in with the SCRAM-SHA-512 password the tool sets. (kfake
	// always announces 4096 iterations, so a credential with more, like
	// alice's, cannot log in there.)
	configsTool{t, addr}.mustRun("--command-config", cfg, "--alter", "--user", "carol", "--add-config", "SCRAM-SHA-512=[password=carol-secret]")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(context.Background()); err != nil {
		t.Errorf("carol cannot log in with the SCRAM-SHA-512 credential set by the tool: %v", err)
	}
}

// testUsersAndClients sets, describes and deletes user and client quotas
// and SCRAM credentials on a cluster that has none, connecting with extra
// (e.g. --command-config).
func testUsersAndClients(t *testing.T, addr string, extra ...string) {
	c := configsTool{t, addr}
	run := func(args ...string) string { t.Helper(); return c.mustRun(append(extra, args...)...) }
	fail := func(args ...string) error {
		t.Helper()
		out, err := c.run(append(extra, args...)...)
		if err == nil {
			t.Fatalf("configs %q succeeded (stdout %q), want an error", args, out)
		}
		return err
	}

	// SCRAM credentials of one user, with and without iterations, one
	// mechanism at a time: a KRaft Kafka refuses a user named twice in one
	// AlterUserScramCredentials (DUPLICATE_RESOURCE).
	for _, add := range []string{"SCRAM-SHA-512=[iterations=8192,password=alice-secret]", "SCRAM-SHA-256=[password=alice-256]"} {
		if out := run("--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", add); out != "Completed updating config for user alice.\n" {
			t.Errorf("alter SCRAM %s: %q", add, out)
		}
	}
	if out := run("--describe", "--entity-type", "users", "--entity-name", "alice"); out !=
		"SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192\n" {
		t.Errorf("describe SCRAM:\n%s", out)
	}

	// Quotas of a user, a client, a user's client and the default user.
	if out := run("--alter", "--user", "alice", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048"); out != "Completed updating config for user alice.\n" {
		t.Errorf("alter user quota: %q", out)
	}
	if out := run("--alter", "--entity-type", "clients", "--entity-name", "c1", "--add-config", "request_percentage=50"); out != "Completed updating config for client c1.\n" {
		t.Errorf("alter client quota: %q", out)
	}
	if out := run("--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "c1",
		"--add-config", "producer_byte_rate=10000000"); out != "Completed updating config for user alice.\n" {
		t.Errorf("alter user+client quota: %q", out)
	}
	if out := run("--alter", "--entity-type", "users", "--entity-default", "--add-config", "producer_byte_rate=100"); out != "Completed updating default config for users in the cluster.\n" {
		t.Errorf("alter default user quota: %q", out)
	}

	out := run("--describe", "--entity-type", "users", "--entity-name", "alice")
	want := "Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0\n" +
		"SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192\n"
	if out != want {
		t.Errorf("describe alice:\n%s\nwant\n%s", out, want)
	}
	if out := run("--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "c1"); out !=
		"Quota configs for user-principal 'alice', client-id 'c1' are producer_byte_rate=1.0E7\n" {
		t.Errorf("describe alice's c1:\n%s", out)
	}
	if out := run("--describe", "--client", "c1"); out != "Quota configs for client-id 'c1' are request_percentage=50.0\n" {
		t.Errorf("describe client c1:\n%s", out)
	}
	if out := run("--describe", "--entity-type", "users", "--entity-default"); out != "Quota configs for the default user-principal are producer_byte_rate=100.0\n" {
		t.Errorf("describe the default user:\n%s", out)
	}
	// Every user: the quotas of alice (and, on a KRaft Kafka, whose
	// "specified" match takes defaults too, those of the default user),
	// then the SCRAM credentials of every user the cluster has (the
	// superuser may be among them).
	out = run("--describe", "--entity-type", "users")
	if !strings.Contains(out, "Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0\n") ||
		!strings.Contains(out, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192\n") ||
		strings.Index(out, "Quota configs") > strings.Index(out, "SCRAM credential configs") {
		t.Errorf("describe all users:\n%s", out)
	}

	// The quotas are on the cluster, read over the protocol by kadm.
	cl, adm := admin(t, addr, extra)
	defer cl.Close()
	qs, err := adm.DescribeClientQuotas(context.Background(), true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kadm.StringPtr("alice")}})
	if err != nil || len(qs) != 1 || len(qs[0].Values) != 2 {
		t.Fatalf("alice's quotas over the protocol: %v %v", qs, err)
	}

	// Deleting: a quota that is not set is refused; set ones go.
	if err := fail("--alter", "--user", "alice", "--delete-config", "request_percentage"); !strings.Contains(err.Error(), "Invalid config(s): request_percentage") {
		t.Errorf("delete of an unset quota: %v", err)
	}
	run("--alter", "--user", "alice", "--delete-config", "producer_byte_rate,consumer_byte_rate")
	run("--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-256")
	if out := run("--describe", "--user", "alice"); out != "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192\n" {
		t.Errorf("describe alice after deletes:\n%s", out)
	}
	if out := run("--describe", "--user", "nobody"); out != "" {
		t.Errorf("describe an unknown user: %q", out)
	}

	// Values that do not parse are refused before any change.
	if err := fail("--alter", "--client", "c1", "--add-config", "producer_byte_rate=fast"); !strings.Contains(err.Error(), "Cannot parse quota configuration value for producer_byte_rate: fast") {
		t.Errorf("bad quota value: %v", err)
	}
	if err := fail("--alter", "--user", "bob", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]"); !strings.Contains(err.Error(), "Iterations 100 is less than the minimum 4096") {
		t.Errorf("too few iterations: %v", err)
	}
}

func admin(t *testing.T, addr string, extra []string) (*kgo.Client, *kadm.Client) {
	t.Helper()
	var cfg string
	for i, a := range extra {
		if a == "--command-config" && i+1 < len(extra) {
			cfg = extra[i+1]
		}
	}
	cl, adm, err := cli.NewAdmin(context.Background(), cfg, addr)
	if err != nil {
		t.Fatal(err)
	}
	return cl, adm
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
