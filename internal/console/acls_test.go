package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclAuthorizer turns on Kafka's StandardAuthorizer with the console's
// anonymous user as a super user.
var aclAuthorizer = []string{
	"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"super.users=User:ANONYMOUS",
}

type apiACL struct {
	Principal, Host, Permission, Operation, ResourceType, ResourceName, PatternType string
}

// brokerACLs is every ACL the broker holds, read with DescribeAcls.
func brokerACLs(t *testing.T, bootstrap string) []apiACL {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("describe ACLs: %v", err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("describe ACLs: error code %d", resp.ErrorCode)
	}
	var out []apiACL
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, apiACL{a.Principal, a.Host, a.PermissionType.String(), a.Operation.String(),
				r.ResourceType.String(), r.ResourceName, r.ResourcePatternType.String()})
		}
	}
	return out
}

func TestACLsAPI(t *testing.T) {
	u, bootstrap := startConsole(t, aclAuthorizer...)
	api := newPageAPI(t, u)

	// As the page sends it (mixed case); the broker and the list use
	// Kafka's names.
	create := apiACL{"User:alice", "*", "Allow", "Read", "Topic", "orders", "Literal"}
	stored := apiACL{"User:alice", "*", "ALLOW", "READ", "TOPIC", "orders", "LITERAL"}
	api.must("POST", "/api/acls", create, nil)
	prefixed := apiACL{"User:bob", "*", "DENY", "WRITE", "GROUP", "app-", "PREFIXED"}
	api.must("POST", "/api/acls", prefixed, nil)
	if got := brokerACLs(t, bootstrap); len(got) != 2 || !containsACL(got, stored) || !containsACL(got, prefixed) {
		t.Fatalf("broker ACLs after two creations: %+v", got)
	}

	var list struct{ ACLs []apiACL }
	for _, tc := range []struct {
		query string
		want  []apiACL
	}{
		{"", []apiACL{prefixed, stored}}, // GROUP sorts before TOPIC
		{"?principal=ALICE", []apiACL{stored}},
		{"?principal=carol", nil},
		{"?resourceType=group", []apiACL{prefixed}},
		{"?resourceName=ord", []apiACL{stored}},
	} {
		api.must("GET", "/api/acls"+tc.query, nil, &list)
		if len(list.ACLs) != len(tc.want) {
			t.Fatalf("GET /api/acls%s: %+v, want %+v", tc.query, list.ACLs, tc.want)
		}
		for i := range tc.want {
			if list.ACLs[i] != tc.want[i] {
				t.Fatalf("GET /api/acls%s: %+v, want %+v", tc.query, list.ACLs, tc.want)
			}
		}
	}

	for _, bad := range []apiACL{
		{"alice", "*", "Allow", "Read", "Topic", "orders", "Literal"},     // no principal type
		{"User:alice", "*", "Allow", "Fly", "Topic", "orders", "Literal"}, // unknown operation
		{"User:alice", "*", "Any", "Read", "Topic", "orders", "Literal"},  // a filter, not a binding
		{"User:alice", "*", "Allow", "Read", "Topic", "orders", "Match"},
		{"User:alice", "*", "Allow", "Read", "Topic", "", "Literal"},
	} {
		if st, msg := api.call("POST", "/api/acls", bad, nil); st != http.StatusBadRequest {
			t.Fatalf("create %+v: %d %s, want 400", bad, st, msg)
		}
	}

	// Delete removes exactly the binding named.
	var del struct{ Deleted int }
	api.must("DELETE", "/api/acls", stored, &del)
	if del.Deleted != 1 {
		t.Fatalf("deleted %d ACLs, want 1", del.Deleted)
	}
	if got := brokerACLs(t, bootstrap); len(got) != 1 || got[0] != prefixed {
		t.Fatalf("broker ACLs after deleting one: %+v", got)
	}
	api.must("DELETE", "/api/acls", stored, &del)
	if del.Deleted != 0 {
		t.Fatalf("deleting again deleted %d", del.Deleted)
	}
}

func containsACL(acls []apiACL, a apiACL) bool {
	for _, b := range acls {
		if a == b {
			return true
		}
	}
	return false
}

// TestACLsAPINoAuthorizer: without an authorizer the page gets Kafka's
// SECURITY_DISABLED, not a crash.
func TestACLsAPINoAuthorizer(t *testing.T) {
	u, _ := startConsole(t)
	api := newPageAPI(t, u)
	st, msg := api.call("GET", "/api/acls", nil, nil)
	if st/100 == 2 || !strings.Contains(msg, "SECURITY_DISABLED") {
		t.Fatalf("GET /api/acls without an authorizer: %d %q", st, msg)
	}
	st, msg = api.call("POST", "/api/acls", apiACL{"User:alice", "*", "Allow", "Read", "Topic", "orders", "Literal"}, nil)
	if st/100 == 2 || !strings.Contains(msg, "SECURITY_DISABLED") {
		t.Fatalf("POST /api/acls without an authorizer: %d %q", st, msg)
	}
}

// TestSecurityAPINotAllowed: a console user without the right gets
// Kafka's authorization error (403) from the ACL, user and quota APIs.
func TestSecurityAPINotAllowed(t *testing.T) {
	u, _ := startConsole(t, aclAuthorizer[0]) // no super user: ANONYMOUS may do nothing
	api := newPageAPI(t, u)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/acls", nil},
		{"POST", "/api/acls", apiACL{"User:alice", "*", "Allow", "Read", "Topic", "orders", "Literal"}},
		{"GET", "/api/users", nil},
		{"POST", "/api/users", map[string]any{"user": "x", "password": "y", "mechanism": "SCRAM-SHA-256"}},
		{"GET", "/api/quotas", nil},
		{"POST", "/api/quotas", map[string]any{"entity": []map[string]any{{"type": "user", "name": "x"}}, "set": map[string]float64{"producer_byte_rate": 1}}},
	} {
		st, msg := api.call(c.method, c.path, c.body, nil)
		if st != http.StatusForbidden || !strings.Contains(msg, "CLUSTER_AUTHORIZATION_FAILED") {
			t.Errorf("%s %s as an unauthorized user: %d %q, want 403 CLUSTER_AUTHORIZATION_FAILED", c.method, c.path, st, msg)
		}
	}
}
