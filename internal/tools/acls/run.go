package acls

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// options is the parsed command line of `silkworm acls`.
type options struct {
	p *cli.Parser

	bootstrap, commandConfig *string
	add, remove, list        *bool

	topics, groups, txnIDs, tokens, users *[]string
	cluster, idempotent                   *bool
	producer, consumer, force             *bool
	pattern                               *string

	operations                                             *[]string
	allowPrincipals, denyPrincipals, allowHosts, denyHosts *[]string
	listPrincipals                                         *[]string
}

var patternTypes = []string{"ANY", "MATCH", "LITERAL", "PREFIXED"}

func newOptions(stdout io.Writer) *options {
	p := cli.NewParser("acls", "This tool helps to manage acls on kafka.")
	p.Output = stdout
	o := &options{p: p}
	o.bootstrap = p.String("bootstrap-server", "server to connect to", "A list of host/port pairs to use for establishing the connection to the Kafka cluster. This list should be in the form host1:port1,host2:port2,... This config is required for acl management using admin client API.", "")
	o.commandConfig = p.String("command-config", "command-config", "A property file containing configs to be passed to Admin Client.", "")
	o.topics = p.List("topic", "topic", "topic to which ACLs should be added or removed. A value of '*' indicates ACL should apply to all topics.")
	o.cluster = p.Flag("cluster", "Add/Remove cluster ACLs.")
	o.groups = p.List("group", "group", "Consumer Group to which the ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all groups.")
	o.txnIDs = p.List("transactional-id", "transactional-id", "The transactionalId to which ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all transactionalIds.")
	o.idempotent = p.Flag("idempotent", "Enable idempotence for the producer. This should be used in combination with the --producer option. Note that idempotence is enabled automatically if the producer is authorized to a particular transactional-id.")
	o.tokens = p.List("delegation-token", "delegation-token", "Delegation token to which ACLs should be added or removed. A value of '*' indicates ACL should apply to all tokens.")
	o.pattern = p.Choice("resource-pattern-type", patternTypes, "The type of the resource pattern or pattern filter. When adding acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific pattern type can be used to list or remove acls from specific resource patterns, or use the filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the resource name exactly, where as 'match' will perform pattern matching to list or remove all acls that affect the supplied resource(s). WARNING: 'match', when used in combination with the '--remove' switch, should be used with care.", "LITERAL")
	o.add = p.Flag("add", "Indicates you are trying to add ACLs.")
	o.remove = p.Flag("remove", "Indicates you are trying to remove ACLs.")
	o.list = p.Flag("list", "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource.")
	names := make([]string, len(operations))
	for i, op := range operations {
		names[i] = operationName(op)
	}
	o.operations = p.ListWithDefault("operation", "", "Operation that is being allowed or denied. Valid operation names are: "+strings.Join(names, " "), operationName(kmsg.ACLOperationAll))
	o.allowPrincipals = p.List("allow-principal", "allow-principal", "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. For example, User:'*' is the wild card indicating all users.")
	o.denyPrincipals = p.List("deny-principal", "deny-principal", "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access. You only need to use this option as negation to already allowed set. Note that principalType must be supported by the Authorizer being used. For example if you wanted to allow access to all users in the system but not test-user you can define an ACL that allows access to User:'*' and specify --deny-principal=User:test@EXAMPLE.COM. AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES.")
	o.listPrincipals = p.List("principal", "principal", "List ACLs for the specified principal. principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. Multiple --principal option can be passed.")
	o.allowHosts = p.List("allow-host", "allow-host", "Host from which principals listed in --allow-principal will have access. If you have specified --allow-principal then the default for this option will be set to '*' which allows access from all hosts.")
	o.denyHosts = p.List("deny-host", "deny-host", "Host from which principals listed in --deny-principal will be denied access. If you have specified --deny-principal then the default for this option will be set to '*' which denies access from all hosts.")
	o.producer = p.Flag("producer", "Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows WRITE,DESCRIBE and CREATE on topic.")
	o.consumer = p.Flag("consumer", "Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows READ,DESCRIBE on topic and READ on group.")
	o.force = p.Flag("force", "Assume Yes to all queries and do not prompt.")
	o.users = p.List("user-principal", "user-principal", "Specifies a user principal as a resource in relation with the operation. For instance one could grant CreateTokens or DescribeTokens permission on a given user principal.")
	return o
}

// check is Kafka's AclCommandOptions.checkArgs, in its order and wording.
func (o *options) check() error {
	p := o.p
	if len(p.Args()) > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", p.Args()[0])
	}
	if err := p.Require("bootstrap-server"); err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{*o.add, *o.remove, *o.list} {
		if b {
			n++
		}
	}
	if n != 1 {
		return errors.New("Command must include exactly one action: --list, --add, --remove. ")
	}
	if err := p.CheckInvalid("list", "producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"); err != nil {
		return err
	}
	if err := p.CheckInvalid("producer", "operation", "deny-principal", "deny-host"); err != nil {
		return err
	}
	if err := p.CheckInvalid("consumer", "operation", "deny-principal", "deny-host"); err != nil {
		return err
	}
	if p.Has("principal") && !*o.list {
		return errors.New("The --principal option is only available if --list is set")
	}
	if *o.producer && !p.Has("topic") {
		return errors.New("With --producer you must specify a --topic")
	}
	if *o.idempotent && !*o.producer {
		return errors.New("The --idempotent option is only available if --producer is set")
	}
	if *o.consumer && (!p.Has("topic") || !p.Has("group") || (!*o.producer && (*o.cluster || p.Has("transactional-id")))) {
		return errors.New("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	return nil
}

func (o *options) patternType() kmsg.ACLResourcePatternType {
	t, _ := kmsg.ParseACLResourcePatternType(*o.pattern)
	return t
}

func clusterResource() ResourcePattern {
	return ResourcePattern{Type: kmsg.ACLResourceTypeCluster, Name: ClusterName, Pattern: kmsg.ACLResourcePatternTypeLiteral}
}

// resources is Kafka's getResourceFilter: one pattern (or filter) per named
// resource, with --resource-pattern-type; the cluster only for LITERAL.
func (o *options) resources(needOne bool) ([]ResourcePattern, error) {
	pt := o.patternType()
	var out []ResourcePattern
	seen := map[ResourcePattern]bool{}
	add := func(t kmsg.ACLResourceType, name string) {
		r := ResourcePattern{Type: t, Name: name, Pattern: pt}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, t := range *o.topics {
		add(kmsg.ACLResourceTypeTopic, strings.TrimSpace(t))
	}
	if pt == kmsg.ACLResourcePatternTypeLiteral && (*o.cluster || *o.idempotent) {
		add(kmsg.ACLResourceTypeCluster, ClusterName)
	}
	for _, g := range *o.groups {
		add(kmsg.ACLResourceTypeGroup, strings.TrimSpace(g))
	}
	for _, x := range *o.txnIDs {
		add(kmsg.ACLResourceTypeTransactionalId, x) // Kafka does not trim these
	}
	for _, t := range *o.tokens {
		add(kmsg.ACLResourceTypeDelegationToken, strings.TrimSpace(t))
	}
	for _, u := range *o.users {
		add(kmsg.ACLResourceTypeUser, strings.TrimSpace(u))
	}
	if len(out) == 0 && needOne {
		return nil, errors.New("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	return out, nil
}

func principals(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		p, err := parsePrincipal(strings.TrimSpace(v))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func hosts(given []string, hasHosts, hasPrincipals bool) []string {
	switch {
	case hasHosts:
		var out []string
		for _, h := range given {
			if h = strings.TrimSpace(h); !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
		return out
	case hasPrincipals:
		return []string{WildcardHost}
	}
	return nil
}

// entries is Kafka's getAcl: every allowed principal from every allowed
// host for every operation, and the same for denied ones.
func (o *options) entries(ops []kmsg.ACLOperation) ([]Entry, error) {
	allow, err := principals(*o.allowPrincipals)
	if err != nil {
		return nil, err
	}
	deny, err := principals(*o.denyPrincipals)
	if err != nil {
		return nil, err
	}
	var out []Entry
	seen := map[Entry]bool{}
	product := func(ps, hs []string, perm kmsg.ACLPermissionType) {
		for _, p := range ps {
			for _, op := range ops {
				for _, h := range hs {
					e := Entry{Principal: p, Host: h, Operation: op, Permission: perm}
					if !seen[e] {
						seen[e] = true
						out = append(out, e)
					}
				}
			}
		}
	}
	product(allow, hosts(*o.allowHosts, o.p.Has("allow-host"), o.p.Has("allow-principal")), kmsg.ACLPermissionTypeAllow)
	product(deny, hosts(*o.denyHosts, o.p.Has("deny-host"), o.p.Has("deny-principal")), kmsg.ACLPermissionTypeDeny)
	return out, nil
}

// resourceACLs is Kafka's getResourceFilterToAcls: the entries per
// resource that --add or --remove works on, from the explicit options or
// from the --producer and --consumer shortcuts (both may be given).
func (o *options) resourceACLs() ([]resourceACLs, error) {
	var out []resourceACLs
	merge := func(r ResourcePattern, es []Entry) {
		for i := range out {
			if out[i].Resource == r {
				for _, e := range es {
					if !slices.Contains(out[i].Entries, e) {
						out[i].Entries = append(out[i].Entries, e)
					}
				}
				return
			}
		}
		out = append(out, resourceACLs{Resource: r, Entries: append([]Entry(nil), es...)})
	}
	if !*o.producer && !*o.consumer {
		var ops []kmsg.ACLOperation
		for _, name := range *o.operations {
			ops = append(ops, parseOperation(strings.TrimSpace(name)))
		}
		es, err := o.entries(ops)
		if err != nil {
			return nil, err
		}
		rs, err := o.resources(true)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			merge(r, es)
		}
	}
	if *o.producer {
		rs, err := o.resources(true)
		if err != nil {
			return nil, err
		}
		topicACLs, err := o.entries([]kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe, kmsg.ACLOperationCreate})
		if err != nil {
			return nil, err
		}
		txnACLs, err := o.entries([]kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe})
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			switch r.Type {
			case kmsg.ACLResourceTypeTopic:
				merge(r, topicACLs)
			case kmsg.ACLResourceTypeTransactionalId:
				merge(r, txnACLs)
			}
		}
		if *o.idempotent {
			es, err := o.entries([]kmsg.ACLOperation{kmsg.ACLOperationIdempotentWrite})
			if err != nil {
				return nil, err
			}
			merge(clusterResource(), es)
		}
	}
	if *o.consumer {
		rs, err := o.resources(true)
		if err != nil {
			return nil, err
		}
		topicACLs, err := o.entries([]kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe})
		if err != nil {
			return nil, err
		}
		groupACLs, err := o.entries([]kmsg.ACLOperation{kmsg.ACLOperationRead})
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			switch r.Type {
			case kmsg.ACLResourceTypeTopic:
				merge(r, topicACLs)
			case kmsg.ACLResourceTypeGroup:
				merge(r, groupACLs)
			}
		}
	}
	if err := checkOperations(out); err != nil {
		return nil, err
	}
	sortACLs(out)
	return out, nil
}

// addPlan is Kafka's getResourceToAcls: the resources and entries --add
// creates, each resource with at least one entry.
func (o *options) addPlan() ([]resourceACLs, error) {
	if pt := o.patternType(); pt != kmsg.ACLResourcePatternTypeLiteral && pt != kmsg.ACLResourcePatternTypePrefixed {
		return nil, fmt.Errorf("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", pt)
	}
	rs, err := o.resourceACLs()
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if len(r.Entries) == 0 {
			return nil, errors.New("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
		}
	}
	return rs, nil
}

// Run is `silkworm acls` with kafka-acls.sh's options. stdin answers the
// confirmation --remove asks for without --force; the results and questions
// go to stdout. An invalid command line, an unreachable cluster or an error
// the broker returns for any binding is an error.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := newOptions(stdout)
	if err := o.p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	// Work out what to do before connecting, so that a bad command line
	// is reported without a cluster.
	var plan []resourceACLs
	var listFilters []ResourcePattern
	var listPrincipals []string
	var err error
	switch {
	case *o.add:
		plan, err = o.addPlan()
	case *o.remove:
		plan, err = o.resourceACLs()
	default:
		if listFilters, err = o.resources(false); err == nil {
			listPrincipals, err = principals(*o.listPrincipals)
		}
	}
	if err != nil {
		return err
	}

	cl, _, err := cli.NewAdmin(ctx, *o.commandConfig, *o.bootstrap)
	if err != nil {
		return err
	}
	defer cl.Close()
	switch {
	case *o.add:
		return addACLs(ctx, cl, plan, stdout)
	case *o.remove:
		return removeACLs(ctx, cl, plan, *o.force, bufio.NewReader(stdin), stdout)
	default:
		return listACLs(ctx, cl, listFilters, listPrincipals, stdout)
	}
}

func addACLs(ctx context.Context, cl kmsg.Requestor, plan []resourceACLs, w io.Writer) error {
	for _, r := range plan {
		existing, err := describe(ctx, cl, r.Resource)
		if err != nil {
			return err
		}
		have := map[Binding]bool{}
		for _, b := range existing {
			have[b] = true
		}
		var create []Entry
		for _, e := range r.Entries {
			b := Binding{Pattern: r.Resource, Entry: e}
			if have[b] {
				writeExists(w, b)
				continue
			}
			create = append(create, e)
		}
		if len(create) == 0 {
			continue
		}
		writeAdding(w, r.Resource, create)
		if err := createACLs(ctx, cl, r.Resource, create); err != nil {
			return err
		}
	}
	return nil
}

func removeACLs(ctx context.Context, cl kmsg.Requestor, plan []resourceACLs, force bool, in *bufio.Reader, w io.Writer) error {
	for _, r := range plan {
		if !force {
			fmt.Fprintln(w, removeQuestion(r.Resource, r.Entries))
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				continue // end of input: no
			}
			if !strings.EqualFold(strings.TrimRight(line, "\r\n"), "y") {
				continue
			}
		}
		if err := deleteACLs(ctx, cl, r.Resource, r.Entries); err != nil {
			return err
		}
	}
	return nil
}

func listACLs(ctx context.Context, cl kmsg.Requestor, filters []ResourcePattern, principals []string, w io.Writer) error {
	if len(filters) == 0 {
		filters = []ResourcePattern{{Type: kmsg.ACLResourceTypeAny, AnyName: true, Pattern: kmsg.ACLResourcePatternTypeAny}}
	}
	var all []Binding
	for _, f := range filters {
		bs, err := describe(ctx, cl, f)
		if err != nil {
			return err
		}
		all = append(all, bs...)
	}
	rs := groupBindings(all)
	if len(principals) == 0 {
		writeCurrent(w, rs)
		return nil
	}
	for _, p := range principals {
		writePrincipalHeader(w, p)
		var mine []resourceACLs
		for _, r := range rs {
			var es []Entry
			for _, e := range r.Entries {
				if e.Principal == p {
					es = append(es, e)
				}
			}
			if len(es) > 0 {
				mine = append(mine, resourceACLs{Resource: r.Resource, Entries: es})
			}
		}
		writeCurrent(w, mine)
	}
	return nil
}
