package acl

import "github.com/twmb/franz-go/pkg/kmsg"

// ClusterName is the only name a CLUSTER resource has (Kafka's
// Resource.CLUSTER_NAME); CLUSTER bindings must use it.
const ClusterName = "kafka-cluster"

// Wildcards as Kafka spells them in bindings.
const (
	// WildcardResource is the LITERAL resource name that matches every
	// resource of the binding's type.
	WildcardResource = "*"
	// WildcardHost is the host that matches every client address.
	WildcardHost = "*"
	// WildcardPrincipal is the principal that matches every principal.
	WildcardPrincipal = "User:*"
)

// supportedOperations lists, per resource type, the operations Kafka reports
// in KIP-430 authorized-operations fields (Kafka's
// AclEntry.supportedOperations), in operation-code order.
var supportedOperations = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {
		kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
	},
	kmsg.ACLResourceTypeGroup: {
		kmsg.ACLOperationRead, kmsg.ACLOperationDelete, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
	},
	kmsg.ACLResourceTypeCluster: {
		kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite,
	},
	kmsg.ACLResourceTypeTransactionalId: {
		kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe,
	},
	kmsg.ACLResourceTypeDelegationToken: {
		kmsg.ACLOperationDescribe,
	},
	kmsg.ACLResourceTypeUser: {
		kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens,
	},
}

// SupportedOperations returns the operations Kafka defines for a concrete
// resource type, in operation-code order, or nil for ANY, UNKNOWN and codes
// Kafka does not know. The result must not be modified.
func SupportedOperations(rt kmsg.ACLResourceType) []kmsg.ACLOperation {
	return supportedOperations[rt]
}

// concreteResourceType reports whether rt names a kind of resource a binding
// can be on: TOPIC through USER.
func concreteResourceType(rt kmsg.ACLResourceType) bool {
	return rt >= kmsg.ACLResourceTypeTopic && rt <= kmsg.ACLResourceTypeUser
}

// concreteOperation reports whether op is one a binding can carry: ALL
// through DESCRIBE_TOKENS (not UNKNOWN, not the filter value ANY).
func concreteOperation(op kmsg.ACLOperation) bool {
	return op >= kmsg.ACLOperationAll && op <= kmsg.ACLOperationDescribeTokens
}

// knownResourceType, knownPatternType, knownOperation and knownPermission
// report whether a wire code is one Kafka knows (the filter value ANY
// included); Kafka reads any other code, and 0, as UNKNOWN.
func knownResourceType(rt kmsg.ACLResourceType) bool {
	return rt >= kmsg.ACLResourceTypeAny && rt <= kmsg.ACLResourceTypeUser
}

func knownPatternType(pt kmsg.ACLResourcePatternType) bool {
	return pt >= kmsg.ACLResourcePatternTypeAny && pt <= kmsg.ACLResourcePatternTypePrefixed
}

func knownOperation(op kmsg.ACLOperation) bool {
	return op >= kmsg.ACLOperationAny && op <= kmsg.ACLOperationDescribeTokens
}

func knownPermission(pt kmsg.ACLPermissionType) bool {
	return pt >= kmsg.ACLPermissionTypeAny && pt <= kmsg.ACLPermissionTypeAllow
}

// allowApplies reports whether an ALLOW binding for operation granted allows
// the requested operation: the same operation, ALL, or one that implies it
// (READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies
// DESCRIBE_CONFIGS).
func allowApplies(granted, requested kmsg.ACLOperation) bool {
	if granted == requested || granted == kmsg.ACLOperationAll {
		return true
	}
	switch requested {
	case kmsg.ACLOperationDescribe:
		switch granted {
		case kmsg.ACLOperationRead, kmsg.ACLOperationWrite,
			kmsg.ACLOperationDelete, kmsg.ACLOperationAlter:
			return true
		}
	case kmsg.ACLOperationDescribeConfigs:
		return granted == kmsg.ACLOperationAlterConfigs
	}
	return false
}

// denyApplies reports whether a DENY binding for operation denied denies the
// requested operation: only the same operation or ALL; a DENY implies
// nothing.
func denyApplies(denied, requested kmsg.ACLOperation) bool {
	return denied == requested || denied == kmsg.ACLOperationAll
}
