package acls

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func topic(name string) ResourcePattern {
	return ResourcePattern{Type: kmsg.ACLResourceTypeTopic, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral}
}

func allow(principal string, op kmsg.ACLOperation) Entry {
	return Entry{Principal: principal, Host: "*", Operation: op, Permission: kmsg.ACLPermissionTypeAllow}
}

func TestStrings(t *testing.T) {
	r := ResourcePattern{Type: kmsg.ACLResourceTypeTransactionalId, Name: "tx-", Pattern: kmsg.ACLResourcePatternTypePrefixed}
	if got, want := r.String(), "ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx-, patternType=PREFIXED)"; got != want {
		t.Errorf("ResourcePattern = %q, want %q", got, want)
	}
	any := ResourcePattern{Type: kmsg.ACLResourceTypeAny, AnyName: true, Pattern: kmsg.ACLResourcePatternTypeAny}
	if got, want := any.String(), "ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY)"; got != want {
		t.Errorf("filter = %q, want %q", got, want)
	}
	e := Entry{Principal: "User:bob", Host: "10.0.0.1", Operation: kmsg.ACLOperationIdempotentWrite, Permission: kmsg.ACLPermissionTypeDeny}
	if got, want := e.String(), "(principal=User:bob, host=10.0.0.1, operation=IDEMPOTENT_WRITE, permissionType=DENY)"; got != want {
		t.Errorf("Entry = %q, want %q", got, want)
	}
	b := Binding{Pattern: topic("orders"), Entry: allow("User:alice", kmsg.ACLOperationRead)}
	if got, want := b.String(), "(pattern=ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL), entry=(principal=User:alice, host=*, operation=READ, permissionType=ALLOW))"; got != want {
		t.Errorf("Binding = %q, want %q", got, want)
	}
}

func TestParseOperation(t *testing.T) {
	for in, want := range map[string]kmsg.ACLOperation{
		"Read":             kmsg.ACLOperationRead,
		"read":             kmsg.ACLOperationRead,
		"READ":             kmsg.ACLOperationRead,
		"IdempotentWrite":  kmsg.ACLOperationIdempotentWrite,
		"idempotentwrite":  kmsg.ACLOperationIdempotentWrite,
		"IDEMPOTENT_WRITE": kmsg.ACLOperationUnknown, // Kafka does not accept the enum name
		"DescribeConfigs":  kmsg.ACLOperationDescribeConfigs,
		"All":              kmsg.ACLOperationAll,
		"Any":              kmsg.ACLOperationAny,
		"Fly":              kmsg.ACLOperationUnknown,
	} {
		if got := parseOperation(in); got != want {
			t.Errorf("parseOperation(%q) = %v, want %v", in, got, want)
		}
	}
}

// plan parses args and returns what --add or --remove would do.
func plan(t *testing.T, args ...string) ([]resourceACLs, error) {
	t.Helper()
	o := newOptions(&bytes.Buffer{})
	if err := o.p.Parse(append([]string{"--bootstrap-server", "x:1"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if *o.add {
		return o.addPlan()
	}
	return o.resourceACLs()
}

func planText(rs []resourceACLs) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Resource.String() + "\n")
		for _, e := range r.Entries {
			b.WriteString("  " + e.String() + "\n")
		}
	}
	return b.String()
}

func TestPlans(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one topic, default operation and host", []string{"--add", "--allow-principal", "User:alice", "--topic", "orders"},
			"ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)\n" +
				"  (principal=User:alice, host=*, operation=ALL, permissionType=ALLOW)\n"},
		{"product of principals, hosts and operations", []string{"--add", "--allow-principal", "User:b", "--allow-principal", "User:a",
			"--allow-host", "h1", "--allow-host", "h2", "--operation", "Read", "--operation", "write", "--deny-principal", "User:c",
			"--topic", "t-", "--resource-pattern-type", "prefixed"},
			"ResourcePattern(resourceType=TOPIC, name=t-, patternType=PREFIXED)\n" +
				"  (principal=User:a, host=h1, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:a, host=h1, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:a, host=h2, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:a, host=h2, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:b, host=h1, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:b, host=h1, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:b, host=h2, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:b, host=h2, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:c, host=*, operation=READ, permissionType=DENY)\n" +
				"  (principal=User:c, host=*, operation=WRITE, permissionType=DENY)\n"},
		{"producer: WRITE, DESCRIBE, CREATE on topics, WRITE, DESCRIBE on transactional ids, IDEMPOTENT_WRITE on the cluster",
			[]string{"--add", "--producer", "--idempotent", "--allow-principal", "User:p", "--topic", "t", "--transactional-id", "tx"},
			"ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)\n" +
				"  (principal=User:p, host=*, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:p, host=*, operation=CREATE, permissionType=ALLOW)\n" +
				"  (principal=User:p, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)\n" +
				"  (principal=User:p, host=*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)\n" +
				"  (principal=User:p, host=*, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:p, host=*, operation=DESCRIBE, permissionType=ALLOW)\n"},
		{"consumer: READ, DESCRIBE on topics, READ on groups",
			[]string{"--add", "--consumer", "--allow-principal", "User:c", "--topic", "t", "--group", "g"},
			"ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)\n" +
				"  (principal=User:c, host=*, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:c, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)\n" +
				"  (principal=User:c, host=*, operation=READ, permissionType=ALLOW)\n"},
		{"producer and consumer together merge the topic's entries",
			[]string{"--add", "--producer", "--consumer", "--allow-principal", "User:x", "--topic", "t", "--group", "g"},
			"ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)\n" +
				"  (principal=User:x, host=*, operation=READ, permissionType=ALLOW)\n" +
				"  (principal=User:x, host=*, operation=WRITE, permissionType=ALLOW)\n" +
				"  (principal=User:x, host=*, operation=CREATE, permissionType=ALLOW)\n" +
				"  (principal=User:x, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)\n" +
				"  (principal=User:x, host=*, operation=READ, permissionType=ALLOW)\n"},
		{"remove without principals removes everything from the filter",
			[]string{"--remove", "--topic", "t", "--cluster", "--resource-pattern-type", "match"},
			"ResourcePattern(resourceType=TOPIC, name=t, patternType=MATCH)\n"},
		{"all resource kinds", []string{"--add", "--allow-principal", "User:*", "--operation", "Describe",
			"--topic", "t", "--cluster", "--group", "g", "--transactional-id", "tx", "--delegation-token", "tok"},
			"ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)\n" +
				"  (principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=GROUP, name=g, patternType=LITERAL)\n" +
				"  (principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)\n" +
				"  (principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL)\n" +
				"  (principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)\n" +
				"ResourcePattern(resourceType=DELEGATION_TOKEN, name=tok, patternType=LITERAL)\n" +
				"  (principal=User:*, host=*, operation=DESCRIBE, permissionType=ALLOW)\n"},
		{"user principal resource", []string{"--add", "--allow-principal", "User:a", "--operation", "CreateTokens", "--user-principal", "bob"},
			"ResourcePattern(resourceType=USER, name=bob, patternType=LITERAL)\n" +
				"  (principal=User:a, host=*, operation=CREATE_TOKENS, permissionType=ALLOW)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := plan(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := planText(rs); got != tc.want {
				t.Errorf("plan for %q:\n%s\nwant:\n%s", tc.args, got, tc.want)
			}
		})
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t"}, "Command must include exactly one action: --list, --add, --remove. "},
		{[]string{"--add", "--list", "--topic", "t"}, "Command must include exactly one action"},
		{[]string{"--list", "--producer", "--topic", "t"}, `Option "[list]" can't be used with option "[producer]"`},
		{[]string{"--list", "--allow-principal", "User:a"}, `Option "[list]" can't be used with option "[allow-principal]"`},
		{[]string{"--add", "--producer", "--operation", "Read", "--topic", "t"}, `Option "[producer]" can't be used with option "[operation]"`},
		{[]string{"--add", "--consumer", "--deny-principal", "User:a", "--topic", "t", "--group", "g"}, `Option "[consumer]" can't be used with option "[deny-principal]"`},
		{[]string{"--add", "--principal", "User:a", "--topic", "t"}, "The --principal option is only available if --list is set"},
		{[]string{"--add", "--producer", "--allow-principal", "User:a"}, "With --producer you must specify a --topic"},
		{[]string{"--add", "--idempotent", "--allow-principal", "User:a", "--topic", "t"}, "The --idempotent option is only available if --producer is set"},
		{[]string{"--add", "--consumer", "--allow-principal", "User:a", "--topic", "t"}, "With --consumer you must specify a --topic and a --group"},
		{[]string{"--add", "--consumer", "--allow-principal", "User:a", "--topic", "t", "--group", "g", "--cluster"}, "no --cluster or --transactional-id option"},
		{[]string{"--add", "--allow-principal", "User:a"}, "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>"},
		{[]string{"--add", "--allow-principal", "User:a", "--cluster", "--resource-pattern-type", "prefixed"}, "You must provide at least one resource"},
		{[]string{"--add", "--topic", "t"}, "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."},
		{[]string{"--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"}, "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."},
		{[]string{"--add", "--allow-principal", "alice", "--topic", "t"}, "expected a string in format principalType:principalName but got alice"},
		{[]string{"--add", "--allow-principal", "User:a", "--topic", "t", "--operation", "IdempotentWrite"}, "ResourceType TOPIC only supports operations [ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS]"},
		{[]string{"--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Fly"}, "ResourceType GROUP only supports operations"},
		{[]string{"--add", "--allow-principal", "User:a", "--delegation-token", "d", "--operation", "Read"}, "ResourceType DELEGATION_TOKEN only supports operations [ALL, DESCRIBE]"},
	} {
		_, err := plan(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	// A bad pattern type and a missing server fail while parsing.
	o := newOptions(&bytes.Buffer{})
	if err := o.p.Parse([]string{"--resource-pattern-type", "regex"}); err == nil || !strings.Contains(err.Error(), "ANY|MATCH|LITERAL|PREFIXED") {
		t.Errorf("bad --resource-pattern-type: %v", err)
	}
	if err := Run(context.Background(), []string{"--list"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "bootstrap-server") {
		t.Errorf("no --bootstrap-server: %v", err)
	}
}

// TestOutputGolden covers every text the tool prints, from Kafka's
// AclCommand.
func TestOutputGolden(t *testing.T) {
	var b bytes.Buffer
	orders := topic("orders")
	writeAdding(&b, orders, []Entry{allow("User:alice", kmsg.ACLOperationWrite), allow("User:alice", kmsg.ACLOperationDescribe)})
	writeExists(&b, Binding{Pattern: orders, Entry: allow("User:alice", kmsg.ACLOperationRead)})
	writeCurrent(&b, []resourceACLs{
		{Resource: orders, Entries: []Entry{allow("User:alice", kmsg.ACLOperationWrite)}},
		{Resource: ResourcePattern{Type: kmsg.ACLResourceTypeGroup, Name: "g-", Pattern: kmsg.ACLResourcePatternTypePrefixed},
			Entries: []Entry{{Principal: "User:bob", Host: "10.1.1.1", Operation: kmsg.ACLOperationRead, Permission: kmsg.ACLPermissionTypeDeny}}},
	})
	writePrincipalHeader(&b, "User:alice")
	fmt.Fprintln(&b, removeQuestion(orders, []Entry{allow("User:alice", kmsg.ACLOperationWrite), allow("User:bob", kmsg.ACLOperationRead)}))
	fmt.Fprintln(&b, removeQuestion(ResourcePattern{Type: kmsg.ACLResourceTypeTopic, Name: "orders", Pattern: kmsg.ACLResourcePatternTypeMatch}, nil))
	checkGolden(t, "output", b.Bytes())
}

func TestHelpGolden(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "help", out.Bytes())
}
