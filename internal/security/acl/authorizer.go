package acl

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config is the authorizer's part of server.properties.
type Config struct {
	// SuperUsers are the super.users entries, already split on ';'
	// ("User:admin"). Entries are trimmed; empty ones are skipped.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found: the
	// answer for a resource that no binding matches (default false).
	AllowEveryoneIfNoACLFound bool
}

// Authorizer decides requests against super.users and the current ACL set.
// It is safe for concurrent use: Authorize, AuthorizedOperations,
// AuthorizeByResourceType and Bindings read an immutable snapshot that
// SetBindings replaces atomically, so a decision sees either the old set or
// the new one, never a mix. A new Authorizer has no bindings.
type Authorizer struct {
	superUsers    []string // "Type:Name", compared with the principal's string form
	allowIfNoACLs bool
	snap          atomic.Pointer[snapshot]
}

// New returns an Authorizer for cfg. It fails, as Kafka does at startup,
// when a super.users entry has no ':' between principal type and name.
func New(cfg Config) (*Authorizer, error) {
	a := &Authorizer{allowIfNoACLs: cfg.AllowEveryoneIfNoACLFound}
	for _, s := range cfg.SuperUsers {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, ":") {
			return nil, fmt.Errorf("super.users: expected a string in format principalType:principalName but got %q", s)
		}
		a.superUsers = append(a.superUsers, s)
	}
	a.snap.Store(buildSnapshot(nil))
	return a, nil
}

// SetBindings replaces the whole ACL set with bs, as read from the metadata
// image. Bindings that ValidateBinding refuses are dropped (they cannot be
// created through Kafka's API): they neither match nor count as ACLs on a
// resource, and Bindings does not return them. bs is not retained.
// Callers serialise SetBindings (the image's apply goroutine); decisions
// running meanwhile finish on the set they started with.
func (a *Authorizer) SetBindings(bs []Binding) {
	a.snap.Store(buildSnapshot(bs))
}

// Bindings returns the current bindings that f matches, in the order
// SetBindings received them (DescribeAcls). The slice is the caller's.
func (a *Authorizer) Bindings(f Filter) []Binding {
	var out []Binding
	for _, b := range a.snap.Load().bindings {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}

// IsSuperUser reports whether p is named in super.users.
func (a *Authorizer) IsSuperUser(p security.Principal) bool {
	for _, s := range a.superUsers {
		if principalIs(s, p) {
			return true
		}
	}
	return false
}

// principalIs reports whether s == p.String() without building the string.
func principalIs(s string, p security.Principal) bool {
	return len(s) == len(p.Type)+1+len(p.Name) &&
		s[len(p.Type)] == ':' &&
		s[:len(p.Type)] == p.Type &&
		s[len(p.Type)+1:] == p.Name
}

// Authorize reports whether principal p, connected from host, may perform op
// on the resource of type rt called name (a literal name: a topic, a group
// id, "kafka-cluster", ...). host is the client's IP address as Kafka
// prints it (see HostString). It allocates nothing and never blocks.
func (a *Authorizer) Authorize(p security.Principal, host string, op kmsg.ACLOperation,
	rt kmsg.ACLResourceType, name string) bool {
	if a.IsSuperUser(p) {
		return true
	}
	return a.snap.Load().authorize(p, host, op, rt, name, a.allowIfNoACLs)
}

// AuthorizedOperations is the KIP-430 bitfield for a resource: bit i is set
// when p may perform the operation with code i. Only the operations Kafka
// defines for rt are considered (SupportedOperations). It is 0 for a
// resource type that is not concrete. The handler substitutes Kafka's
// "not requested" value (math.MinInt32) itself.
func (a *Authorizer) AuthorizedOperations(p security.Principal, host string,
	rt kmsg.ACLResourceType, name string) int32 {
	ops := supportedOperations[rt]
	super := a.IsSuperUser(p)
	s := a.snap.Load()
	var bits int32
	for _, op := range ops {
		if super || s.authorize(p, host, op, rt, name, a.allowIfNoACLs) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

// hardcodedResource is the name Kafka's authorizeByResourceType first
// authorizes, so that super users, wildcard bindings and
// allow.everyone.if.no.acl.found answer as they would for a real resource.
const hardcodedResource = "hardcode"

// AuthorizeByResourceType is Kafka's Authorizer.authorizeByResourceType
// (KIP-679): whether p may perform op on at least one resource of type rt.
// InitProducerId without a transactional id uses it (WRITE on any TOPIC)
// when p lacks IDEMPOTENT_WRITE on the cluster. It is false when rt or op
// is not concrete (Kafka throws there). As in Kafka:
//
//   - it is true when Authorize allows op on a resource called "hardcode"
//     (super users; wildcard, "h"-prefix or "hardcode" bindings;
//     allow.everyone.if.no.acl.found when nothing matches that name);
//   - otherwise, among the bindings of type rt for p (or "User:*") and host
//     (or "*") with operation op or ALL, and no implied operations: a DENY
//     on LITERAL "*" denies; an ALLOW on LITERAL "*" allows; otherwise it is
//     true when some ALLOW's name is neither denied by a LITERAL DENY of the
//     same name (for a LITERAL ALLOW) nor starts with the name of a PREFIXED
//     DENY.
func (a *Authorizer) AuthorizeByResourceType(p security.Principal, host string,
	op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	if !concreteResourceType(rt) || !concreteOperation(op) {
		return false
	}
	if a.Authorize(p, host, op, rt, hardcodedResource) {
		return true
	}
	idx := a.snap.Load().resources(rt)
	if idx == nil {
		return false
	}
	var (
		allowLiteral, allowPrefixed []string
		denyLiteral                 = map[string]bool{}
		denyPrefixed                []string
		wildcardAllow               bool
	)
	for i := range idx.all {
		b := &idx.all[i]
		if !b.hostMatches(host) || !b.principalMatches(p) || (b.op != op && b.op != kmsg.ACLOperationAll) {
			continue
		}
		switch {
		case !b.allow && b.prefixed:
			denyPrefixed = append(denyPrefixed, b.name)
		case !b.allow && b.name == WildcardResource:
			return false
		case !b.allow:
			denyLiteral[b.name] = true
		case b.prefixed:
			allowPrefixed = append(allowPrefixed, b.name)
		case b.name == WildcardResource:
			wildcardAllow = true
		default:
			allowLiteral = append(allowLiteral, b.name)
		}
	}
	if wildcardAllow {
		return true
	}
	dominated := func(name string) bool {
		for _, d := range denyPrefixed {
			if d != "" && strings.HasPrefix(name, d) {
				return true
			}
		}
		return false
	}
	for _, n := range allowLiteral {
		if !denyLiteral[n] && !dominated(n) {
			return true
		}
	}
	for _, n := range allowPrefixed {
		if !dominated(n) {
			return true
		}
	}
	return false
}
