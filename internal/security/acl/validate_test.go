package acl

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestValidateBinding(t *testing.T) {
	ok := grant(topic, literal, "t", opRead)
	with := func(f func(*Binding)) Binding { b := ok; f(&b); return b }
	cases := []struct {
		name    string
		b       Binding
		msg     string // "" for accepted
		unknown bool
	}{
		{name: "literal topic", b: ok},
		{name: "prefixed topic", b: with(func(b *Binding) { b.PatternType = prefixed })},
		{name: "prefixed *", b: with(func(b *Binding) { b.PatternType = prefixed; b.ResourceName = "*" })},
		{name: "literal *", b: with(func(b *Binding) { b.ResourceName = "*" })},
		{name: "DENY", b: with(func(b *Binding) { b.Permission = deny })},
		{name: "any operation on any type", b: with(func(b *Binding) { b.ResourceType = user; b.Operation = opIdempotentWrite })},
		{name: "cluster", b: with(func(b *Binding) { b.ResourceType = cluster; b.ResourceName = ClusterName })},
		{name: "prefixed cluster", b: with(func(b *Binding) {
			b.ResourceType = cluster
			b.ResourceName = ClusterName
			b.PatternType = prefixed
		})},
		{name: "User:*", b: with(func(b *Binding) { b.Principal = "User:*" })},
		{name: "other principal type", b: with(func(b *Binding) { b.Principal = "Group:ops" })},
		{name: "colon only", b: with(func(b *Binding) { b.Principal = ":" })},
		{name: "any host string", b: with(func(b *Binding) { b.Host = "not an address" })},

		{name: "resource type UNKNOWN", b: with(func(b *Binding) { b.ResourceType = kmsg.ACLResourceTypeUnknown }),
			msg: "Invalid resourceType UNKNOWN", unknown: true},
		{name: "resource type out of range", b: with(func(b *Binding) { b.ResourceType = 42 }),
			msg: "Invalid resourceType UNKNOWN", unknown: true},
		{name: "resource type ANY", b: with(func(b *Binding) { b.ResourceType = anyType }),
			msg: "Invalid resourceType ANY"},
		{name: "pattern UNKNOWN", b: with(func(b *Binding) { b.PatternType = kmsg.ACLResourcePatternTypeUnknown }),
			msg: "Invalid patternType UNKNOWN", unknown: true},
		{name: "pattern ANY", b: with(func(b *Binding) { b.PatternType = anyPat }),
			msg: "Invalid patternType ANY"},
		{name: "pattern MATCH", b: with(func(b *Binding) { b.PatternType = matchPat }),
			msg: "Invalid patternType MATCH"},
		{name: "pattern out of range", b: with(func(b *Binding) { b.PatternType = -1 }),
			msg: "Invalid patternType UNKNOWN", unknown: true},
		{name: "operation UNKNOWN", b: with(func(b *Binding) { b.Operation = kmsg.ACLOperationUnknown }),
			msg: "Invalid operation UNKNOWN", unknown: true},
		{name: "operation ANY", b: with(func(b *Binding) { b.Operation = opAny }),
			msg: "Invalid operation ANY"},
		{name: "operation out of range", b: with(func(b *Binding) { b.Operation = 15 }),
			msg: "Invalid operation UNKNOWN", unknown: true},
		{name: "permission UNKNOWN", b: with(func(b *Binding) { b.Permission = kmsg.ACLPermissionTypeUnknown }),
			msg: "Invalid permissionType UNKNOWN", unknown: true},
		{name: "permission ANY", b: with(func(b *Binding) { b.Permission = anyPerm }),
			msg: "Invalid permissionType ANY"},
		{name: "cluster with another name", b: with(func(b *Binding) { b.ResourceType = cluster; b.ResourceName = "c" }),
			msg: "The only valid name for the CLUSTER resource is kafka-cluster"},
		{name: "cluster with an empty name", b: with(func(b *Binding) { b.ResourceType = cluster; b.ResourceName = "" }),
			msg: "The only valid name for the CLUSTER resource is kafka-cluster"},
		{name: "cluster with *", b: with(func(b *Binding) { b.ResourceType = cluster; b.ResourceName = "*" }),
			msg: "The only valid name for the CLUSTER resource is kafka-cluster"},
		{name: "empty name", b: with(func(b *Binding) { b.ResourceName = "" }),
			msg: "Invalid empty resource name"},
		{name: "empty prefix", b: with(func(b *Binding) { b.ResourceName = ""; b.PatternType = prefixed }),
			msg: "Invalid empty resource name"},
		{name: "principal without colon", b: with(func(b *Binding) { b.Principal = "alice" }),
			msg: "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)"},
		{name: "empty principal", b: with(func(b *Binding) { b.Principal = "" }),
			msg: "Could not parse principal from `` (no colon is present separating the principal type from the principal name)"},
		{name: "enums are checked before the name", b: with(func(b *Binding) { b.ResourceName = ""; b.Operation = opAny }),
			msg: "Invalid operation ANY"},
		{name: "resource type is checked first", b: with(func(b *Binding) { b.ResourceType = anyType; b.PatternType = matchPat }),
			msg: "Invalid resourceType ANY"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateBinding(c.b)
			if c.msg == "" {
				if err != nil {
					t.Fatalf("ValidateBinding(%+v) = %v, want nil", c.b, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateBinding(%+v) = nil, want %q", c.b, c.msg)
			}
			if err.Error() != c.msg {
				t.Errorf("message %q, want %q", err.Error(), c.msg)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%v is not ErrInvalid", err)
			}
			if got := errors.Is(err, ErrUnknownElement); got != c.unknown {
				t.Errorf("errors.Is(%v, ErrUnknownElement) = %v, want %v", err, got, c.unknown)
			}
		})
	}
}

func TestValidateFilter(t *testing.T) {
	with := func(f func(*Filter)) Filter { x := MatchAll; f(&x); return x }
	cases := []struct {
		name string
		f    Filter
		msg  string
	}{
		{name: "match all", f: MatchAll},
		{name: "every concrete value", f: FilterOf(grant(topic, prefixed, "t", opRead))},
		{name: "MATCH", f: with(func(f *Filter) { f.PatternType = matchPat; f.ResourceName = ptr("t") })},
		{name: "resource type UNKNOWN", f: with(func(f *Filter) { f.ResourceType = kmsg.ACLResourceTypeUnknown }),
			msg: "Unknown patternFilter."},
		{name: "resource type out of range", f: with(func(f *Filter) { f.ResourceType = 8 }),
			msg: "Unknown patternFilter."},
		{name: "pattern UNKNOWN", f: with(func(f *Filter) { f.PatternType = kmsg.ACLResourcePatternTypeUnknown }),
			msg: "Unknown patternFilter."},
		{name: "pattern out of range", f: with(func(f *Filter) { f.PatternType = 5 }),
			msg: "Unknown patternFilter."},
		{name: "operation UNKNOWN", f: with(func(f *Filter) { f.Operation = kmsg.ACLOperationUnknown }),
			msg: "Unknown entryFilter."},
		{name: "operation out of range", f: with(func(f *Filter) { f.Operation = 99 }),
			msg: "Unknown entryFilter."},
		{name: "permission UNKNOWN", f: with(func(f *Filter) { f.Permission = kmsg.ACLPermissionTypeUnknown }),
			msg: "Unknown entryFilter."},
		{name: "pattern is reported before entry", f: with(func(f *Filter) {
			f.PatternType = kmsg.ACLResourcePatternTypeUnknown
			f.Permission = kmsg.ACLPermissionTypeUnknown
		}), msg: "Unknown patternFilter."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateFilter(c.f)
			if c.msg == "" {
				if err != nil {
					t.Fatalf("ValidateFilter = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.msg {
				t.Fatalf("ValidateFilter = %v, want %q", err, c.msg)
			}
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrUnknownElement) {
				t.Errorf("%v is not ErrInvalid and ErrUnknownElement", err)
			}
		})
	}
}
