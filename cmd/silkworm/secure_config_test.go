package main

// These tests check that the documented secure setup works as
// config/secure/README.md says: a copy of config/secure/ (the certificate
// script and the properties files, unmodified) goes into a temporary
// directory, which becomes the working directory, as the repository root
// is for a reader; the certificates are made there by gen-certs.sh; brokers
// start from the copied files with only their ports changed; and the
// README's commands run, word for word but for the addresses, through the
// tools' entry points. Each command is looked up in the README first, so a
// command the README no longer shows fails the test instead of being
// tested in vain.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/security/securitytest"
	"github.com/silkworm/silkworm/internal/tools/acls"
	"github.com/silkworm/silkworm/internal/tools/configs"
	"github.com/silkworm/silkworm/internal/tools/console"
	"github.com/silkworm/silkworm/internal/tools/topics"
)

// The commands of config/secure/README.md, as it prints them (continuation
// lines joined). The bootstrap address 127.0.0.1:9093 is rewritten to the
// test broker's.
const (
	secureServerCmd = `./silkworm server --config config/secure/server.properties`

	cmdCreateAlice = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-name alice --add-config 'SCRAM-SHA-512=[password=alice-secret]'`
	cmdCreateOrders = `./silkworm topics --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--create --topic orders --partitions 3`
	cmdAllowWrite = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--add --allow-principal User:alice --operation Write --topic orders`
	cmdProduce = `./silkworm console-producer --bootstrap-server 127.0.0.1:9093 ` +
		`--producer.config config/secure/alice.properties --topic orders`
	produceInput = "first order\nsecond order\n" // the README's printf
	cmdAllowRead = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--add --allow-principal User:alice --consumer --topic orders --group orders-app`
	cmdConsume = `./silkworm console-consumer --bootstrap-server 127.0.0.1:9093 --consumer.config config/secure/alice.properties ` +
		`--topic orders --group orders-app --from-beginning --max-messages 2`
	cmdKcatProduce = `kcat -b 127.0.0.1:9093 -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 ` +
		`-X sasl.username=alice -X sasl.password=alice-secret -X ssl.ca.location=config/secure/certs/ca.pem ` +
		`-t orders -P`

	cmdCreatePayments = `./silkworm topics --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--create --topic payments --partitions 1`
	cmdProducePayment = `./silkworm console-producer --bootstrap-server 127.0.0.1:9093 ` +
		`--producer.config config/secure/alice.properties --topic payments`
	cmdAliceList = `./silkworm topics --bootstrap-server 127.0.0.1:9093 --command-config config/secure/alice.properties --list`

	cmdAddBob = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-name bob --add-config 'SCRAM-SHA-512=[iterations=8192,password=bob-secret]'`
	cmdListUsers = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--describe --entity-type users`
	cmdDeleteBob = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-name bob --delete-config SCRAM-SHA-512`

	cmdAllowBobPrefix = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--add --allow-principal User:bob --producer --topic sales- --resource-pattern-type prefixed`
	cmdListACLs    = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties --list`
	cmdListBobACLs = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--list --principal User:bob`
	cmdRemoveBobPrefix = `./silkworm acls --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--remove --allow-principal User:bob --producer --topic sales- --resource-pattern-type prefixed --force`

	cmdQuotaAlice = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-name alice --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152`
	cmdDescribeAlice = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--describe --entity-type users --entity-name alice`
	cmdQuotaDefault = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-default --add-config producer_byte_rate=5242880`
	cmdQuotaBilling = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-name alice --entity-type clients --entity-name billing ` +
		`--add-config producer_byte_rate=102400`
	cmdQuotaDefaultDelete = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type users --entity-default --delete-config producer_byte_rate`

	cmdGenCerts = `config/secure/gen-certs.sh`
	cmdRotate   = `./silkworm configs --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties ` +
		`--alter --entity-type brokers --entity-name 1 ` +
		`--add-config listener.name.sasl_ssl.ssl.keystore.location=config/secure/certs/broker-keystore.pem`

	cmdMTLSServer = `./silkworm server --config config/secure/server.properties ` +
		`--override listeners=SASL_SSL://127.0.0.1:9093,SSL://127.0.0.1:9094 ` +
		`--override advertised.listeners=SASL_SSL://127.0.0.1:9093,SSL://127.0.0.1:9094 ` +
		`--override listener.security.protocol.map=SASL_SSL:SASL_SSL,SSL:SSL ` +
		`--override listener.name.ssl.ssl.client.auth=required ` +
		`--override 'listener.name.ssl.ssl.principal.mapping.rules=RULE:^CN=([^,]+),O=Silkworm$/$1/,DEFAULT'`
	cmdKcatMTLS = `kcat -b 127.0.0.1:9094 -X security.protocol=ssl ` +
		`-X ssl.ca.location=config/secure/certs/ca.pem -X ssl.certificate.location=config/secure/certs/alice.pem ` +
		`-X ssl.key.location=config/secure/certs/alice-key.pem -t orders -P`

	cmdClusterNode = `./silkworm server config/secure/cluster/node%d.properties`
)

// secureEnv is a working directory holding a copy of config/secure/ with
// certificates, as the README's reader has it. Not safe for concurrent use.
type secureEnv struct {
	t      *testing.T
	readme string            // config/secure/README.md, continuation lines joined
	madeUp map[string]bool   // commands of the test's own, not from the README
	addrs  map[string]string // address in the README -> test broker's address
	ca     *securitytest.CA  // the CA when Go made the certificates (no openssl)
}

// newSecureEnv copies config/secure/ (without certs/) into a temporary
// directory, makes it the working directory for the rest of the test, and
// makes the certificates there.
func newSecureEnv(t *testing.T) *secureEnv {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "config", "secure"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(src, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copySecureDir(t, src, filepath.Join(dir, "config", "secure"))
	t.Chdir(dir)
	e := &secureEnv{
		t:      t,
		readme: regexp.MustCompile(`[ \t]*\\\n[ \t]*`).ReplaceAllString(string(readme), " "),
		madeUp: map[string]bool{},
		addrs:  map[string]string{},
	}
	e.makeCerts()
	return e
}

// copySecureDir copies src to dst, leaving out certificates a developer
// made in the repository.
func copySecureDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "certs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// makeCerts runs config/secure/gen-certs.sh as the README says; without
// bash or openssl it writes the files the configs use with Go instead.
// Called again, it re-issues the broker and client certificates with the
// same CA, as re-running the script does.
func (e *secureEnv) makeCerts() {
	t := e.t
	t.Helper()
	_, errBash := exec.LookPath("bash")
	_, errSSL := exec.LookPath("openssl")
	if errBash == nil && errSSL == nil {
		e.documented(cmdGenCerts)
		out, err := exec.Command(cmdGenCerts).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cmdGenCerts, err, out)
		}
		return
	}
	t.Logf("no bash or openssl: making the certificates with Go, not with %s", cmdGenCerts)
	dir := filepath.Join("config", "secure", "certs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if e.ca == nil {
		e.ca = securitytest.NewCA(t)
		if err := os.WriteFile(filepath.Join(dir, "ca.pem"), e.ca.CertPEM(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.ca.IssueTemplate(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost", Organization: []string{"Silkworm"}},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}).KeystorePEM(t, dir, "broker")
	alice := e.ca.IssueTemplate(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "alice", Organization: []string{"Silkworm"}},
	})
	alice.WritePEM(t, dir, "alice")
	alice.WritePKCS12(t, dir, "alice", "changeit")
}

// documented fails the test unless the README shows cmd (or the test
// made it up and said so).
func (e *secureEnv) documented(cmd string) {
	e.t.Helper()
	if !e.madeUp[cmd] && !strings.Contains(e.readme, cmd) {
		e.t.Fatalf("config/secure/README.md no longer shows the command under test:\n%s", cmd)
	}
}

// words splits a command line as the shell does for the README's
// commands: blanks separate words; single and double quotes group and are
// removed.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// args are the words of cmd after its program (and subcommand, for
// ./silkworm), with the README's addresses replaced by the test brokers'.
func (e *secureEnv) args(cmd string, skip int) []string {
	w := words(cmd)[skip:]
	for i := range w {
		for from, to := range e.addrs {
			w[i] = strings.ReplaceAll(w[i], from, to)
		}
	}
	return w
}

// toolEntry maps a subcommand to the Go entry point main runs for it.
var toolEntry = map[string]func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error{
	"configs": func(ctx context.Context, a []string, _ io.Reader, o, e io.Writer) error {
		return configs.Run(ctx, a, o, e)
	},
	"acls": acls.Run,
	"topics": func(ctx context.Context, a []string, _ io.Reader, o, e io.Writer) error {
		return topics.Run(ctx, a, o, e)
	},
	"console-producer": console.RunProducer,
	"console-consumer": func(ctx context.Context, a []string, _ io.Reader, o, e io.Writer) error {
		return console.RunConsumer(ctx, a, o, e)
	},
}

// toolResult is what a command printed and how it ended.
type toolResult struct {
	stdout, stderr string
	err            error
}

func (r toolResult) String() string {
	return fmt.Sprintf("error %v\n--- stdout\n%s--- stderr\n%s", r.err, r.stdout, r.stderr)
}

// tool runs a documented ./silkworm command in process with stdin.
func (e *secureEnv) tool(cmd, stdin string) toolResult {
	e.t.Helper()
	e.documented(cmd)
	w := words(cmd)
	if len(w) < 2 || w[0] != "./silkworm" || toolEntry[w[1]] == nil {
		e.t.Fatalf("not a tool command this test runs: %s", cmd)
	}
	// A guard against a hung test, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	err := toolEntry[w[1]](ctx, e.args(cmd, 2), strings.NewReader(stdin), &out, &errOut)
	return toolResult{out.String(), errOut.String(), err}
}

// ok runs cmd and fails the test unless it succeeds and prints each of want.
func (e *secureEnv) ok(cmd, stdin string, want ...string) toolResult {
	e.t.Helper()
	r := e.tool(cmd, stdin)
	if r.err != nil {
		e.t.Fatalf("%s\nfailed: %s", cmd, r)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			e.t.Errorf("%s\nprinted no %q: %s", cmd, w, r)
		}
	}
	return r
}

// refused runs cmd and fails the test unless it fails naming want.
func (e *secureEnv) refused(cmd, stdin, want string) {
	e.t.Helper()
	r := e.tool(cmd, stdin)
	if r.err == nil || !strings.Contains(r.stderr+r.err.Error(), want) {
		e.t.Errorf("%s\nwant a failure naming %s, got: %s", cmd, want, r)
	}
}

// startBroker loads path as the server command does, with overrides, and
// runs the broker until stop is called or the test ends. Every key of the
// file must be one Silkworm implements: an ignored key would make the
// docs promise something the broker does not do.
func startBroker(t *testing.T, path string, overrides ...string) (b *broker.Broker, stop func() error) {
	t.Helper()
	b, err := newBroker(path, overrides)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := b.Start(); err != nil {
		b.Close()
		t.Fatalf("start %s: %v", path, err)
	}
	stop = sync.OnceValue(b.Close)
	t.Cleanup(func() { stop() })
	return b, stop
}

func newBroker(path string, overrides []string) (*broker.Broker, error) {
	cfg, err := config.Load(path, overrides)
	if err != nil {
		return nil, err
	}
	if len(cfg.Ignored) > 0 {
		return nil, fmt.Errorf("keys Silkworm ignores: %v", cfg.Ignored)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SILKWORM_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("config", path)
	}
	return broker.New(cfg, log)
}

// serverOverrides are the --override values of a documented server
// command, with every listener port made 0 (chosen by the kernel).
func (e *secureEnv) serverOverrides(cmd string) []string {
	e.t.Helper()
	e.documented(cmd)
	var out []string
	w := words(cmd)
	for i := 0; i < len(w); i++ {
		if w[i] == "--override" && i+1 < len(w) {
			i++
			out = append(out, w[i])
		}
	}
	return portsZero(out)
}

var listenerPort = regexp.MustCompile(`(://127\.0\.0\.1:)[0-9]+`)

func portsZero(overrides []string) []string {
	out := slices.Clone(overrides)
	for i, o := range out {
		if strings.HasPrefix(o, "listeners=") || strings.HasPrefix(o, "advertised.listeners=") {
			out[i] = listenerPort.ReplaceAllString(o, "${1}0")
		}
	}
	return out
}

// servedSerial is the serial number of the certificate a TLS listener
// presents, verified against the test CA for the name 127.0.0.1.
func servedSerial(t *testing.T, addr string) string {
	t.Helper()
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join("config", "secure", "certs", "ca.pem"))
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("read ca.pem: %v", err)
	}
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS to %s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// keystoreSerial is the serial number of the first certificate in the
// broker's PEM keystore.
func keystoreSerial(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("config", "secure", "certs", "broker-keystore.pem"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			t.Fatal("no certificate in broker-keystore.pem")
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return c.SerialNumber.String()
		}
	}
}

// kcat runs a documented kcat command with stdin, if kcat is installed.
func (e *secureEnv) kcat(cmd, stdin string) (out string, ran bool, err error) {
	e.t.Helper()
	e.documented(cmd)
	if _, err := exec.LookPath("kcat"); err != nil {
		e.t.Logf("kcat is not installed (apt-get install kcat); skipped: %s", cmd)
		return "", false, nil
	}
	c := exec.Command("kcat", e.args(cmd, 1)...)
	c.Stdin = strings.NewReader(stdin)
	b, err := c.CombinedOutput()
	return string(b), true, err
}

// TestSecureSingleNode walks config/secure/README.md on one broker started
// from server.properties: the admin creates alice, a topic and ACLs;
// alice produces and consumes and is refused elsewhere; users, ACLs and
// quotas are managed; the broker certificate is rotated; and, restarted
// with the mutual TLS overrides, alice's client certificate maps to her
// principal.
func TestSecureSingleNode(t *testing.T) {
	e := newSecureEnv(t)
	serverProps := filepath.Join("config", "secure", "server.properties")
	e.documented(secureServerCmd)
	b, stop := startBroker(t, serverProps, portsZero([]string{
		"listeners=SASL_SSL://127.0.0.1:9093", "advertised.listeners=SASL_SSL://127.0.0.1:9093"})...)
	addr := b.ListenerAddr("SASL_SSL")
	if addr == "" {
		t.Fatal("server.properties has no SASL_SSL listener")
	}
	e.addrs["127.0.0.1:9093"] = addr
	if _, err := os.Stat("silkworm-secure-data"); err != nil {
		t.Errorf("log.dirs is not ./silkworm-secure-data: %v", err)
	}

	// Step 3: as admin.
	e.ok(cmdCreateAlice, "", "Completed updating config for user alice.")
	e.ok(cmdCreateOrders, "", "Created topic orders.")
	e.ok(cmdAllowWrite, "", "operation=WRITE, permissionType=ALLOW")

	// Step 4: as alice.
	e.ok(cmdProduce, produceInput)
	e.ok(cmdAllowRead, "", "operation=READ", "resourceType=GROUP, name=orders-app")
	got := e.ok(cmdConsume, "").stdout
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 2 ||
		!slices.Contains(lines, "first order") || !slices.Contains(lines, "second order") {
		t.Errorf("alice consumed %q, want the two orders she produced", got)
	}
	// kcat with SCRAM works whatever its librdkafka: Debian 12's 2.0.2
	// repeats the client nonce, which Silkworm accepts as Kafka 3.x did.
	if out, ran, err := e.kcat(cmdKcatProduce, "an order from kcat\n"); ran && err != nil {
		t.Errorf("%s\nfailed: %v\n%s", cmdKcatProduce, err, out)
	}

	// Step 5: alice may use orders and nothing else.
	e.ok(cmdCreatePayments, "", "Created topic payments.")
	e.refused(cmdProducePayment, "a payment\n", "TOPIC_AUTHORIZATION_FAILED")
	if got := e.ok(cmdAliceList, "").stdout; got != "orders\n" {
		t.Errorf("alice's topic list: %q, want only orders", got)
	}

	// Users: a new user's settings are a copy of alice.properties with the
	// name and password changed; a deleted credential stops new logins.
	e.ok(cmdAddBob, "", "Completed updating config for user bob.")
	e.ok(cmdListUsers, "", "user-principal 'bob' are SCRAM-SHA-512=iterations=8192",
		"user-principal 'alice' are SCRAM-SHA-512=iterations=4096")
	alice, err := os.ReadFile(filepath.Join("config", "secure", "alice.properties"))
	if err != nil {
		t.Fatal(err)
	}
	bobProps := filepath.Join("config", "secure", "bob.properties")
	if err := os.WriteFile(bobProps, bytes.ReplaceAll(alice, []byte("alice"), []byte("bob")), 0o644); err != nil {
		t.Fatal(err)
	}
	bobList := strings.ReplaceAll(cmdAliceList, "alice.properties", "bob.properties")
	e.madeUp[bobList] = true
	if r := e.tool(bobList, ""); r.err != nil || strings.TrimSpace(r.stdout) != "" {
		t.Errorf("bob, without ACLs, lists topics: %s; want success and no topics (an empty line, as Kafka prints)", r)
	}
	e.ok(cmdDeleteBob, "", "Completed updating config for user bob.")
	e.refused(bobList, "", "SASL_AUTHENTICATION_FAILED")

	// ACLs.
	e.ok(cmdAllowBobPrefix, "", "name=sales-, patternType=PREFIXED", "operation=CREATE, permissionType=ALLOW")
	e.ok(cmdListACLs, "", "name=orders, patternType=LITERAL", "name=sales-, patternType=PREFIXED", "name=orders-app")
	if got := e.ok(cmdListBobACLs, "", "User:bob").stdout; strings.Contains(got, "User:alice") {
		t.Errorf("bob's ACLs list alice's:\n%s", got)
	}
	e.ok(cmdRemoveBobPrefix, "")
	if got := e.ok(cmdListACLs, "").stdout; strings.Contains(got, "sales-") {
		t.Errorf("the prefixed ACLs are still listed after --remove:\n%s", got)
	}

	// Quotas.
	e.ok(cmdQuotaAlice, "", "Completed updating config for user alice.")
	e.ok(cmdDescribeAlice, "", "Quota configs for user-principal 'alice' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0")
	e.ok(cmdQuotaDefault, "", "Completed updating default config for users in the cluster.")
	e.ok(cmdQuotaBilling, "")
	e.ok(cmdQuotaDefaultDelete, "")

	// Rotating the broker certificate: new certificates from the same CA,
	// applied at once by setting the listener's keystore location.
	before := servedSerial(t, addr)
	e.makeCerts()
	after := keystoreSerial(t)
	if after == before {
		t.Fatalf("%s issued no new broker certificate (serial %s)", cmdGenCerts, before)
	}
	e.ok(cmdRotate, "", "Completed updating config for broker 1.")
	if got := servedSerial(t, addr); got != after {
		t.Errorf("after rotation the broker serves certificate %s, want the new one %s (old %s)", got, after, before)
	}
	// alice, who trusts the CA, is unaffected.
	if got := e.ok(cmdAliceList, "").stdout; got != "orders\n" {
		t.Errorf("alice's topic list after rotation: %q", got)
	}

	// Mutual TLS: the same data, restarted with the README's overrides.
	if err := stop(); err != nil {
		t.Fatalf("stop the broker: %v", err)
	}
	b, _ = startBroker(t, serverProps, e.serverOverrides(cmdMTLSServer)...)
	e.addrs["127.0.0.1:9093"] = b.ListenerAddr("SASL_SSL")
	e.addrs["127.0.0.1:9094"] = b.ListenerAddr("SSL")
	sslProps := filepath.Join("config", "secure", "alice-ssl.properties")
	err = os.WriteFile(sslProps, []byte("security.protocol=SSL\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location=config/secure/certs/ca.pem\n"+
		"ssl.keystore.type=PKCS12\nssl.keystore.location=config/secure/certs/alice.p12\nssl.keystore.password=changeit\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"`security.protocol=SSL`", "`ssl.keystore.type=PKCS12`",
		"`ssl.keystore.location=config/secure/certs/alice.p12`", "`ssl.keystore.password=changeit`"} {
		e.documented(s)
	}
	sslList := strings.ReplaceAll(strings.ReplaceAll(cmdAliceList, "alice.properties", "alice-ssl.properties"), "9093", "9094")
	e.madeUp[sslList] = true
	if got := e.ok(sslList, "").stdout; got != "orders\n" {
		t.Errorf("alice by certificate lists %q, want orders (the mapping rule makes her User:alice)", got)
	}
	// SCRAM logins still work after the restart: credentials and ACLs are
	// in the metadata.
	if got := e.ok(cmdAliceList, "").stdout; got != "orders\n" {
		t.Errorf("alice by password after the restart lists %q", got)
	}
	if out, ran, err := e.kcat(cmdKcatMTLS, "order by certificate\n"); ran && err != nil {
		t.Errorf("%s\nfailed: %v\n%s", cmdKcatMTLS, err, out)
	} else if ran {
		t.Logf("kcat produced to orders with alice's certificate")
	}
}

// freePort is a port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestSecureCluster starts the three nodes of config/secure/cluster/ in
// process (their client ports chosen by the kernel, their controller ports
// free ones) and runs steps 3 and 4 of the README against them, unchanged:
// the quorum runs over the SASL_SSL controller listener, followers fetch
// over SASL_SSL with the admin's PLAIN login until every replica is in
// sync, and alice produces to and consumes from the partition leaders.
func TestSecureCluster(t *testing.T) {
	e := newSecureEnv(t)
	const n = 3
	cports := make([]int, n)
	var voters []string
	for i := range cports {
		cports[i] = freePort(t)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, cports[i]))
	}
	brokers := make([]*broker.Broker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		path := filepath.Join("config", "secure", "cluster", fmt.Sprintf("node%d.properties", i+1))
		e.documented(fmt.Sprintf(cmdClusterNode, i+1))
		cfg, err := config.Load(path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if cfg.NodeID != int32(i+1) || cfg.InterBrokerListenerName != "SASL_SSL" ||
			cfg.ListenerSecurityProtocolMap["CONTROLLER"] != "SASL_SSL" || cfg.LogDirs[0] != fmt.Sprintf("./silkworm-secure-data/node%d", i+1) {
			t.Errorf("%s: node.id %d, inter-broker listener %s, controller protocol %s, log.dirs %v",
				path, cfg.NodeID, cfg.InterBrokerListenerName, cfg.ListenerSecurityProtocolMap["CONTROLLER"], cfg.LogDirs)
		}
		overrides := []string{
			fmt.Sprintf("listeners=SASL_SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", cports[i]),
			"advertised.listeners=SASL_SSL://127.0.0.1:0",
			"controller.quorum.voters=" + strings.Join(voters, ","),
		}
		wg.Add(1)
		go func() { // a node's start waits for a quorum: start them together
			defer wg.Done()
			b, err := newBroker(path, overrides)
			if err == nil {
				if err = b.Start(); err != nil {
					b.Close()
				}
			}
			brokers[i], errs[i] = b, err
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		var cw sync.WaitGroup
		for i, b := range brokers {
			if errs[i] == nil {
				cw.Go(func() { b.Close() })
			}
		}
		cw.Wait()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("start the cluster: %v", err)
	}
	for i, b := range brokers {
		e.addrs[fmt.Sprintf("127.0.0.1:%d", 9093+i)] = b.ListenerAddr("SASL_SSL")
	}

	e.ok(cmdCreateAlice, "", "Completed updating config for user alice.")
	e.ok(cmdCreateOrders, "", "Created topic orders.")
	e.ok(cmdAllowWrite, "")
	e.ok(cmdProduce, produceInput)
	e.ok(cmdAllowRead, "")
	got := e.ok(cmdConsume, "").stdout
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 2 ||
		!slices.Contains(lines, "first order") || !slices.Contains(lines, "second order") {
		t.Errorf("alice consumed %q, want the two orders she produced", got)
	}

	// Every partition has three replicas in sync: the followers fetch over
	// SASL_SSL as admin. The deadline guards against a hung test.
	describe := `./silkworm topics --bootstrap-server 127.0.0.1:9093 --command-config config/secure/admin.properties --describe --topic orders`
	e.madeUp[describe] = true
	isr := regexp.MustCompile(`Isr: ([0-9]+),([0-9]+),([0-9]+)\t`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := e.ok(describe, "", "ReplicationFactor: 3").stdout
		if len(isr.FindAllString(out, -1)) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas did not all join the ISR:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSecureTopLevelREADME checks that the Security section of README.md
// still shows the commands TestSecureSingleNode runs: editing one there
// without the test fails here.
func TestSecureTopLevelREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := regexp.MustCompile(`[ \t]*\\\n[ \t]*`).ReplaceAllString(string(data), " ")
	for _, cmd := range []string{cmdGenCerts, secureServerCmd, cmdCreateAlice, cmdCreateOrders, cmdAllowWrite, cmdProduce} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md's Security section no longer shows a command the test runs:\n%s", cmd)
		}
	}
}
