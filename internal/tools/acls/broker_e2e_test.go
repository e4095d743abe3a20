package acls

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

// requireACLAPIs skips the test unless the broker at addr supports
// DescribeAcls, CreateAcls and DeleteAcls (connecting with opts). The
// broker's security APIs are being added; the tests against it run as soon
// as it advertises them.
func requireACLAPIs(t *testing.T, addr string, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
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
		for _, k := range []int16{29, 30, 31} {
			if _, ok := v.KeyMaxVersion(k); !ok {
				t.Skip("broker API not yet available")
			}
		}
	}
}

func TestACLsEndToEndBroker(t *testing.T) {
	// The tool connects over PLAINTEXT, as User:ANONYMOUS, made a super
	// user so that it may manage ACLs.
	addr := brokertest.Start(t,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS")
	requireACLAPIs(t, addr)
	testACLsEndToEnd(t, addr)

	// MATCH finds the literal, wildcard and prefixed patterns that apply
	// to a name (kfake does not implement it).
	c := tool{t, addr}
	c.mustRun("", "--add", "--allow-principal", "User:m", "--operation", "Read", "--topic", "ord", "--resource-pattern-type", "prefixed")
	c.mustRun("", "--add", "--allow-principal", "User:m", "--operation", "Read", "--topic", "*")
	c.mustRun("", "--add", "--allow-principal", "User:m", "--operation", "Read", "--topic", "other")
	out := c.mustRun("", "--list", "--topic", "orders", "--resource-pattern-type", "match")
	want := "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)`:\n" +
		"\t(principal=User:m, host=*, operation=READ, permissionType=ALLOW)\n\n" +
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)`:\n" +
		"\t(principal=User:m, host=*, operation=READ, permissionType=ALLOW)\n\n"
	if out != want {
		t.Errorf("list with a MATCH filter:\n%s\nwant\n%s", out, want)
	}
}

func TestACLsWithoutAuthorizerBroker(t *testing.T) {
	addr := brokertest.Start(t)
	requireACLAPIs(t, addr)
	c := tool{t, addr}
	if _, err := c.run("", "--list"); !errors.Is(err, kerr.SecurityDisabled) {
		t.Errorf("list without an authorizer: %v, want SECURITY_DISABLED", err)
	}
	if _, err := c.run("", "--add", "--allow-principal", "User:a", "--topic", "t"); !errors.Is(err, kerr.SecurityDisabled) {
		t.Errorf("add without an authorizer: %v, want SECURITY_DISABLED", err)
	}
}
