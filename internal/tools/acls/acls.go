package acls

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClusterName is the name of the one CLUSTER resource (Kafka's
// Resource.CLUSTER_NAME).
const ClusterName = "kafka-cluster"

// WildcardHost is the host of an entry that applies from every host, the
// default of --allow-host and --deny-host.
const WildcardHost = "*"

// ResourcePattern is Kafka's ResourcePattern, or a ResourcePatternFilter
// when used to describe or delete: a resource type, a name and a pattern
// type. AnyName marks a filter that matches every name (Kafka's null name,
// printed <any>). It is a comparable value.
type ResourcePattern struct {
	Type    kmsg.ACLResourceType
	Name    string
	AnyName bool
	Pattern kmsg.ACLResourcePatternType
}

// String is Kafka's ResourcePattern.toString:
// ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL).
func (r ResourcePattern) String() string {
	name := r.Name
	if r.AnyName {
		name = "<any>"
	}
	return "ResourcePattern(resourceType=" + r.Type.String() + ", name=" + name + ", patternType=" + r.Pattern.String() + ")"
}

// Entry is Kafka's AccessControlEntry: who (principal, from host) may or
// may not (permission) do what (operation). It is a comparable value.
type Entry struct {
	Principal  string
	Host       string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// String is Kafka's AccessControlEntry.toString:
// (principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW).
func (e Entry) String() string {
	return "(principal=" + e.Principal + ", host=" + e.Host + ", operation=" + e.Operation.String() +
		", permissionType=" + e.Permission.String() + ")"
}

// Binding is Kafka's AclBinding: an entry on a resource pattern.
type Binding struct {
	Pattern ResourcePattern
	Entry   Entry
}

// String is Kafka's AclBinding.toString: (pattern=ResourcePattern(...), entry=(...)).
func (b Binding) String() string {
	return "(pattern=" + b.Pattern.String() + ", entry=" + b.Entry.String() + ")"
}

// resourceACLs is one resource (or resource filter) with its entries, the
// unit every action of the tool works on.
type resourceACLs struct {
	Resource ResourcePattern
	Entries  []Entry
}

func compareResources(a, b ResourcePattern) int {
	return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Pattern, b.Pattern))
}

func compareEntries(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
}

// sortACLs orders resources and the entries of each, so that output does
// not depend on the order the broker or the command line gave them in.
func sortACLs(rs []resourceACLs) {
	slices.SortFunc(rs, func(a, b resourceACLs) int { return compareResources(a.Resource, b.Resource) })
	for _, r := range rs {
		slices.SortFunc(r.Entries, compareEntries)
	}
}

// groupBindings collects bindings by resource pattern, dropping duplicates,
// sorted.
func groupBindings(bs []Binding) []resourceACLs {
	idx := map[ResourcePattern]int{}
	seen := map[Binding]bool{}
	var out []resourceACLs
	for _, b := range bs {
		if seen[b] {
			continue
		}
		seen[b] = true
		i, ok := idx[b.Pattern]
		if !ok {
			i = len(out)
			idx[b.Pattern] = i
			out = append(out, resourceACLs{Resource: b.Pattern})
		}
		out[i].Entries = append(out[i].Entries, b.Entry)
	}
	sortACLs(out)
	return out
}

func entryLines(es []Entry) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = "\t" + e.String()
	}
	return strings.Join(lines, "\n")
}

// writeAdding prints what --add is about to create on one resource.
func writeAdding(w io.Writer, r ResourcePattern, es []Entry) {
	fmt.Fprintf(w, "Adding ACLs for resource `%s`: \n %s\n\n", r, entryLines(es))
}

// writeExists prints that --add found a binding already in place.
func writeExists(w io.Writer, b Binding) {
	fmt.Fprintf(w, "Acl %s already exists.\n", b)
}

// writeCurrent prints the entries of one resource for --list.
func writeCurrent(w io.Writer, rs []resourceACLs) {
	for _, r := range rs {
		fmt.Fprintf(w, "Current ACLs for resource `%s`:\n%s\n\n", r.Resource, entryLines(r.Entries))
	}
}

// writePrincipalHeader opens the --list output for one --principal.
func writePrincipalHeader(w io.Writer, principal string) {
	fmt.Fprintf(w, "ACLs for principal `%s`\n", principal)
}

// removeQuestion is what --remove asks before deleting from one resource
// filter: the listed entries, or every entry when es is empty.
func removeQuestion(r ResourcePattern, es []Entry) string {
	if len(es) == 0 {
		return "Are you sure you want to delete all ACLs for resource filter `" + r.String() + "`? (y/n)"
	}
	return "Are you sure you want to remove ACLs: \n " + entryLines(es) + "\n from resource filter `" + r.String() + "`? (y/n)"
}

// operations lists the operations an ACL may name, in Kafka's code order
// (AclEntry.ACL_OPERATIONS: all but UNKNOWN and ANY).
var operations = []kmsg.ACLOperation{
	kmsg.ACLOperationAll, kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
	kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
	kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
	kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens,
}

// operationName is Kafka's SecurityUtils.operationName: the enum name in
// Pascal case (IDEMPOTENT_WRITE is IdempotentWrite).
func operationName(op kmsg.ACLOperation) string {
	var b strings.Builder
	for _, part := range strings.Split(op.String(), "_") {
		if part == "" {
			continue
		}
		b.WriteString(part[:1])
		b.WriteString(strings.ToLower(part[1:]))
	}
	return b.String()
}

// parseOperation is Kafka's SecurityUtils.operation: the Pascal-case name
// (IdempotentWrite), or the same name in any case without underscores
// (IDEMPOTENTWRITE, idempotentwrite). Anything else is UNKNOWN, which the
// per-resource check then rejects.
func parseOperation(s string) kmsg.ACLOperation {
	all := append([]kmsg.ACLOperation{kmsg.ACLOperationUnknown, kmsg.ACLOperationAny}, operations...)
	for _, op := range all {
		if name := operationName(op); s == name || strings.ToUpper(s) == strings.ToUpper(name) {
			return op
		}
	}
	return kmsg.ACLOperationUnknown
}

// supportedOperations is Kafka's AclEntry.supportedOperations plus ALL:
// the operations an ACL on a resource of type t may name, in code order.
func supportedOperations(t kmsg.ACLResourceType) []kmsg.ACLOperation {
	var ops []kmsg.ACLOperation
	switch t {
	case kmsg.ACLResourceTypeTopic:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
			kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeGroup:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDelete, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeCluster:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
			kmsg.ACLOperationIdempotentWrite}
	case kmsg.ACLResourceTypeTransactionalId:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeDelegationToken:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeUser:
		ops = []kmsg.ACLOperation{kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens}
	}
	return append([]kmsg.ACLOperation{kmsg.ACLOperationAll}, ops...)
}

// checkOperations is Kafka's validateOperation: every entry on a resource
// must name an operation its type supports.
func checkOperations(rs []resourceACLs) error {
	for _, r := range rs {
		valid := supportedOperations(r.Resource.Type)
		for _, e := range r.Entries {
			if !slices.Contains(valid, e.Operation) {
				names := make([]string, len(valid))
				for i, op := range valid {
					names[i] = op.String()
				}
				return fmt.Errorf("ResourceType %s only supports operations [%s]", r.Resource.Type, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// parsePrincipal is Kafka's SecurityUtils.parseKafkaPrincipal: Type:Name,
// split at the first ':'. It returns the principal as Kafka prints it.
func parsePrincipal(s string) (string, error) {
	typ, name, ok := strings.Cut(s, ":")
	if s == "" || !ok {
		return "", fmt.Errorf("expected a string in format principalType:principalName but got %s", s)
	}
	return typ + ":" + name, nil
}
