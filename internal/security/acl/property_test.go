package acl

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The reference model: Kafka's rules written out plainly, a brute-force
// pass over every binding, with no index and no early exit. It shares no
// code with the authorizer.

type refModel struct {
	superUsers   []string
	allowIfNoACL bool
	bindings     []Binding
}

// refPrincipalString is how Kafka prints a principal.
func refPrincipalString(p security.Principal) string { return p.Type + ":" + p.Name }

// refPatternMatches: a binding is on a resource when the types are equal and
// it is LITERAL with the same name, LITERAL "*", or PREFIXED with a name the
// resource name starts with.
func refPatternMatches(b Binding, rt kmsg.ACLResourceType, name string) bool {
	if b.ResourceType != rt {
		return false
	}
	if b.PatternType == kmsg.ACLResourcePatternTypeLiteral {
		return b.ResourceName == name || b.ResourceName == "*"
	}
	if b.PatternType == kmsg.ACLResourcePatternTypePrefixed {
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

func refPrincipalMatches(b Binding, p security.Principal) bool {
	return b.Principal == refPrincipalString(p) || b.Principal == "User:*"
}

func refHostMatches(b Binding, host string) bool {
	return b.Host == host || b.Host == "*"
}

// refGrants: an ALLOW grants its operation, ALL grants everything, READ,
// WRITE, DELETE and ALTER grant DESCRIBE, ALTER_CONFIGS grants
// DESCRIBE_CONFIGS.
func refGrants(bindingOp, op kmsg.ACLOperation) bool {
	if bindingOp == op || bindingOp == kmsg.ACLOperationAll {
		return true
	}
	if op == kmsg.ACLOperationDescribe {
		return bindingOp == kmsg.ACLOperationRead || bindingOp == kmsg.ACLOperationWrite ||
			bindingOp == kmsg.ACLOperationDelete || bindingOp == kmsg.ACLOperationAlter
	}
	if op == kmsg.ACLOperationDescribeConfigs {
		return bindingOp == kmsg.ACLOperationAlterConfigs
	}
	return false
}

// refDenies: a DENY denies its operation and, for ALL, everything.
func refDenies(bindingOp, op kmsg.ACLOperation) bool {
	return bindingOp == op || bindingOp == kmsg.ACLOperationAll
}

func (m *refModel) isSuper(p security.Principal) bool {
	for _, s := range m.superUsers {
		if s == refPrincipalString(p) {
			return true
		}
	}
	return false
}

func (m *refModel) authorize(p security.Principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	if m.isSuper(p) {
		return true
	}
	onResource := 0
	denied, allowed := false, false
	for _, b := range m.bindings {
		if !refPatternMatches(b, rt, name) {
			continue
		}
		onResource++
		if !refPrincipalMatches(b, p) || !refHostMatches(b, host) {
			continue
		}
		if b.Permission == kmsg.ACLPermissionTypeDeny && refDenies(b.Operation, op) {
			denied = true
		}
		if b.Permission == kmsg.ACLPermissionTypeAllow && refGrants(b.Operation, op) {
			allowed = true
		}
	}
	if denied {
		return false
	}
	if allowed {
		return true
	}
	if onResource > 0 {
		return false
	}
	return m.allowIfNoACL
}

// refOperations is Kafka's list of operations per resource type, spelled
// out again here.
var refOperations = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite,
		kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite},
	kmsg.ACLResourceTypeDelegationToken: {kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeUser:            {kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens},
}

func (m *refModel) authorizedOperations(p security.Principal, host string, rt kmsg.ACLResourceType, name string) int32 {
	var bits int32
	for _, op := range refOperations[rt] {
		if m.authorize(p, host, op, rt, name) {
			bits |= 1 << int(op)
		}
	}
	return bits
}

// authorizeByResourceType is Kafka's algorithm in words: allowed if a
// resource called "hardcode" is; otherwise look only at the bindings of the
// type for this principal (or User:*), this host (or *) and exactly this
// operation or ALL. A DENY on LITERAL * denies; an ALLOW on LITERAL *
// allows; otherwise some ALLOW must survive: a LITERAL ALLOW dies to a
// LITERAL DENY of the same name, and any ALLOW dies to a PREFIXED DENY its
// name starts with.
func (m *refModel) authorizeByResourceType(p security.Principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	if m.authorize(p, host, op, rt, "hardcode") {
		return true
	}
	var relevant []Binding
	for _, b := range m.bindings {
		if b.ResourceType == rt && refPrincipalMatches(b, p) && refHostMatches(b, host) &&
			(b.Operation == op || b.Operation == kmsg.ACLOperationAll) {
			relevant = append(relevant, b)
		}
	}
	isDeny := func(b Binding) bool { return b.Permission == kmsg.ACLPermissionTypeDeny }
	isLiteral := func(b Binding) bool { return b.PatternType == kmsg.ACLResourcePatternTypeLiteral }
	for _, b := range relevant {
		if isDeny(b) && isLiteral(b) && b.ResourceName == "*" {
			return false
		}
	}
	for _, b := range relevant {
		if !isDeny(b) && isLiteral(b) && b.ResourceName == "*" {
			return true
		}
	}
	for _, a := range relevant {
		if isDeny(a) {
			continue
		}
		survives := true
		for _, d := range relevant {
			if !isDeny(d) {
				continue
			}
			if isLiteral(a) && isLiteral(d) && a.ResourceName == d.ResourceName {
				survives = false
			}
			if !isLiteral(d) && strings.HasPrefix(a.ResourceName, d.ResourceName) {
				survives = false
			}
		}
		if survives {
			return true
		}
	}
	return false
}

// refFilterMatches is Filter.Matches spelled out from Kafka's documentation.
func refFilterMatches(f Filter, b Binding) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != b.ResourceType {
		return false
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != kmsg.ACLOperationAny && f.Operation != b.Operation {
		return false
	}
	if f.Permission != kmsg.ACLPermissionTypeAny && f.Permission != b.Permission {
		return false
	}
	switch f.PatternType {
	case kmsg.ACLResourcePatternTypeAny:
		return f.ResourceName == nil || *f.ResourceName == b.ResourceName
	case kmsg.ACLResourcePatternTypeMatch:
		return f.ResourceName == nil || refPatternMatches(b, b.ResourceType, *f.ResourceName)
	default:
		return f.PatternType == b.PatternType && (f.ResourceName == nil || *f.ResourceName == b.ResourceName)
	}
}

// Small alphabets, so that patterns overlap and requests hit bindings often.
var (
	propTypes      = []kmsg.ACLResourceType{topic, topic, group, cluster, txnID}
	propNames      = []string{"a", "ab", "abc", "b", "ba", "h", "hard", "hardcode", "*", "*a"}
	propRequests   = []string{"a", "ab", "abc", "abd", "b", "ba", "bb", "hardcode", "hardcore", "*", "*a", "x"}
	propPrincipals = []string{"User:alice", "User:bob", "User:*", "Group:alice", "User:a:b"}
	propUsers      = []security.Principal{
		security.User("alice"), security.User("bob"), security.User("carol"),
		{Type: "Group", Name: "alice"}, security.User("a:b"), security.User("root"),
	}
	propFilterNames = []string{"a", "ab", "abc", "b", "h", "hardcode", "*", "*a", "x", ClusterName, "kafka"}
	propHosts       = []string{"*", "*", "10.0.0.1", "10.0.0.2"}
	propReqHosts    = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func randomOperation(r *rand.Rand) kmsg.ACLOperation {
	return kmsg.ACLOperation(2 + r.IntN(13)) // ALL .. DESCRIBE_TOKENS
}

func randomBinding(r *rand.Rand) Binding {
	b := Binding{
		ResourceType: pick(r, propTypes),
		ResourceName: pick(r, propNames),
		PatternType:  literal,
		Principal:    pick(r, propPrincipals),
		Host:         pick(r, propHosts),
		Operation:    randomOperation(r),
		Permission:   allow,
	}
	if r.IntN(3) == 0 {
		b.PatternType = prefixed
	}
	if r.IntN(3) == 0 {
		b.Permission = deny
	}
	if b.ResourceType == cluster {
		b.ResourceName = ClusterName // the only valid name, LITERAL or PREFIXED
	}
	return b
}

func randomFilter(r *rand.Rand) Filter {
	f := MatchAll
	if r.IntN(2) == 0 {
		f.ResourceType = pick(r, propTypes)
	}
	f.PatternType = pick(r, []kmsg.ACLResourcePatternType{anyPat, matchPat, literal, prefixed})
	if r.IntN(3) != 0 {
		f.ResourceName = ptr(pick(r, propFilterNames))
	}
	if r.IntN(3) == 0 {
		f.Principal = ptr(pick(r, propPrincipals))
	}
	if r.IntN(3) == 0 {
		f.Host = ptr(pick(r, propHosts))
	}
	if r.IntN(3) == 0 {
		f.Operation = randomOperation(r)
	}
	if r.IntN(3) == 0 {
		f.Permission = pick(r, []kmsg.ACLPermissionType{allow, deny})
	}
	return f
}

// TestAuthorizerAgainstReferenceModel checks Authorize,
// AuthorizedOperations, AuthorizeByResourceType and Bindings against the
// reference model on thousands of random binding sets and requests.
func TestAuthorizerAgainstReferenceModel(t *testing.T) {
	r := rand.New(rand.NewPCG(20240611, 430))
	const sets, requestsPerSet = 3000, 25
	checked, allowedCount := 0, 0
	for set := range sets {
		m := &refModel{allowIfNoACL: r.IntN(2) == 0}
		if r.IntN(4) == 0 {
			m.superUsers = []string{"User:root"}
		}
		for range r.IntN(14) {
			m.bindings = append(m.bindings, randomBinding(r))
		}
		a := newAuthorizer(t, Config{SuperUsers: m.superUsers, AllowEveryoneIfNoACLFound: m.allowIfNoACL}, m.bindings...)

		for range requestsPerSet {
			p := pick(r, propUsers)
			host := pick(r, propReqHosts)
			rt := pick(r, propTypes)
			name := pick(r, propRequests)
			if rt == cluster {
				name = ClusterName
			}
			op := randomOperation(r)

			want := m.authorize(p, host, op, rt, name)
			if got := a.Authorize(p, host, op, rt, name); got != want {
				t.Fatalf("set %d: Authorize(%v, %s, %v, %v, %q) = %v, reference %v\nallowIfNoACL=%v super=%v bindings:\n%s",
					set, p, host, op, rt, name, got, want, m.allowIfNoACL, m.superUsers, formatBindings(m.bindings))
			}
			if want {
				allowedCount++
			}
			if got, want := a.AuthorizedOperations(p, host, rt, name), m.authorizedOperations(p, host, rt, name); got != want {
				t.Fatalf("set %d: AuthorizedOperations(%v, %s, %v, %q) = %#x, reference %#x\nbindings:\n%s",
					set, p, host, rt, name, got, want, formatBindings(m.bindings))
			}
			if got, want := a.AuthorizeByResourceType(p, host, op, rt), m.authorizeByResourceType(p, host, op, rt); got != want {
				t.Fatalf("set %d: AuthorizeByResourceType(%v, %s, %v, %v) = %v, reference %v\nallowIfNoACL=%v super=%v bindings:\n%s",
					set, p, host, op, rt, got, want, m.allowIfNoACL, m.superUsers, formatBindings(m.bindings))
			}
			checked++
		}

		f := randomFilter(r)
		got := a.Bindings(f)
		var want []Binding
		for _, b := range m.bindings {
			if refFilterMatches(f, b) {
				want = append(want, b)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("set %d: Bindings(%s) = %d bindings, reference %d\ngot %+v\nwant %+v", set, formatFilter(f), len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("set %d: Bindings(%s)[%d] = %+v, reference %+v", set, formatFilter(f), i, got[i], want[i])
			}
		}
	}
	// The alphabets are meant to make both answers common; a generator
	// change that made one of them rare would make this test weak.
	if allowedCount < checked/10 || allowedCount > checked*9/10 {
		t.Errorf("%d of %d requests allowed: the generator no longer exercises both answers", allowedCount, checked)
	}
}

func formatBindings(bs []Binding) string {
	var sb strings.Builder
	for _, b := range bs {
		sb.WriteString("  ")
		sb.WriteString(b.ResourceType.String() + " " + b.PatternType.String() + " " + b.ResourceName + " " +
			b.Principal + " " + b.Host + " " + b.Operation.String() + " " + b.Permission.String() + "\n")
	}
	return sb.String()
}

func formatFilter(f Filter) string {
	str := func(s *string) string {
		if s == nil {
			return "<any>"
		}
		return *s
	}
	return f.ResourceType.String() + " " + f.PatternType.String() + " " + str(f.ResourceName) + " " +
		str(f.Principal) + " " + str(f.Host) + " " + f.Operation.String() + " " + f.Permission.String()
}
