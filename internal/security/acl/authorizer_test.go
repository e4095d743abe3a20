package acl

import (
	"strings"
	"sync"
	"testing"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authzCase is one Authorize question. Unless a case says otherwise, the
// request is alice from aliceHost and allow.everyone.if.no.acl.found is off.
type authzCase struct {
	name      string
	cfg       Config
	bindings  []Binding
	principal *security.Principal
	host      string
	op        kmsg.ACLOperation
	rt        kmsg.ACLResourceType
	resource  string
	want      bool
}

func runAuthzCases(t *testing.T, cases []authzCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t, c.cfg, c.bindings...)
			p := alice
			if c.principal != nil {
				p = *c.principal
			}
			host := c.host
			if host == "" {
				host = aliceHost
			}
			if got := a.Authorize(p, host, c.op, c.rt, c.resource); got != c.want {
				t.Errorf("Authorize(%v, %s, %v, %v, %q) = %v, want %v; bindings %+v",
					p, host, c.op, c.rt, c.resource, got, c.want, c.bindings)
			}
		})
	}
}

func principalPtr(p security.Principal) *security.Principal { return &p }

func TestAuthorizeSuperUsers(t *testing.T) {
	supers := Config{SuperUsers: []string{"User:admin", " User:root ", ""}}
	admin := security.User("admin")
	runAuthzCases(t, []authzCase{
		{name: "super user without bindings", cfg: supers, principal: &admin,
			op: opAlter, rt: cluster, resource: ClusterName, want: true},
		{name: "super user despite DENY ALL on the resource", cfg: supers, principal: &admin,
			bindings: []Binding{withPrincipal(refuse(topic, literal, "t", opAll), "User:admin")},
			op:       opRead, rt: topic, resource: "t", want: true},
		{name: "super user despite wildcard DENY for everyone", cfg: supers, principal: &admin,
			bindings: []Binding{withPrincipal(refuse(topic, literal, "*", opAll), "User:*")},
			op:       opWrite, rt: topic, resource: "t", want: true},
		{name: "entries are trimmed", cfg: supers, principal: principalPtr(security.User("root")),
			op: opDelete, rt: group, resource: "g", want: true},
		{name: "type is part of the name", cfg: supers,
			principal: principalPtr(security.Principal{Type: "Group", Name: "admin"}),
			op:        opRead, rt: topic, resource: "t", want: false},
		{name: "names are case sensitive", cfg: supers, principal: principalPtr(security.User("Admin")),
			op: opRead, rt: topic, resource: "t", want: false},
		{name: "other users follow the bindings", cfg: supers,
			op: opRead, rt: topic, resource: "t", want: false},
	})
}

func TestNewRefusesMalformedSuperUser(t *testing.T) {
	for _, su := range []string{"admin", "User-admin"} {
		if _, err := New(Config{SuperUsers: []string{"User:ok", su}}); err == nil {
			t.Errorf("New with super user %q: no error", su)
		} else if !strings.Contains(err.Error(), su) {
			t.Errorf("New with super user %q: error %q does not name it", su, err)
		}
	}
	// Kafka only needs the colon.
	for _, su := range []string{"User:", ":x", "User:a:b"} {
		if _, err := New(Config{SuperUsers: []string{su}}); err != nil {
			t.Errorf("New with super user %q: %v", su, err)
		}
	}
	a := newAuthorizer(t, Config{SuperUsers: []string{"User:a:b"}})
	if !a.IsSuperUser(security.User("a:b")) {
		t.Error("User:a:b is not super user User:a:b")
	}
}

func TestAuthorizeResourceMatching(t *testing.T) {
	runAuthzCases(t, []authzCase{
		{name: "literal with the same name",
			bindings: []Binding{grant(topic, literal, "orders", opRead)},
			op:       opRead, rt: topic, resource: "orders", want: true},
		{name: "literal with another name is no ACL",
			bindings: []Binding{grant(topic, literal, "orders", opRead)},
			cfg:      Config{AllowEveryoneIfNoACLFound: true},
			op:       opWrite, rt: topic, resource: "payments", want: true},
		{name: "literal that is a prefix does not match",
			bindings: []Binding{grant(topic, literal, "ord", opRead)},
			op:       opRead, rt: topic, resource: "orders", want: false},
		{name: "literal wildcard matches every name",
			bindings: []Binding{grant(topic, literal, "*", opRead)},
			op:       opRead, rt: topic, resource: "anything", want: true},
		{name: "literal wildcard matches the name *",
			bindings: []Binding{grant(topic, literal, "*", opRead)},
			op:       opRead, rt: topic, resource: "*", want: true},
		{name: "literal wildcard does not cross resource types",
			bindings: []Binding{grant(topic, literal, "*", opRead)},
			op:       opRead, rt: group, resource: "g", want: false},
		{name: "prefixed matches a longer name",
			bindings: []Binding{grant(topic, prefixed, "ord", opRead)},
			op:       opRead, rt: topic, resource: "orders", want: true},
		{name: "prefixed matches the same name",
			bindings: []Binding{grant(topic, prefixed, "orders", opRead)},
			op:       opRead, rt: topic, resource: "orders", want: true},
		{name: "prefixed longer than the name does not match",
			bindings: []Binding{grant(topic, prefixed, "orders-eu", opRead)},
			cfg:      Config{AllowEveryoneIfNoACLFound: true},
			op:       opWrite, rt: topic, resource: "orders", want: true},
		{name: "prefixed with another start does not match",
			bindings: []Binding{grant(topic, prefixed, "pay", opRead)},
			op:       opRead, rt: topic, resource: "orders", want: false},
		{name: "prefixed * is an ordinary prefix: matches *x",
			bindings: []Binding{grant(topic, prefixed, "*", opRead)},
			op:       opRead, rt: topic, resource: "*x", want: true},
		{name: "prefixed * is an ordinary prefix: not x",
			bindings: []Binding{grant(topic, prefixed, "*", opRead)},
			op:       opRead, rt: topic, resource: "x", want: false},
		{name: "same name on another type is no ACL",
			bindings: []Binding{refuse(group, literal, "orders", opAll)},
			cfg:      Config{AllowEveryoneIfNoACLFound: true},
			op:       opRead, rt: topic, resource: "orders", want: true},
		{name: "several prefixes, the shortest allows",
			bindings: []Binding{grant(topic, prefixed, "o", opRead), withPrincipal(grant(topic, prefixed, "orders-", opRead), "User:bob")},
			op:       opRead, rt: topic, resource: "orders-eu", want: true},
		{name: "several prefixes, the longest allows",
			bindings: []Binding{withPrincipal(grant(topic, prefixed, "o", opRead), "User:bob"), grant(topic, prefixed, "orders-", opRead)},
			op:       opRead, rt: topic, resource: "orders-eu", want: true},
		{name: "cluster",
			bindings: []Binding{grant(cluster, literal, ClusterName, opIdempotentWrite)},
			op:       opIdempotentWrite, rt: cluster, resource: ClusterName, want: true},
		{name: "transactional id prefix",
			bindings: []Binding{grant(txnID, prefixed, "app-", opWrite)},
			op:       opWrite, rt: txnID, resource: "app-1", want: true},
		{name: "resource type ANY is never bound",
			bindings: []Binding{grant(topic, literal, "*", opAll)},
			op:       opRead, rt: anyType, resource: "t", want: false},
	})
}

func TestAuthorizePrincipalAndHost(t *testing.T) {
	groupAlice := security.Principal{Type: "Group", Name: "alice"}
	runAuthzCases(t, []authzCase{
		{name: "other principal does not match",
			bindings:  []Binding{grant(topic, literal, "t", opRead)},
			principal: &bob, op: opRead, rt: topic, resource: "t", want: false},
		{name: "User:* matches every user",
			bindings:  []Binding{withPrincipal(grant(topic, literal, "t", opRead), "User:*")},
			principal: &bob, op: opRead, rt: topic, resource: "t", want: true},
		{name: "User:* matches principals of other types too",
			bindings:  []Binding{withPrincipal(grant(topic, literal, "t", opRead), "User:*")},
			principal: &groupAlice, op: opRead, rt: topic, resource: "t", want: true},
		{name: "Group:* is not a wildcard",
			bindings:  []Binding{withPrincipal(grant(topic, literal, "t", opRead), "Group:*")},
			principal: &groupAlice, op: opRead, rt: topic, resource: "t", want: false},
		{name: "principal type must match",
			bindings: []Binding{withPrincipal(grant(topic, literal, "t", opRead), "Group:alice")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "principal type is case sensitive",
			bindings: []Binding{withPrincipal(grant(topic, literal, "t", opRead), "user:alice")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "principal name may hold a colon",
			bindings:  []Binding{withPrincipal(grant(topic, literal, "t", opRead), "User:CN=a:b")},
			principal: principalPtr(security.User("CN=a:b")), op: opRead, rt: topic, resource: "t", want: true},
		{name: "exact host",
			bindings: []Binding{withHost(grant(topic, literal, "t", opRead), aliceHost)},
			op:       opRead, rt: topic, resource: "t", want: true},
		{name: "wildcard host",
			bindings: []Binding{withHost(grant(topic, literal, "t", opRead), "*")},
			host:     "192.168.1.9", op: opRead, rt: topic, resource: "t", want: true},
		{name: "other host does not match",
			bindings: []Binding{withHost(grant(topic, literal, "t", opRead), "10.0.0.2")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "DENY from another host does not apply",
			bindings: []Binding{grant(topic, literal, "t", opRead), withHost(refuse(topic, literal, "t", opRead), "10.0.0.2")},
			op:       opRead, rt: topic, resource: "t", want: true},
		{name: "DENY for another principal does not apply",
			bindings: []Binding{grant(topic, literal, "t", opRead), withPrincipal(refuse(topic, literal, "t", opRead), "User:bob")},
			op:       opRead, rt: topic, resource: "t", want: true},
	})
}

func TestAuthorizeDenyWins(t *testing.T) {
	runAuthzCases(t, []authzCase{
		{name: "DENY beats ALLOW on the same pattern",
			bindings: []Binding{grant(topic, literal, "t", opRead), refuse(topic, literal, "t", opRead)},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "DENY given first beats ALLOW",
			bindings: []Binding{refuse(topic, literal, "t", opRead), grant(topic, literal, "t", opRead)},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "prefixed DENY beats literal ALLOW",
			bindings: []Binding{grant(topic, literal, "orders", opWrite), refuse(topic, prefixed, "ord", opWrite)},
			op:       opWrite, rt: topic, resource: "orders", want: false},
		{name: "wildcard DENY beats literal ALLOW",
			bindings: []Binding{grant(topic, literal, "orders", opWrite), refuse(topic, literal, "*", opWrite)},
			op:       opWrite, rt: topic, resource: "orders", want: false},
		{name: "User:* DENY beats a personal ALLOW",
			bindings: []Binding{grant(topic, literal, "t", opRead), withPrincipal(refuse(topic, literal, "t", opRead), "User:*")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "DENY ALL denies READ",
			bindings: []Binding{grant(topic, literal, "t", opRead), refuse(topic, literal, "t", opAll)},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "DENY READ does not deny WRITE",
			bindings: []Binding{grant(topic, literal, "t", opAll), refuse(topic, literal, "t", opRead)},
			op:       opWrite, rt: topic, resource: "t", want: true},
		{name: "DENY READ does not deny the implied DESCRIBE",
			bindings: []Binding{grant(topic, literal, "t", opRead), refuse(topic, literal, "t", opRead)},
			op:       opDescribe, rt: topic, resource: "t", want: true},
		{name: "DENY DESCRIBE denies DESCRIBE implied by READ",
			bindings: []Binding{grant(topic, literal, "t", opRead), refuse(topic, literal, "t", opDescribe)},
			op:       opDescribe, rt: topic, resource: "t", want: false},
		{name: "DENY ALTER_CONFIGS does not deny DESCRIBE_CONFIGS",
			bindings: []Binding{grant(topic, literal, "t", opAll), refuse(topic, literal, "t", opAlterConfigs)},
			op:       opDescribeConfigs, rt: topic, resource: "t", want: true},
		{name: "DENY on another prefix does not apply",
			bindings: []Binding{grant(topic, literal, "orders", opWrite), refuse(topic, prefixed, "pay", opWrite)},
			op:       opWrite, rt: topic, resource: "orders", want: true},
	})
}

func TestAuthorizeImpliedOperations(t *testing.T) {
	type imp struct {
		granted, requested kmsg.ACLOperation
		want               bool
	}
	for _, c := range []imp{
		{opRead, opDescribe, true},
		{opWrite, opDescribe, true},
		{opDelete, opDescribe, true},
		{opAlter, opDescribe, true},
		{opDescribe, opDescribe, true},
		{opCreate, opDescribe, false},
		{opDescribeConfigs, opDescribe, false},
		{opAlterConfigs, opDescribe, false},
		{opAlterConfigs, opDescribeConfigs, true},
		{opAlter, opDescribeConfigs, false},
		{opRead, opDescribeConfigs, false},
		{opDescribeConfigs, opAlterConfigs, false},
		{opDescribe, opRead, false},
		{opRead, opWrite, false},
		{opWrite, opRead, false},
		{opAll, opRead, true},
		{opAll, opDescribe, true},
		{opAll, opClusterAction, true},
		{opAll, opDescribeTokens, true},
		{opCreateTokens, opDescribeTokens, false},
		{opIdempotentWrite, opWrite, false},
	} {
		a := newAuthorizer(t, Config{}, grant(topic, literal, "t", c.granted))
		if got := a.Authorize(alice, aliceHost, c.requested, topic, "t"); got != c.want {
			t.Errorf("ALLOW %v, request %v: got %v, want %v", c.granted, c.requested, got, c.want)
		}
	}
}

func TestAuthorizeNoACLFound(t *testing.T) {
	everyone := Config{AllowEveryoneIfNoACLFound: true}
	runAuthzCases(t, []authzCase{
		{name: "no bindings, default deny",
			op: opRead, rt: topic, resource: "t", want: false},
		{name: "no bindings, allow everyone",
			cfg: everyone, op: opRead, rt: topic, resource: "t", want: true},
		{name: "bindings on other resources only",
			cfg:      everyone,
			bindings: []Binding{refuse(topic, literal, "u", opAll), refuse(topic, prefixed, "tt", opAll), refuse(group, literal, "t", opAll)},
			op:       opRead, rt: topic, resource: "t", want: true},
		{name: "a binding for another principal is an ACL",
			cfg:      everyone,
			bindings: []Binding{withPrincipal(grant(topic, literal, "t", opRead), "User:bob")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "a binding for another host is an ACL",
			cfg:      everyone,
			bindings: []Binding{withHost(grant(topic, literal, "t", opRead), "10.9.9.9")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "a binding for another operation is an ACL",
			cfg:      everyone,
			bindings: []Binding{grant(topic, literal, "t", opWrite)},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "a wildcard binding for someone else is an ACL on every name",
			cfg:      everyone,
			bindings: []Binding{withPrincipal(grant(topic, literal, "*", opWrite), "User:bob")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "a matching prefix for someone else is an ACL",
			cfg:      everyone,
			bindings: []Binding{withPrincipal(grant(topic, prefixed, "t", opWrite), "User:bob")},
			op:       opRead, rt: topic, resource: "t", want: false},
		{name: "an invalid binding is dropped and is no ACL",
			cfg:      everyone,
			bindings: []Binding{withPrincipal(refuse(topic, literal, "t", opAll), "bob")},
			op:       opRead, rt: topic, resource: "t", want: true},
	})
}

func TestSetBindingsReplacesTheSet(t *testing.T) {
	a := newAuthorizer(t, Config{}, grant(topic, literal, "t", opRead))
	if !a.Authorize(alice, aliceHost, opRead, topic, "t") {
		t.Fatal("first set: READ denied")
	}
	a.SetBindings([]Binding{grant(topic, literal, "u", opRead)})
	if a.Authorize(alice, aliceHost, opRead, topic, "t") {
		t.Error("second set: READ on t still allowed")
	}
	if !a.Authorize(alice, aliceHost, opRead, topic, "u") {
		t.Error("second set: READ on u denied")
	}
	a.SetBindings(nil)
	if a.Authorize(alice, aliceHost, opRead, topic, "u") {
		t.Error("empty set: READ on u still allowed")
	}
}

func TestSetBindingsDoesNotRetainTheSlice(t *testing.T) {
	bs := []Binding{grant(topic, literal, "t", opRead)}
	a := newAuthorizer(t, Config{}, bs...)
	bs[0].ResourceName = "u"
	if !a.Authorize(alice, aliceHost, opRead, topic, "t") {
		t.Error("changing the caller's slice changed the authorizer")
	}
}

func TestBindingsDropsInvalidAndFilters(t *testing.T) {
	valid := []Binding{
		grant(topic, literal, "t", opRead),
		refuse(group, prefixed, "g", opAll),
		grant(cluster, literal, ClusterName, opAlter),
	}
	invalid := []Binding{
		grant(anyType, literal, "t", opRead),
		grant(topic, matchPat, "t", opRead),
		grant(topic, literal, "t", opAny),
		grant(topic, literal, "", opRead),
		grant(cluster, literal, "c", opRead),
		withPrincipal(grant(topic, literal, "t", opRead), "alice"),
	}
	a := newAuthorizer(t, Config{}, append(append([]Binding{}, invalid[:3]...), append(valid, invalid[3:]...)...)...)
	got := a.Bindings(MatchAll)
	if len(got) != len(valid) {
		t.Fatalf("Bindings(MatchAll) = %+v, want %+v", got, valid)
	}
	for i := range valid {
		if got[i] != valid[i] {
			t.Errorf("Bindings(MatchAll)[%d] = %+v, want %+v", i, got[i], valid[i])
		}
	}
	groups := a.Bindings(Filter{ResourceType: group, PatternType: anyPat, Operation: opAny, Permission: anyPerm})
	if len(groups) != 1 || groups[0] != valid[1] {
		t.Errorf("Bindings(groups) = %+v, want [%+v]", groups, valid[1])
	}
}

func TestAuthorizedOperations(t *testing.T) {
	bit := func(ops ...kmsg.ACLOperation) int32 {
		var v int32
		for _, op := range ops {
			v |= 1 << op
		}
		return v
	}
	allTopic := bit(opRead, opWrite, opCreate, opDelete, opAlter, opDescribe, opDescribeConfigs, opAlterConfigs)
	allGroup := bit(opRead, opDelete, opDescribe, opDescribeConfigs, opAlterConfigs)
	allCluster := bit(opCreate, opAlter, opDescribe, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite)
	cases := []struct {
		name     string
		cfg      Config
		bindings []Binding
		p        security.Principal
		rt       kmsg.ACLResourceType
		resource string
		want     int32
	}{
		{name: "READ implies DESCRIBE", bindings: []Binding{grant(topic, literal, "t", opRead)},
			p: alice, rt: topic, resource: "t", want: bit(opRead, opDescribe)},
		{name: "ALTER_CONFIGS implies DESCRIBE_CONFIGS", bindings: []Binding{grant(topic, prefixed, "t", opAlterConfigs)},
			p: alice, rt: topic, resource: "t1", want: bit(opAlterConfigs, opDescribeConfigs)},
		{name: "ALL on a topic", bindings: []Binding{grant(topic, literal, "*", opAll)},
			p: alice, rt: topic, resource: "t", want: allTopic},
		{name: "ALL on a transactional id is WRITE and DESCRIBE", bindings: []Binding{grant(txnID, literal, "x", opAll)},
			p: alice, rt: txnID, resource: "x", want: bit(opWrite, opDescribe)},
		{name: "ALL on a delegation token is DESCRIBE", bindings: []Binding{grant(token, literal, "x", opAll)},
			p: alice, rt: token, resource: "x", want: bit(opDescribe)},
		{name: "ALL on a user is the token operations", bindings: []Binding{grant(user, literal, "x", opAll)},
			p: alice, rt: user, resource: "x", want: bit(opCreateTokens, opDescribeTokens)},
		{name: "WRITE is not a group operation but implies DESCRIBE", bindings: []Binding{grant(group, literal, "g", opWrite)},
			p: alice, rt: group, resource: "g", want: bit(opDescribe)},
		{name: "operations outside the type's list are not reported", bindings: []Binding{grant(group, literal, "g", opCreate)},
			p: alice, rt: group, resource: "g", want: 0},
		{name: "super user gets the type's full list", cfg: Config{SuperUsers: []string{"User:alice"}},
			p: alice, rt: cluster, resource: ClusterName, want: allCluster},
		{name: "no ACL and allow everyone", cfg: Config{AllowEveryoneIfNoACLFound: true},
			p: alice, rt: group, resource: "g", want: allGroup},
		{name: "no ACL, default deny", p: alice, rt: group, resource: "g", want: 0},
		{name: "DENY takes bits away",
			bindings: []Binding{grant(topic, literal, "t", opAll), refuse(topic, literal, "t", opWrite), refuse(topic, literal, "t", opDescribe)},
			p:        alice, rt: topic, resource: "t", want: allTopic &^ bit(opWrite, opDescribe)},
		{name: "resource type ANY", cfg: Config{SuperUsers: []string{"User:alice"}},
			p: alice, rt: anyType, resource: "t", want: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t, c.cfg, c.bindings...)
			if got := a.AuthorizedOperations(c.p, aliceHost, c.rt, c.resource); got != c.want {
				t.Errorf("AuthorizedOperations = %#x, want %#x", got, c.want)
			}
		})
	}
}

func TestAuthorizeByResourceType(t *testing.T) {
	cases := []struct {
		name     string
		cfg      Config
		bindings []Binding
		p        security.Principal
		op       kmsg.ACLOperation
		rt       kmsg.ACLResourceType
		want     bool
	}{
		{name: "no bindings, default deny", p: alice, op: opWrite, rt: topic, want: false},
		{name: "no bindings, allow everyone", cfg: Config{AllowEveryoneIfNoACLFound: true},
			p: alice, op: opWrite, rt: topic, want: true},
		{name: "allow everyone, bindings elsewhere: hardcode has none", cfg: Config{AllowEveryoneIfNoACLFound: true},
			bindings: []Binding{refuse(topic, literal, "t", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "super user", cfg: Config{SuperUsers: []string{"User:alice"}},
			bindings: []Binding{refuse(topic, literal, "*", opAll)},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "a literal ALLOW", bindings: []Binding{grant(topic, literal, "t", opWrite)},
			p: alice, op: opWrite, rt: topic, want: true},
		{name: "a literal ALLOW cancelled by a literal DENY",
			bindings: []Binding{grant(topic, literal, "t", opWrite), refuse(topic, literal, "t", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "a literal ALLOW cancelled by a prefixed DENY",
			bindings: []Binding{grant(topic, literal, "tx", opWrite), refuse(topic, prefixed, "t", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "a literal DENY does not cancel a prefixed ALLOW",
			bindings: []Binding{grant(topic, prefixed, "t", opWrite), refuse(topic, literal, "t", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "a prefixed ALLOW cancelled by a shorter prefixed DENY",
			bindings: []Binding{grant(topic, prefixed, "tx", opWrite), refuse(topic, prefixed, "t", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "a prefixed ALLOW survives a longer prefixed DENY",
			bindings: []Binding{grant(topic, prefixed, "t", opWrite), refuse(topic, prefixed, "tx", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "one surviving ALLOW is enough",
			bindings: []Binding{grant(topic, literal, "a", opWrite), refuse(topic, literal, "a", opWrite), grant(topic, literal, "b", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "a wildcard ALLOW", bindings: []Binding{grant(topic, literal, "*", opWrite), refuse(topic, prefixed, "h", opWrite)},
			p: alice, op: opWrite, rt: topic, want: true},
		{name: "a wildcard DENY denies",
			bindings: []Binding{grant(topic, literal, "t", opWrite), refuse(topic, literal, "*", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "a wildcard DENY beats a wildcard ALLOW",
			bindings: []Binding{grant(topic, literal, "*", opWrite), refuse(topic, literal, "*", opWrite)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "ALLOW ALL counts", bindings: []Binding{grant(topic, literal, "t", opAll)},
			p: alice, op: opWrite, rt: topic, want: true},
		{name: "DENY ALL counts",
			bindings: []Binding{grant(topic, literal, "t", opWrite), refuse(topic, literal, "t", opAll)},
			p:        alice, op: opWrite, rt: topic, want: false},
		{name: "another operation does not count", bindings: []Binding{grant(topic, literal, "t", opRead)},
			p: alice, op: opWrite, rt: topic, want: false},
		{name: "no implied operations", bindings: []Binding{grant(topic, literal, "t", opRead)},
			p: alice, op: opDescribe, rt: topic, want: false},
		{name: "another type does not count", bindings: []Binding{grant(group, literal, "t", opWrite)},
			p: alice, op: opWrite, rt: topic, want: false},
		{name: "another principal does not count", bindings: []Binding{grant(topic, literal, "t", opWrite)},
			p: bob, op: opWrite, rt: topic, want: false},
		{name: "User:* counts", bindings: []Binding{withPrincipal(grant(topic, literal, "t", opWrite), "User:*")},
			p: bob, op: opWrite, rt: topic, want: true},
		{name: "another host does not count", bindings: []Binding{withHost(grant(topic, literal, "t", opWrite), "10.9.9.9")},
			p: alice, op: opWrite, rt: topic, want: false},
		{name: "a DENY for another principal does not cancel",
			bindings: []Binding{grant(topic, literal, "t", opWrite), withPrincipal(refuse(topic, prefixed, "t", opWrite), "User:bob")},
			p:        alice, op: opWrite, rt: topic, want: true},
		{name: "an ALLOW on the name hardcode via implication", bindings: []Binding{grant(topic, prefixed, "hard", opRead)},
			p: alice, op: opDescribe, rt: topic, want: true},
		{name: "resource type ANY", cfg: Config{SuperUsers: []string{"User:alice"}},
			p: alice, op: opWrite, rt: anyType, want: false},
		{name: "operation ANY", cfg: Config{SuperUsers: []string{"User:alice"}},
			p: alice, op: opAny, rt: topic, want: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t, c.cfg, c.bindings...)
			if got := a.AuthorizeByResourceType(c.p, aliceHost, c.op, c.rt); got != c.want {
				t.Errorf("AuthorizeByResourceType(%v, %v, %v) = %v, want %v", c.p, c.op, c.rt, got, c.want)
			}
		})
	}
}

// TestConcurrentSetBindings runs decisions while the set is swapped back
// and forth: every answer must be the one of the first or of the second set
// (never a mix), and the race detector must stay quiet.
func TestConcurrentSetBindings(t *testing.T) {
	setA := []Binding{grant(topic, literal, "t", opRead), refuse(topic, prefixed, "u", opAll)}
	setB := []Binding{refuse(topic, literal, "t", opRead), grant(topic, prefixed, "u", opAll)}
	a := newAuthorizer(t, Config{}, setA...)

	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			for range 2000 {
				// One AuthorizedOperations call is eight decisions over
				// one snapshot: set A gives READ|DESCRIBE, set B nothing.
				ops := a.AuthorizedOperations(alice, aliceHost, topic, "t")
				if ops != 1<<opRead|1<<opDescribe && ops != 0 {
					select {
					case errs <- "mixed snapshot":
					default:
					}
					return
				}
			}
		})
	}
	for i := range 500 {
		if i%2 == 0 {
			a.SetBindings(setB)
		} else {
			a.SetBindings(setA)
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
