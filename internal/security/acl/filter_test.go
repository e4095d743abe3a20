package acl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFilterMatches(t *testing.T) {
	litFoo := grant(topic, literal, "foo", opRead)
	litStar := grant(topic, literal, "*", opRead)
	preFo := grant(topic, prefixed, "fo", opRead)
	preFoo := grant(topic, prefixed, "foo", opRead)
	preFoox := grant(topic, prefixed, "foox", opRead)
	litBar := grant(topic, literal, "bar", opRead)
	grpFoo := grant(group, literal, "foo", opRead)
	bobWrite := withHost(withPrincipal(refuse(topic, literal, "foo", opWrite), "User:bob"), "10.0.0.2")
	anyoneFoo := withPrincipal(grant(topic, literal, "foo", opRead), "User:*")
	all := []Binding{litFoo, litStar, preFo, preFoo, preFoox, litBar, grpFoo, bobWrite, anyoneFoo}

	pattern := func(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) Filter {
		f := MatchAll
		f.ResourceType, f.ResourceName, f.PatternType = rt, name, pt
		return f
	}
	entryF := func(principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) Filter {
		f := MatchAll
		f.Principal, f.Host, f.Operation, f.Permission = principal, host, op, perm
		return f
	}
	cases := []struct {
		name string
		f    Filter
		want []Binding
	}{
		{"match all", MatchAll, all},
		{"resource type", pattern(group, nil, anyPat), []Binding{grpFoo}},
		{"ANY pattern with a name: both pattern types, exact name",
			pattern(topic, ptr("foo"), anyPat), []Binding{litFoo, preFoo, bobWrite, anyoneFoo}},
		{"LITERAL without a name", pattern(topic, nil, literal), []Binding{litFoo, litStar, litBar, bobWrite, anyoneFoo}},
		{"LITERAL with a name: exact, no wildcard", pattern(topic, ptr("foo"), literal), []Binding{litFoo, bobWrite, anyoneFoo}},
		{"LITERAL * selects the wildcard binding only", pattern(topic, ptr("*"), literal), []Binding{litStar}},
		{"PREFIXED without a name", pattern(topic, nil, prefixed), []Binding{preFo, preFoo, preFoox}},
		{"PREFIXED with a name: exact prefix only", pattern(topic, ptr("foo"), prefixed), []Binding{preFoo}},
		{"MATCH without a name matches every pattern", pattern(topic, nil, matchPat),
			[]Binding{litFoo, litStar, preFo, preFoo, preFoox, litBar, bobWrite, anyoneFoo}},
		{"MATCH with a name: literal, wildcard and covering prefixes",
			pattern(topic, ptr("foo"), matchPat), []Binding{litFoo, litStar, preFo, preFoo, bobWrite, anyoneFoo}},
		{"MATCH foox", pattern(topic, ptr("foox"), matchPat), []Binding{litStar, preFo, preFoo, preFoox}},
		{"MATCH f: no prefix is short enough", pattern(topic, ptr("f"), matchPat), []Binding{litStar}},
		{"MATCH across types", pattern(anyType, ptr("foo"), matchPat),
			[]Binding{litFoo, litStar, preFo, preFoo, grpFoo, bobWrite, anyoneFoo}},
		{"principal is exact", entryF(ptr("User:bob"), nil, opAny, anyPerm), []Binding{bobWrite}},
		{"User:* selects only User:* bindings", entryF(ptr("User:*"), nil, opAny, anyPerm), []Binding{anyoneFoo}},
		{"host is exact", entryF(nil, ptr("10.0.0.2"), opAny, anyPerm), []Binding{bobWrite}},
		{"host * selects only * hosts", entryF(nil, ptr("*"), opAny, anyPerm),
			[]Binding{litFoo, litStar, preFo, preFoo, preFoox, litBar, grpFoo, anyoneFoo}},
		{"operation is exact", entryF(nil, nil, opWrite, anyPerm), []Binding{bobWrite}},
		{"operation ALL selects only ALL bindings", entryF(nil, nil, opAll, anyPerm), nil},
		{"permission", entryF(nil, nil, opAny, deny), []Binding{bobWrite}},
		{"permission ALLOW", entryF(nil, nil, opAny, allow),
			[]Binding{litFoo, litStar, preFo, preFoo, preFoox, litBar, grpFoo, anyoneFoo}},
		{"everything set: FilterOf selects the binding", FilterOf(bobWrite), []Binding{bobWrite}},
		{"FilterOf a prefixed binding", FilterOf(preFo), []Binding{preFo}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := map[Binding]bool{}
			for _, b := range c.want {
				want[b] = true
			}
			for _, b := range all {
				if got := c.f.Matches(b); got != want[b] {
					t.Errorf("Matches(%+v) = %v, want %v", b, got, want[b])
				}
			}
		})
	}
}
