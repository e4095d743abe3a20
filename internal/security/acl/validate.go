package acl

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrInvalid is matched (errors.Is) by every error ValidateBinding and
// ValidateFilter return. The CreateAcls handler answers such a creation with
// INVALID_REQUEST and err.Error() as the ErrorMessage; the DeleteAcls handler
// answers such a filter the same way. The messages are Kafka's
// (ValidateBinding says where Kafka itself answers differently).
var ErrInvalid = errors.New("invalid ACL binding or filter")

// ErrUnknownElement is matched, in addition to ErrInvalid, when the cause is
// an UNKNOWN (0) or unrecognised enum code. Kafka never gets that far with
// such a request: it fails to parse CreateAcls, DescribeAcls and DeleteAcls
// requests carrying one and closes the connection. A handler that wants to
// behave exactly like Kafka closes the connection on this error.
var ErrUnknownElement = errors.New("ACL binding or filter has an UNKNOWN element")

// invalidError carries Kafka's message for a refused binding or filter.
type invalidError struct {
	msg     string
	unknown bool
}

func (e *invalidError) Error() string { return e.msg }

func (e *invalidError) Is(target error) bool {
	return target == ErrInvalid || (e.unknown && target == ErrUnknownElement)
}

// ValidateBinding returns what Kafka answers when CreateAcls carries b, or
// nil when Kafka would create it. The checks run in Kafka's order:
//
//   - resource type UNKNOWN or ANY: "Invalid resourceType X"
//   - pattern type other than LITERAL or PREFIXED: "Invalid patternType X"
//   - operation UNKNOWN or ANY: "Invalid operation X"
//   - permission other than ALLOW or DENY: "Invalid permissionType X"
//   - a CLUSTER resource not named kafka-cluster: "The only valid name for
//     the CLUSTER resource is kafka-cluster"
//   - an empty resource name: "Invalid empty resource name"
//   - a principal without ':' (Kafka 4.0, KAFKA-18051): "Could not parse
//     principal from `X` (no colon is present separating the principal type
//     from the principal name)"
//
// Kafka accepts everything else, including a PREFIXED "*" (a prefix like any
// other), any operation on any resource type, and any host string.
//
// Only the last three reach a Kafka client as INVALID_REQUEST with these
// messages. Kafka refuses the enum cases earlier: UNKNOWN codes while
// parsing the request (it closes the connection; ErrUnknownElement), and
// ANY or MATCH while building the binding, which fails the whole request
// with UNKNOWN_SERVER_ERROR. Answering those with INVALID_REQUEST and the
// message above is the handler's choice to make.
func ValidateBinding(b Binding) error {
	switch {
	case !concreteResourceType(b.ResourceType):
		return &invalidError{
			msg:     "Invalid resourceType " + b.ResourceType.String(),
			unknown: !knownResourceType(b.ResourceType),
		}
	case b.PatternType != kmsg.ACLResourcePatternTypeLiteral && b.PatternType != kmsg.ACLResourcePatternTypePrefixed:
		return &invalidError{
			msg:     "Invalid patternType " + b.PatternType.String(),
			unknown: !knownPatternType(b.PatternType),
		}
	case !concreteOperation(b.Operation):
		return &invalidError{
			msg:     "Invalid operation " + b.Operation.String(),
			unknown: !knownOperation(b.Operation),
		}
	case b.Permission != kmsg.ACLPermissionTypeAllow && b.Permission != kmsg.ACLPermissionTypeDeny:
		return &invalidError{
			msg:     "Invalid permissionType " + b.Permission.String(),
			unknown: !knownPermission(b.Permission),
		}
	case b.ResourceType == kmsg.ACLResourceTypeCluster && b.ResourceName != ClusterName:
		return &invalidError{msg: "The only valid name for the CLUSTER resource is " + ClusterName}
	case b.ResourceName == "":
		return &invalidError{msg: "Invalid empty resource name"}
	case !strings.Contains(b.Principal, ":"):
		return &invalidError{msg: "Could not parse principal from `" + b.Principal +
			"` (no colon is present separating the principal type from the principal name)"}
	}
	return nil
}

// ValidateFilter returns what Kafka answers for a DescribeAcls or DeleteAcls
// filter, or nil when Kafka accepts it: "Unknown patternFilter." when the
// resource type or pattern type is UNKNOWN (or a code Kafka does not know),
// "Unknown entryFilter." when the operation or permission is. Every other
// filter is accepted, ANY and MATCH included. Every error also matches
// ErrUnknownElement: Kafka itself refuses such filters while parsing the
// request (see ErrUnknownElement). Version rules (v0 knows only LITERAL and
// ANY, which it reads as LITERAL) are the handler's.
func ValidateFilter(f Filter) error {
	if !knownResourceType(f.ResourceType) || !knownPatternType(f.PatternType) {
		return &invalidError{msg: "Unknown patternFilter.", unknown: true}
	}
	if !knownOperation(f.Operation) || !knownPermission(f.Permission) {
		return &invalidError{msg: "Unknown entryFilter.", unknown: true}
	}
	return nil
}
