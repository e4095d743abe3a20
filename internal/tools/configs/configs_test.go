package configs

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func strp(s string) *string { return &s }

func TestDescribeGolden(t *testing.T) {
	var b bytes.Buffer
	WriteDescription(&b, "topics", "orders", false, []Entry{
		{Name: "retention.ms", Value: strp("1000"), Synonyms: []Synonym{
			{"DYNAMIC_TOPIC_CONFIG", "retention.ms", strp("1000")},
			{"DEFAULT_CONFIG", "log.retention.ms", nil},
		}},
	})
	WriteDescription(&b, "brokers", "1", true, []Entry{{Name: "ssl.key.password", Sensitive: true}})
	WriteDescription(&b, "brokers", "", false, nil)
	checkGolden(t, "describe", b.Bytes())
}

// TestQuotasGolden covers the quota and SCRAM lines of --describe for
// users, clients and ips.
func TestQuotasGolden(t *testing.T) {
	var b bytes.Buffer
	user := kadm.ClientQuotaEntityComponent{Type: "user", Name: strp("alice")}
	client := kadm.ClientQuotaEntityComponent{Type: "client-id", Name: strp("c1")}
	WriteQuotas(&b, kadm.DescribedClientQuotas{
		{Entity: kadm.ClientQuotaEntity{client, user}, Values: kadm.ClientQuotaValues{
			{Key: "producer_byte_rate", Value: 1024}, {Key: "consumer_byte_rate", Value: 2e7}}},
		{Entity: kadm.ClientQuotaEntity{user}, Values: kadm.ClientQuotaValues{{Key: "request_percentage", Value: 12.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}}, Values: kadm.ClientQuotaValues{{Key: "producer_byte_rate", Value: 100}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}, {Type: "client-id"}}, Values: kadm.ClientQuotaValues{{Key: "controller_mutation_rate", Value: 0.0005}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: strp("10.0.0.1")}}, Values: kadm.ClientQuotaValues{{Key: "connection_creation_rate", Value: 10}}},
	})
	WriteScramCredentials(&b, kadm.DescribedUserSCRAMs{
		"alice": {User: "alice", CredInfos: []kadm.CredInfo{{Mechanism: kadm.ScramSha512, Iterations: 8192}, {Mechanism: kadm.ScramSha256, Iterations: 4096}}},
		"bob":   {User: "bob", Err: kerr.ResourceNotFound, ErrMessage: "Attempt to describe a user credential that does not exist: bob"},
		"carol": {User: "carol", Err: kerr.ClusterAuthorizationFailed},
	})
	checkGolden(t, "quotas", b.Bytes())
}

func TestParseJavaDouble(t *testing.T) {
	for in, want := range map[string]float64{"1024": 1024, " 1e3 ": 1000, "2.5d": 2.5, "7F": 7} {
		if got, err := parseJavaDouble(in); err != nil || got != want {
			t.Errorf("parseJavaDouble(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := parseJavaDouble("fast"); err == nil {
		t.Error("parseJavaDouble(fast): want an error")
	}
}

func TestParseAddConfig(t *testing.T) {
	got, err := ParseAddConfig("k1=v1,k2=[a,b,c], k3 = v3 ,SCRAM-SHA-512=[iterations=8192,password=p=w]")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"k1": "v1", "k2": "a,b,c", "k3": "v3", "SCRAM-SHA-512": "iterations=8192,password=p=w"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := ParseAddConfig("ssl.endpoint.identification.algorithm=,"); err != nil || !reflect.DeepEqual(got, map[string]string{"ssl.endpoint.identification.algorithm": ""}) {
		t.Errorf("empty value and trailing comma: %v, %v", got, err)
	}
	for _, bad := range []string{"novalue", "a=b=c", "", ",a=1", "bad key=1"} {
		if _, err := ParseAddConfig(bad); err == nil {
			t.Errorf("ParseAddConfig(%q): want an error", bad)
		}
	}
}

func TestParseScramCredential(t *testing.T) {
	for _, tc := range []struct {
		value      string
		iterations int32
		password   string
	}{
		{"iterations=8192,password=alice-secret", 8192, "alice-secret"},
		{"password=p,w=x", DefaultScramIterations, "p,w=x"},
		{"iterations=-1,password=p", DefaultScramIterations, "p"},
	} {
		it, pw, err := ParseScramCredential("SCRAM-SHA-512", tc.value)
		if err != nil || it != tc.iterations || pw != tc.password {
			t.Errorf("ParseScramCredential(%q) = %d, %q, %v", tc.value, it, pw, err)
		}
	}
	for value, want := range map[string]string{
		"secret":                          "Invalid credential property SCRAM_SHA_256=secret",
		"iterations=100,password=x":       "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256",
		"iterations=,password=x":          "invalid iterations",
		"iterations=99999999999,password": "Invalid credential property",
	} {
		if _, _, err := ParseScramCredential("SCRAM-SHA-256", value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseScramCredential(%q) = %v, want an error containing %q", value, err, want)
		}
	}
}

// TestEntities checks how the command line becomes Kafka's entity types
// and names, and the command-line checks before any connection.
func TestEntities(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		types, names []string
	}{
		{[]string{"--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "c1"}, []string{"users", "clients"}, []string{"alice", "c1"}},
		{[]string{"--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "c1"}, []string{"users", "clients"}, []string{"", "c1"}},
		{[]string{"--entity-type", "users", "--entity-type", "clients", "--entity-name", "alice"}, []string{"users", "clients"}, []string{"alice"}},
		{[]string{"--user", "alice", "--client", "c1"}, []string{"clients", "users"}, []string{"c1", "alice"}},
		{[]string{"--user-defaults", "--client", "c1"}, []string{"clients", "users"}, []string{"c1", ""}},
		{[]string{"--entity-type", "users"}, []string{"users"}, nil},
	} {
		o, err := parse(append([]string{"--bootstrap-server", "x:1", "--describe"}, tc.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.check(context.Background()); err != nil {
			t.Errorf("%q: %v", tc.args, err)
		}
		if !reflect.DeepEqual(o.types, tc.types) || !reflect.DeepEqual(o.names, tc.names) {
			t.Errorf("%q: types %q names %q, want %q %q", tc.args, o.types, o.names, tc.types, tc.names)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--entity-type", "users"}, "Command must include exactly one action: --describe, --alter"},
		{[]string{"--describe", "--entity-type", "users", "--add-config", "a=1"}, `Option "[describe]" can't be used with option "[add-config]"`},
		{[]string{"--describe", "--entity-type", "users", "--entity-type", "users"}, "Duplicate entity type(s) specified: users"},
		{[]string{"--describe", "--entity-type", "widgets"}, "Invalid entity type widgets, the entity type must be one of topics, clients, users, brokers, ips"},
		{[]string{"--describe"}, "At least one entity type must be specified"},
		{[]string{"--describe", "--entity-type", "users", "--entity-type", "topics"}, "Only 'users' and 'clients' entity types may be specified together"},
		{[]string{"--describe", "--entity-type", "users", "--user", "alice"}, "Duplicate entity type(s) specified: users"},
		{[]string{"--describe", "--entity-type", "clients", "--user", "alice"}, "--entity-{type,name,default} should not be used in conjunction with specific entity flags"},
		{[]string{"--describe", "--entity-type", "brokers", "--entity-name", "one"}, "The entity name for brokers must be a valid integer broker id, but it is: one"},
		{[]string{"--describe", "--entity-type", "topics", "--entity-default"}, "--entity-default must not be specified with --describe of topics"},
		{[]string{"--alter", "--entity-type", "users", "--add-config", "a=1"}, "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips"},
		{[]string{"--alter", "--entity-type", "topics", "--add-config", "a=1"}, "An entity name must be specified with --alter of topics"},
		{[]string{"--alter", "--user", "alice"}, "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"},
		{[]string{"--alter", "--user", "alice", "--add-config", "a=1", "--add-config-file", "f"}, "Only one of --add-config or --add-config-file must be specified"},
		{[]string{"--alter", "--entity-type", "users", "--entity-type", "clients", "--entity-name", "alice", "--add-config", "a=1"}, "An entity name must be specified for every entity type"},
	} {
		o, err := parse(append([]string{"--bootstrap-server", "x:1"}, tc.args...), &bytes.Buffer{})
		if err == nil {
			err = o.check(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestAlterChecks covers the checks of --alter for users and clients that
// come before any request.
func TestAlterChecks(t *testing.T) {
	for _, tc := range []struct {
		types, names []string
		adds         map[string]string
		dels         []string
		want         string
	}{
		{[]string{"users"}, []string{"alice"}, map[string]string{"retention.ms": "1"}, nil, "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: retention.ms"},
		{[]string{"users"}, []string{"alice"}, nil, []string{"nope"}, "Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: nope"},
		{[]string{"clients"}, []string{"c1"}, map[string]string{"SCRAM-SHA-256": "password=x"}, nil, "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: SCRAM-SHA-256"},
		{[]string{"users", "clients"}, []string{"alice", "c1"}, nil, []string{"SCRAM-SHA-512"}, "Only quota configs can be deleted for 'clients'"},
		{[]string{"users"}, []string{""}, map[string]string{"SCRAM-SHA-256": "password=x"}, nil, "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server."},
		{[]string{"users"}, []string{"alice"}, map[string]string{"SCRAM-SHA-256": "password=x", "producer_byte_rate": "1"}, nil, "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server."},
		{[]string{"users"}, []string{"alice"}, map[string]string{"SCRAM-SHA-256": "iterations=10,password=x"}, nil, "Iterations 10 is less than the minimum 4096 required for SCRAM-SHA-256"},
	} {
		err := alterUsersOrClients(context.Background(), nil, tc.types, tc.names, tc.adds, tc.dels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v add %v delete %v: error %v, want one containing %q", tc.types, tc.names, tc.adds, tc.dels, err, tc.want)
		}
	}
	err := alterIPQuotas(context.Background(), nil, []string{"ips"}, []string{"10.0.0.1"}, map[string]string{"producer_byte_rate": "1"}, nil)
	if err == nil || !strings.Contains(err.Error(), "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: producer_byte_rate") {
		t.Errorf("ips: %v", err)
	}
	if javaExceptionName(kerr.ClusterAuthorizationFailed) != "ClusterAuthorizationException" ||
		javaExceptionName(kerr.UnknownServerError) != "UnknownServerException" {
		t.Error("javaExceptionName")
	}
}

func TestHelpGolden(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "help", out.Bytes())
}
