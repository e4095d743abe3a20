package acls

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
	"github.com/silkworm/silkworm/internal/tools/configs"
)

// TestSecureClusterBroker runs the security tools the way an operator
// does against a broker with SASL and ACLs: the super user (PLAIN) creates
// a SCRAM user and grants ACLs; that user (SCRAM-SHA-512) and another one
// (an unsecured OAUTHBEARER token) may then do exactly what the ACLs allow.
func TestSecureClusterBroker(t *testing.T) {
	// The broker's one listener, named PLAINTEXT by the embedded
	// cluster, speaks SASL_PLAINTEXT: Kafka lets a listener's name and
	// its security protocol differ.
	addr := brokertest.Start(t,
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512,OAUTHBEARER",
		`listener.name.plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin")
	requireACLAPIs(t, addr, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()))
	dir := t.TempDir()
	props := func(name, text string) string {
		path := filepath.Join(dir, name+".properties")
		if err := os.WriteFile(path, []byte("security.protocol=SASL_PLAINTEXT\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	admin := props("admin", "sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n  username=\"admin\" password=\"admin-secret\";\n")
	alice := props("alice", "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";\n")
	bob := props("bob", "sasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"bob\";\n")

	runConfigs := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := configs.Run(context.Background(), append([]string{"--bootstrap-server", addr}, args...), &out, &bytes.Buffer{})
		return out.String(), err
	}
	c := tool{t, addr}
	if out, err := runConfigs("--command-config", admin, "--alter", "--user", "alice", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=alice-secret]"); err != nil {
		t.Fatalf("create alice: %v (%q)", err, out)
	}

	// Neither may describe ACLs yet: they log in, and are refused.
	for who, cfg := range map[string]string{"alice": alice, "bob": bob} {
		if _, err := c.run("", "--command-config", cfg, "--list"); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
			t.Errorf("%s lists ACLs without an ACL: %v, want CLUSTER_AUTHORIZATION_FAILED", who, err)
		}
	}
	c.mustRun("", "--command-config", admin, "--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob", "--operation", "Describe", "--cluster")
	for who, cfg := range map[string]string{"alice": alice, "bob": bob} {
		out, err := c.run("", "--command-config", cfg, "--list", "--cluster")
		want := "Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:\n" +
			"\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
			"\t(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW)\n\n"
		if err != nil || out != want {
			t.Errorf("%s lists ACLs with DESCRIBE on the cluster: %v\n%s", who, err, out)
		}
		// DESCRIBE is not ALTER: adding ACLs stays refused.
		if _, err := c.run("", "--command-config", cfg, "--add", "--allow-principal", "User:"+who, "--topic", "t"); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
			t.Errorf("%s adds ACLs with DESCRIBE only: %v, want CLUSTER_AUTHORIZATION_FAILED", who, err)
		}
	}

	// A wrong password does not log in.
	wrong := props("wrong", "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"guess\";\n")
	_, err := c.run("", "--command-config", wrong, "--list")
	if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), "refused the admin client") {
		t.Errorf("wrong SCRAM password: %v", err)
	}
}
