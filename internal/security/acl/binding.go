package acl

import "github.com/twmb/franz-go/pkg/kmsg"

// Binding is one ACL: a resource pattern and an access control entry, as
// CreateAcls carries it. The enum fields use Kafka's wire codes (kmsg's
// types). Principal is "Type:Name" or "User:*"; Host is an IP address or
// "*". A Binding is a value; it is stored in the metadata log.
type Binding struct {
	ResourceType kmsg.ACLResourceType        `json:"resource_type"`
	ResourceName string                      `json:"resource_name"`
	PatternType  kmsg.ACLResourcePatternType `json:"pattern_type"` // LITERAL or PREFIXED
	Principal    string                      `json:"principal"`
	Host         string                      `json:"host"`
	Operation    kmsg.ACLOperation           `json:"operation"`
	Permission   kmsg.ACLPermissionType      `json:"permission"` // ALLOW or DENY
}
