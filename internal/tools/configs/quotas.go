package configs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// quotaConfigNames are the quota configs of users and clients (Kafka's
// QuotaConfig.isClientOrUserQuotaConfig); ipConfigNames those of ips.
var (
	quotaConfigNames = []string{"consumer_byte_rate", "controller_mutation_rate", "producer_byte_rate", "request_percentage"}
	ipConfigNames    = []string{"connection_creation_rate"}
)

// SCRAM mechanisms by name, with kadm's codes.
var scramMechanisms = map[string]kadm.ScramMechanism{
	"SCRAM-SHA-256": kadm.ScramSha256,
	"SCRAM-SHA-512": kadm.ScramSha512,
}

// Kafka's defaults and minimum for SCRAM iterations.
const (
	DefaultScramIterations = 4096
	MinScramIterations     = 4096
)

func userConfigNames() []string {
	names := append([]string{"SCRAM-SHA-256", "SCRAM-SHA-512"}, quotaConfigNames...)
	sort.Strings(names)
	return names
}

// quotaEntityType maps the tool's entity types to Kafka's quota entity
// types.
var quotaEntityType = map[string]string{Users: "user", Clients: "client-id", IPs: "ip"}

// parseJavaDouble reads a quota value as Java's Double.parseDouble does
// for the forms people type: surrounding spaces, and an optional d or f
// suffix.
func parseJavaDouble(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) && !strings.HasSuffix(strings.ToLower(s), "inf") {
		s = s[:n-1]
	}
	return strconv.ParseFloat(s, 64)
}

// quotaEntityString is how Kafka's describeQuotaConfigs names an entity:
// user-principal 'alice', client-id 'c1', the default user-principal.
func quotaEntityString(e kadm.ClientQuotaEntity) string {
	var parts []string
	for _, typ := range []string{"user", "client-id", "ip"} {
		for _, c := range e {
			if c.Type != typ {
				continue
			}
			label := map[string]string{"user": "user-principal", "client-id": "client-id", "ip": "ip"}[typ]
			if c.Name == nil || *c.Name == "" {
				parts = append(parts, "the default "+label)
			} else {
				parts = append(parts, label+" '"+*c.Name+"'")
			}
		}
	}
	return strings.Join(parts, ", ")
}

// WriteQuotas prints described client quotas as kafka-configs.sh does, one
// line per entity:
//
//	Quota configs for user-principal 'alice', client-id 'c1' are producer_byte_rate=1024.0
//
// Kafka prints from hash maps; entities are sorted by that text and the
// values of each by key here.
func WriteQuotas(w io.Writer, qs kadm.DescribedClientQuotas) {
	lines := make([]string, 0, len(qs))
	for _, q := range qs {
		vals := slices.Clone(q.Values)
		sort.Slice(vals, func(i, j int) bool { return vals[i].Key < vals[j].Key })
		kvs := make([]string, len(vals))
		for i, v := range vals {
			kvs[i] = v.Key + "=" + javafmt.Double(v.Value)
		}
		lines = append(lines, "Quota configs for "+quotaEntityString(q.Entity)+" are "+strings.Join(kvs, ", "))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// javaExceptionName is the simple name of the exception Kafka's admin
// client raises for a broker error: CLUSTER_AUTHORIZATION_FAILED is
// ClusterAuthorizationException, RESOURCE_NOT_FOUND ResourceNotFoundException.
func javaExceptionName(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return "KafkaException"
	}
	return cli.JavaErrorClass(ke.Code)
}

// WriteScramCredentials prints described SCRAM credentials as
// kafka-configs.sh does, one line per user in user order:
//
//	SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192
//
// A user the broker does not know (RESOURCE_NOT_FOUND) is left out, as
// Kafka's DescribeUserScramCredentialsResult.users() leaves it out; another
// per-user error is Kafka's "Error retrieving ..." line.
func WriteScramCredentials(w io.Writer, ds kadm.DescribedUserSCRAMs) {
	for _, d := range ds.Sorted() {
		if errors.Is(d.Err, kerr.ResourceNotFound) {
			continue
		}
		if d.Err != nil {
			msg := d.ErrMessage
			if msg == "" {
				var ke *kerr.Error
				if errors.As(d.Err, &ke) {
					msg = ke.Description
				}
			}
			fmt.Fprintf(w, "Error retrieving SCRAM credential configs for user-principal '%s': %s: %s\n", d.User, javaExceptionName(d.Err), msg)
			continue
		}
		infos := slices.Clone(d.CredInfos)
		sort.Slice(infos, func(i, j int) bool { return infos[i].Mechanism < infos[j].Mechanism })
		parts := make([]string, len(infos))
		for i, c := range infos {
			parts[i] = c.String() // SCRAM-SHA-512=iterations=8192, Kafka's text
		}
		fmt.Fprintf(w, "SCRAM credential configs for user-principal '%s' are %s\n", d.User, strings.Join(parts, ", "))
	}
}

// quotaFilter is Kafka's getAllClientQuotasConfigs filter: one component
// per entity type, matching the name given at the same position, the
// type's default for "", or any entity of the type when names run out.
func quotaFilter(types, names []string) ([]kadm.DescribeClientQuotaComponent, error) {
	if len(names) > len(types) {
		return nil, errors.New("More entity names specified than entity types")
	}
	var cs []kadm.DescribeClientQuotaComponent
	for i, t := range types {
		c := kadm.DescribeClientQuotaComponent{Type: quotaEntityType[t]}
		switch {
		case i >= len(names):
			c.MatchType = kmsg.QuotasMatchTypeAny
		case names[i] == "":
			c.MatchType = kmsg.QuotasMatchTypeDefault
		default:
			c.MatchType = kmsg.QuotasMatchTypeExact
			c.MatchName = kadm.StringPtr(names[i])
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// describeQuotas prints the quotas of the entities that contain exactly
// the given entity types (Kafka's ClientQuotaFilter.containsOnly).
func describeQuotas(ctx context.Context, adm *kadm.Client, types, names []string, w io.Writer) error {
	filter, err := quotaFilter(types, names)
	if err != nil {
		return err
	}
	qs, err := adm.DescribeClientQuotas(ctx, true, filter)
	if err != nil {
		return fmt.Errorf("describe client quotas: %w", err)
	}
	WriteQuotas(w, qs)
	return nil
}

// describeUsersOrClients is Kafka's describeClientQuotaAndUserScramCredentialConfigs:
// the quotas, then, unless clients or a default entity are involved, the
// SCRAM credentials of the named users (of every user when none is named).
func describeUsersOrClients(ctx context.Context, adm *kadm.Client, types, names []string, w io.Writer) error {
	if err := describeQuotas(ctx, adm, types, names, w); err != nil {
		return err
	}
	if slices.Contains(types, Clients) || slices.Contains(names, "") {
		return nil
	}
	ds, err := adm.DescribeUserSCRAMs(ctx, names...)
	if err != nil {
		return fmt.Errorf("describe user SCRAM credentials: %w", err)
	}
	WriteScramCredentials(w, ds)
	return nil
}

// alterUsersOrClients is Kafka's alterConfig for users and clients: quota
// configs through AlterClientQuotas, or (for a user alone) SCRAM
// credentials through AlterUserScramCredentials, never both at once.
func alterUsersOrClients(ctx context.Context, adm *kadm.Client, types, names []string, adds map[string]string, dels []string) error {
	isQuota := func(k string) bool { return slices.Contains(quotaConfigNames, k) }
	isScram := func(k string) bool { _, ok := scramMechanisms[k]; return ok }
	var quotaAdds, quotaDels, scramAdds, scramDels, unknownAdds, unknownDels []string
	for _, k := range sortedKeys(adds) {
		switch {
		case isQuota(k):
			quotaAdds = append(quotaAdds, k)
		case isScram(k):
			scramAdds = append(scramAdds, k)
		default:
			unknownAdds = append(unknownAdds, k)
		}
	}
	for _, k := range dels {
		switch {
		case isQuota(k):
			quotaDels = append(quotaDels, k)
		case isScram(k):
			scramDels = append(scramDels, k)
		default:
			unknownDels = append(unknownDels, k)
		}
	}
	if types[0] == Clients || len(types) == 2 {
		if bad := append(slices.Clone(unknownAdds), scramAdds...); len(bad) > 0 {
			return fmt.Errorf("Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: %s", strings.Join(bad, ","))
		}
		if bad := append(slices.Clone(unknownDels), scramDels...); len(bad) > 0 {
			return fmt.Errorf("Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: %s", strings.Join(bad, ","))
		}
	} else {
		if len(unknownAdds) > 0 {
			return fmt.Errorf("Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: %s", strings.Join(unknownAdds, ","))
		}
		if len(unknownDels) > 0 {
			return fmt.Errorf("Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: %s", strings.Join(unknownDels, ","))
		}
		if len(scramAdds) > 0 || len(scramDels) > 0 {
			if slices.Contains(names, "") {
				return errors.New("The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.")
			}
			if len(quotaAdds) > 0 || len(quotaDels) > 0 {
				return errors.New("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.")
			}
		}
	}
	if len(quotaAdds) > 0 || len(quotaDels) > 0 {
		return alterQuotas(ctx, adm, types, names, adds, dels)
	}
	return alterScram(ctx, adm, names[0], adds, scramAdds, scramDels)
}

// alterIPQuotas is Kafka's alterConfig for ips: connection quotas only.
func alterIPQuotas(ctx context.Context, adm *kadm.Client, types, names []string, adds map[string]string, dels []string) error {
	var unknown []string
	for _, k := range append(sortedKeys(adds), dels...) {
		if !slices.Contains(ipConfigNames, k) && !slices.Contains(unknown, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: %s", strings.Join(unknown, ", "))
	}
	return alterQuotas(ctx, adm, types, names, adds, dels)
}

// alterQuotas is Kafka's alterQuotaConfigs: one AlterClientQuotas entry for
// the entity the types and names make up, after checking that every quota
// to delete is set.
func alterQuotas(ctx context.Context, adm *kadm.Client, types, names []string, adds map[string]string, dels []string) error {
	filter, err := quotaFilter(types, names)
	if err != nil {
		return err
	}
	current, err := adm.DescribeClientQuotas(ctx, true, filter)
	if err != nil {
		return fmt.Errorf("describe client quotas: %w", err)
	}
	var set kadm.ClientQuotaValues
	if len(current) > 0 {
		set = current[0].Values
	}
	var invalid []string
	for _, k := range dels {
		if !slices.ContainsFunc(set, func(v kadm.ClientQuotaValue) bool { return v.Key == k }) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	var entity kadm.ClientQuotaEntity
	for i, t := range types {
		c := kadm.ClientQuotaEntityComponent{Type: quotaEntityType[t]}
		if names[i] != "" {
			c.Name = kadm.StringPtr(names[i])
		}
		entity = append(entity, c)
	}
	var ops []kadm.AlterClientQuotaOp
	for _, k := range sortedKeys(adds) {
		v, err := parseJavaDouble(adds[k])
		if err != nil {
			return fmt.Errorf("Cannot parse quota configuration value for %s: %s", k, adds[k])
		}
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Value: v})
	}
	for _, k := range dels {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
	if err != nil {
		return fmt.Errorf("alter client quotas: %w", err)
	}
	for _, r := range res {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("alter client quotas of %s: %w: %s", quotaEntityString(r.Entity), r.Err, r.ErrMessage)
			}
			return fmt.Errorf("alter client quotas of %s: %w", quotaEntityString(r.Entity), r.Err)
		}
	}
	return nil
}

var scramCredential = regexp.MustCompile(`^(?:iterations=(-?[0-9]*),)?password=(.*)$`)

// ParseScramCredential reads the value of a SCRAM-SHA-256 or SCRAM-SHA-512
// config as kafka-configs.sh does: [iterations=N,]password=P, where -1 or
// no iterations means DefaultScramIterations and fewer than
// MinScramIterations is an error.
func ParseScramCredential(mechanism, value string) (iterations int32, password string, err error) {
	m := scramCredential.FindStringSubmatch(value)
	if m == nil {
		// Kafka names the mechanism by its Java enum constant here.
		return 0, "", fmt.Errorf("Invalid credential property %s=%s", strings.ReplaceAll(mechanism, "-", "_"), value)
	}
	iterations = DefaultScramIterations
	if m[1] != "" && m[1] != "-1" {
		n, err := strconv.ParseInt(m[1], 10, 32)
		if err != nil {
			return 0, "", fmt.Errorf("invalid iterations %q for %s: %w", m[1], mechanism, err)
		}
		iterations = int32(n)
	} else if m[1] == "" && strings.HasPrefix(value, "iterations=") {
		return 0, "", fmt.Errorf("invalid iterations \"\" for %s", mechanism)
	}
	if iterations < MinScramIterations {
		return 0, "", fmt.Errorf("Iterations %d is less than the minimum %d required for %s", iterations, MinScramIterations, mechanism)
	}
	return iterations, m[2], nil
}

// alterScram is Kafka's alterUserScramCredentialConfigs: the deletions and
// upsertions of one user's credentials in one AlterUserScramCredentials
// request; kadm salts each password with a random salt.
func alterScram(ctx context.Context, adm *kadm.Client, user string, adds map[string]string, scramAdds, scramDels []string) error {
	var dels []kadm.DeleteSCRAM
	for _, mech := range scramDels {
		dels = append(dels, kadm.DeleteSCRAM{User: user, Mechanism: scramMechanisms[mech]})
	}
	var ups []kadm.UpsertSCRAM
	for _, mech := range scramAdds {
		iterations, password, err := ParseScramCredential(mech, adds[mech])
		if err != nil {
			return err
		}
		ups = append(ups, kadm.UpsertSCRAM{User: user, Mechanism: scramMechanisms[mech], Iterations: iterations, Password: password})
	}
	res, err := adm.AlterUserSCRAMs(ctx, dels, ups)
	if err != nil {
		return fmt.Errorf("alter user SCRAM credentials: %w", err)
	}
	for _, r := range res.Sorted() {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("alter SCRAM credentials of user %s: %w: %s", r.User, r.Err, r.ErrMessage)
			}
			return fmt.Errorf("alter SCRAM credentials of user %s: %w", r.User, r.Err)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
