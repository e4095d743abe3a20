package acl

import (
	"slices"
	"strings"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// snapshot is one immutable ACL set, indexed for Authorize. SetBindings
// builds a new one and swaps it in; nothing modifies a snapshot after that,
// so readers use it without locks.
type snapshot struct {
	// byType is indexed by resource type code; nil where that type has no
	// bindings. Only concrete types (TOPIC..USER) are ever set.
	byType [kmsg.ACLResourceTypeUser + 1]*resourceIndex
	// bindings is the accepted set in SetBindings order, for Bindings.
	bindings []Binding
}

// resourceIndex holds the bindings of one resource type.
type resourceIndex struct {
	literal  map[string][]entry // LITERAL bindings by name, except "*"
	wildcard []entry            // LITERAL "*"
	prefixed map[string][]entry // PREFIXED bindings by prefix
	// prefixLens are the distinct lengths of the keys of prefixed,
	// ascending: the candidate prefixes of a name n are n[:l] for each l.
	prefixLens []int
	// all is every binding of the type, for AuthorizeByResourceType.
	all []patternEntry
}

// entry is the access-control part of a binding, with its principal parsed
// the way Kafka parses it (type before the first ':', name after).
type entry struct {
	principalType string
	principalName string
	anyPrincipal  bool // "User:*"
	host          string
	op            kmsg.ACLOperation
	allow         bool
}

// patternEntry is an entry with its resource pattern.
type patternEntry struct {
	entry
	name     string
	prefixed bool
}

func newEntry(b Binding) entry {
	typ, name, _ := strings.Cut(b.Principal, ":")
	return entry{
		principalType: typ,
		principalName: name,
		anyPrincipal:  typ == security.UserType && name == "*",
		host:          b.Host,
		op:            b.Operation,
		allow:         b.Permission == kmsg.ACLPermissionTypeAllow,
	}
}

// buildSnapshot indexes the bindings that ValidateBinding accepts and drops
// the rest (the metadata store only holds validated bindings; anything else
// could never have been created through Kafka's API).
func buildSnapshot(bs []Binding) *snapshot {
	s := &snapshot{bindings: make([]Binding, 0, len(bs))}
	for _, b := range bs {
		if ValidateBinding(b) != nil {
			continue
		}
		s.bindings = append(s.bindings, b)
		idx := s.byType[b.ResourceType]
		if idx == nil {
			idx = &resourceIndex{literal: map[string][]entry{}, prefixed: map[string][]entry{}}
			s.byType[b.ResourceType] = idx
		}
		e := newEntry(b)
		prefixed := b.PatternType == kmsg.ACLResourcePatternTypePrefixed
		idx.all = append(idx.all, patternEntry{entry: e, name: b.ResourceName, prefixed: prefixed})
		switch {
		case prefixed:
			idx.prefixed[b.ResourceName] = append(idx.prefixed[b.ResourceName], e)
		case b.ResourceName == WildcardResource:
			idx.wildcard = append(idx.wildcard, e)
		default:
			idx.literal[b.ResourceName] = append(idx.literal[b.ResourceName], e)
		}
	}
	for _, idx := range s.byType {
		if idx == nil {
			continue
		}
		for p := range idx.prefixed {
			idx.prefixLens = append(idx.prefixLens, len(p))
		}
		slices.Sort(idx.prefixLens)
		idx.prefixLens = slices.Compact(idx.prefixLens)
	}
	return s
}

func (s *snapshot) resources(rt kmsg.ACLResourceType) *resourceIndex {
	if rt < 0 || int(rt) >= len(s.byType) {
		return nil
	}
	return s.byType[rt]
}

// principalMatches reports whether e names p or every user.
func (e *entry) principalMatches(p security.Principal) bool {
	return e.anyPrincipal || (e.principalType == p.Type && e.principalName == p.Name)
}

func (e *entry) hostMatches(host string) bool {
	return e.host == WildcardHost || e.host == host
}

// verdict accumulates what the bindings on one resource say about one
// request.
type verdict struct {
	found   bool // the resource has at least one binding
	allowed bool // an ALLOW binding applies
}

// scan applies es to the request and reports whether a DENY applies, at
// which point the decision is made.
func (v *verdict) scan(es []entry, p security.Principal, host string, op kmsg.ACLOperation) (denied bool) {
	if len(es) == 0 {
		return false
	}
	v.found = true
	for i := range es {
		e := &es[i]
		if !e.principalMatches(p) || !e.hostMatches(host) {
			continue
		}
		if e.allow {
			if !v.allowed && allowApplies(e.op, op) {
				v.allowed = true
			}
		} else if denyApplies(e.op, op) {
			return true
		}
	}
	return false
}

// authorize decides a request against the snapshot's bindings alone (super
// users are the caller's); noACL is the answer for a resource without
// bindings.
func (s *snapshot) authorize(p security.Principal, host string, op kmsg.ACLOperation,
	rt kmsg.ACLResourceType, name string, noACL bool) bool {
	idx := s.resources(rt)
	if idx == nil {
		return noACL
	}
	var v verdict
	if v.scan(idx.literal[name], p, host, op) {
		return false
	}
	for _, l := range idx.prefixLens {
		if l > len(name) {
			break
		}
		if v.scan(idx.prefixed[name[:l]], p, host, op) {
			return false
		}
	}
	if v.scan(idx.wildcard, p, host, op) {
		return false
	}
	switch {
	case v.allowed:
		return true
	case v.found:
		return false
	}
	return noACL
}
