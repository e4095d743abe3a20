package acls

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tool runs `silkworm acls` against one cluster.
type tool struct {
	t    *testing.T
	addr string
}

func (c tool) run(stdin string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), append([]string{"--bootstrap-server", c.addr}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

func (c tool) mustRun(stdin string, args ...string) string {
	c.t.Helper()
	out, err := c.run(stdin, args...)
	if err != nil {
		c.t.Fatalf("acls %q: %v (stdout %q)", args, err, out)
	}
	return out
}

// bindings reads every ACL on the cluster over the protocol, independently
// of the tool, as sorted Binding strings.
func bindings(t *testing.T, addr string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	b := kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Allow().AllowHosts().Deny().DenyHosts().Operations()
	res, err := kadm.NewClient(cl).DescribeACLs(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		for _, d := range r.Described {
			out = append(out, Binding{
				Pattern: ResourcePattern{Type: d.Type, Name: d.Name, Pattern: d.Pattern},
				Entry:   Entry{Principal: d.Principal, Host: d.Host, Operation: d.Operation, Permission: d.Permission},
			}.String())
		}
	}
	slices.Sort(out)
	return out
}

func binding(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation) string {
	return Binding{
		Pattern: ResourcePattern{Type: typ, Name: name, Pattern: pattern},
		Entry:   Entry{Principal: principal, Host: "*", Operation: op, Permission: kmsg.ACLPermissionTypeAllow},
	}.String()
}

func startKfake(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func TestACLsEndToEndKfake(t *testing.T) {
	testACLsEndToEnd(t, startKfake(t))
}

// testACLsEndToEnd adds, lists and removes ACLs on a cluster that starts
// without any, checking the tool's output and what the cluster holds.
func testACLsEndToEnd(t *testing.T, addr string) {
	c := tool{t, addr}
	const orders = "`ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`"
	lit := kmsg.ACLResourcePatternTypeLiteral
	topicT := kmsg.ACLResourceTypeTopic

	if out := c.mustRun("", "--list"); out != "" {
		t.Errorf("list of no ACLs: %q", out)
	}

	// Add two operations, then one more beside one already there.
	out := c.mustRun("", "--add", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Describe", "--topic", "orders")
	want := "Adding ACLs for resource " + orders + ": \n" +
		" \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)\n" +
		"\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)\n\n"
	if out != want {
		t.Errorf("add:\n%q\nwant\n%q", out, want)
	}
	out = c.mustRun("", "--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", "orders")
	want = "Acl (pattern=ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL), entry=(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)) already exists.\n" +
		"Adding ACLs for resource " + orders + ": \n" +
		" \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n\n"
	if out != want {
		t.Errorf("add beside an existing ACL:\n%q\nwant\n%q", out, want)
	}
	if got, want := bindings(t, addr), []string{
		binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationRead),
		binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationWrite),
		binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationDescribe),
	}; !sameSet(got, want) {
		t.Errorf("cluster ACLs after add:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The producer shortcut with idempotence, and a prefixed pattern for bob.
	c.mustRun("", "--add", "--producer", "--idempotent", "--allow-principal", "User:p", "--topic", "orders", "--transactional-id", "tx")
	c.mustRun("", "--add", "--allow-principal", "User:bob", "--deny-principal", "User:eve", "--deny-host", "10.0.0.9",
		"--operation", "Read", "--topic", "ord", "--resource-pattern-type", "PREFIXED")

	out = c.mustRun("", "--list", "--topic", "orders")
	want = "Current ACLs for resource " + orders + ":\n" +
		"\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n" +
		"\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)\n" +
		"\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
		"\t(principal=User:p, host=*, operation=WRITE, permissionType=ALLOW)\n" +
		"\t(principal=User:p, host=*, operation=CREATE, permissionType=ALLOW)\n" +
		"\t(principal=User:p, host=*, operation=DESCRIBE, permissionType=ALLOW)\n\n"
	if out != want {
		t.Errorf("list --topic orders:\n%s\nwant\n%s", out, want)
	}
	// (kfake's MATCH filter does not match prefixes, so ANY, which takes
	// the name as it is, finds the prefixed pattern.)
	out = c.mustRun("", "--list", "--topic", "ord", "--resource-pattern-type", "any", "--principal", "User:bob", "--principal", "User:eve")
	want = "ACLs for principal `User:bob`\n" +
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)`:\n" +
		"\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n\n" +
		"ACLs for principal `User:eve`\n" +
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)`:\n" +
		"\t(principal=User:eve, host=10.0.0.9, operation=READ, permissionType=DENY)\n\n"
	if out != want {
		t.Errorf("list --principal:\n%s\nwant\n%s", out, want)
	}
	out = c.mustRun("", "--list")
	for _, r := range []string{
		"Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`:\n\t(principal=User:p, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)\n\n",
		"Current ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)`:\n\t(principal=User:p, host=*, operation=WRITE, permissionType=ALLOW)\n\t(principal=User:p, host=*, operation=DESCRIBE, permissionType=ALLOW)\n\n",
		"Current ACLs for resource " + orders + ":\n",
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)`:\n",
	} {
		if !strings.Contains(out, r) {
			t.Errorf("list of all ACLs lacks\n%s\nin\n%s", r, out)
		}
	}

	// --remove asks first; "n" and end of input keep the ACL, "y" removes it.
	question := "Are you sure you want to remove ACLs: \n" +
		" \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)\n" +
		" from resource filter " + orders + "? (y/n)\n"
	for _, answer := range []string{"n\n", ""} {
		if out := c.mustRun(answer, "--remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "orders"); out != question {
			t.Errorf("remove question:\n%q\nwant\n%q", out, question)
		}
		if got := bindings(t, addr); !slices.Contains(got, binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationWrite)) {
			t.Fatalf("answer %q removed the ACL", answer)
		}
	}
	c.mustRun("Y\n", "--remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "orders")
	if got := bindings(t, addr); slices.Contains(got, binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationWrite)) ||
		!slices.Contains(got, binding(topicT, "orders", lit, "User:alice", kmsg.ACLOperationRead)) {
		t.Errorf("after removing alice's WRITE:\n%s", strings.Join(got, "\n"))
	}

	// Without principals --remove empties the filter; --force asks nothing.
	if out := c.mustRun("", "--remove", "--force", "--topic", "orders"); out != "" {
		t.Errorf("remove --force printed %q", out)
	}
	if out := c.mustRun("", "--list", "--topic", "orders"); out != "" {
		t.Errorf("list after removing all of orders: %q", out)
	}
	out = c.mustRun("y\n", "--remove", "--topic", "ord", "--resource-pattern-type", "prefixed")
	if want := "Are you sure you want to delete all ACLs for resource filter `ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)`? (y/n)\n"; out != want {
		t.Errorf("remove-all question: %q", out)
	}
	if got, want := bindings(t, addr), []string{
		binding(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, "User:p", kmsg.ACLOperationIdempotentWrite),
		binding(kmsg.ACLResourceTypeTransactionalId, "tx", lit, "User:p", kmsg.ACLOperationWrite),
		binding(kmsg.ACLResourceTypeTransactionalId, "tx", lit, "User:p", kmsg.ACLOperationDescribe),
	}; !sameSet(got, want) {
		t.Errorf("cluster ACLs at the end:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestACLsBrokerErrorKfake(t *testing.T) {
	c := tool{t, startKfake(t)}
	// kfake refuses DELEGATION_TOKEN resources; the refusal is the error.
	_, err := c.run("", "--add", "--allow-principal", "User:a", "--operation", "Describe", "--delegation-token", "tok")
	if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(err.Error(), "DELEGATION_TOKEN") {
		t.Errorf("add refused by the broker: %v", err)
	}
	// An unreachable cluster is an error naming it, after the command
	// line was found valid.
	if _, err := (tool{t, "127.0.0.1:1"}).run("", "--list"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable cluster: %v", err)
	}
}
