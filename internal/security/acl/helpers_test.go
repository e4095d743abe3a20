package acl

import (
	"testing"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Short names for the tables.
const (
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	txnID   = kmsg.ACLResourceTypeTransactionalId
	token   = kmsg.ACLResourceTypeDelegationToken
	user    = kmsg.ACLResourceTypeUser
	anyType = kmsg.ACLResourceTypeAny

	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed
	matchPat = kmsg.ACLResourcePatternTypeMatch
	anyPat   = kmsg.ACLResourcePatternTypeAny

	opAll             = kmsg.ACLOperationAll
	opAny             = kmsg.ACLOperationAny
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
	opCreateTokens    = kmsg.ACLOperationCreateTokens
	opDescribeTokens  = kmsg.ACLOperationDescribeTokens

	allow   = kmsg.ACLPermissionTypeAllow
	deny    = kmsg.ACLPermissionTypeDeny
	anyPerm = kmsg.ACLPermissionTypeAny
)

var (
	alice = security.User("alice")
	bob   = security.User("bob")
)

const aliceHost = "10.0.0.1"

// grant is an ALLOW binding for User:alice from any host.
func grant(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name string, op kmsg.ACLOperation) Binding {
	return Binding{
		ResourceType: rt, ResourceName: name, PatternType: pt,
		Principal: "User:alice", Host: "*", Operation: op, Permission: allow,
	}
}

// refuse is the DENY twin of grant.
func refuse(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name string, op kmsg.ACLOperation) Binding {
	b := grant(rt, pt, name, op)
	b.Permission = deny
	return b
}

func withPrincipal(b Binding, principal string) Binding { b.Principal = principal; return b }
func withHost(b Binding, host string) Binding           { b.Host = host; return b }

func newAuthorizer(t testing.TB, cfg Config, bs ...Binding) *Authorizer {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	a.SetBindings(bs)
	return a
}

func ptr(s string) *string { return &s }
