package acl

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Filter selects bindings, as a DescribeAcls request or one DeleteAcls filter
// does (Kafka's AclBindingFilter). A nil string field and the ANY enum values
// match everything. A Filter is a value.
type Filter struct {
	ResourceType kmsg.ACLResourceType // ANY matches all types
	ResourceName *string              // nil matches all names
	// PatternType selects how ResourceName is compared:
	//   - ANY: bindings of either pattern type whose name equals ResourceName;
	//   - LITERAL or PREFIXED: bindings of that pattern type whose name
	//     equals ResourceName;
	//   - MATCH: the bindings that would apply to a resource called
	//     ResourceName: LITERAL with that name, LITERAL "*", and PREFIXED
	//     whose name is a prefix of it. With a nil ResourceName, MATCH
	//     matches every binding, as ANY does.
	PatternType kmsg.ACLResourcePatternType
	Principal   *string                // nil matches all; otherwise exact ("User:*" only matches "User:*")
	Host        *string                // nil matches all; otherwise exact
	Operation   kmsg.ACLOperation      // ANY matches all; otherwise exact (no implication)
	Permission  kmsg.ACLPermissionType // ANY matches all
}

// MatchAll is the filter that matches every binding.
var MatchAll = Filter{
	ResourceType: kmsg.ACLResourceTypeAny,
	PatternType:  kmsg.ACLResourcePatternTypeAny,
	Operation:    kmsg.ACLOperationAny,
	Permission:   kmsg.ACLPermissionTypeAny,
}

// FilterOf returns the filter that matches exactly b (DeleteAcls with a
// binding's every field set).
func FilterOf(b Binding) Filter {
	return Filter{
		ResourceType: b.ResourceType,
		ResourceName: &b.ResourceName,
		PatternType:  b.PatternType,
		Principal:    &b.Principal,
		Host:         &b.Host,
		Operation:    b.Operation,
		Permission:   b.Permission,
	}
}

// Matches reports whether f selects b, with Kafka's rules
// (ResourcePatternFilter.matches and AccessControlEntryFilter.matches).
// Filters that ValidateFilter refuses match nothing Kafka would store.
func (f Filter) Matches(b Binding) bool {
	return f.matchesPattern(b) &&
		(f.Principal == nil || *f.Principal == b.Principal) &&
		(f.Host == nil || *f.Host == b.Host) &&
		(f.Operation == kmsg.ACLOperationAny || f.Operation == b.Operation) &&
		(f.Permission == kmsg.ACLPermissionTypeAny || f.Permission == b.Permission)
}

func (f Filter) matchesPattern(b Binding) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != b.ResourceType {
		return false
	}
	anyPattern := f.PatternType == kmsg.ACLResourcePatternTypeAny
	match := f.PatternType == kmsg.ACLResourcePatternTypeMatch
	if !anyPattern && !match && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	name := *f.ResourceName
	if !match {
		return name == b.ResourceName
	}
	switch b.PatternType {
	case kmsg.ACLResourcePatternTypeLiteral:
		return name == b.ResourceName || b.ResourceName == WildcardResource
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}
