package interop

// The clients of the security tests: kcat with librdkafka properties, the
// Python and Node scripts with their security flags, franz-go with TLS and
// SASL options, and the checks that a refused client said why.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// secureKcat is kcat with librdkafka properties (-X key=value) added to
// every run. Like kcat, it sets the same headers on every record.
type secureKcat struct {
	label string
	props []string // key=value
}

func (k secureKcat) name() string { return "kcat-" + k.label }

func (k secureKcat) headers(int) []header { return kcat{}.headers(0) }

func (k secureKcat) args(args ...string) []string {
	for _, p := range k.props {
		args = append(args, "-X", p)
	}
	return args
}

func (k secureKcat) produce(ctx context.Context, t *testing.T, addr, topic string, recs []outRecord) error {
	var in bytes.Buffer
	for _, r := range recs {
		if strings.ContainsAny(r.Key, ":\n") || strings.Contains(r.Value, "\n") {
			return fmt.Errorf("record %q cannot be written as a kcat -K: line", r.Key)
		}
		fmt.Fprintf(&in, "%s:%s\n", r.Key, r.Value)
	}
	// A record librdkafka cannot deliver fails after message.timeout.ms
	// instead of being retried forever: a hang guard.
	args := []string{"-P", "-b", addr, "-t", topic, "-K", ":", "-X", "message.timeout.ms=30000"}
	for _, h := range k.headers(0) {
		args = append(args, "-H", h.Key+"="+h.Value)
	}
	_, err := runClient(ctx, t, in.Bytes(), "kcat", k.args(args...)...)
	return err
}

func (k secureKcat) consume(ctx context.Context, t *testing.T, addr, topic string) ([]record, error) {
	out, err := runClient(ctx, t, nil, "kcat", k.args("-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-J", "-q")...)
	if err != nil {
		return nil, err
	}
	return parseKcatJSON(out)
}

// parseKcatJSON reads the lines kcat -C -J prints.
func parseKcatJSON(out []byte) ([]record, error) {
	var recs []record
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m kcatMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return recs, fmt.Errorf("parse kcat output line %q: %w", sc.Text(), err)
		}
		if m.Key == nil || m.Payload == nil {
			return recs, fmt.Errorf("kcat read a record without key or value: %s", sc.Text())
		}
		if m.TsType != "create" {
			return recs, fmt.Errorf("kcat read timestamp type %q, want create: %s", m.TsType, sc.Text())
		}
		if len(m.Headers)%2 != 0 {
			return recs, fmt.Errorf("kcat printed an odd header list: %s", sc.Text())
		}
		hs := []header{}
		for i := 0; i < len(m.Headers); i += 2 {
			hs = append(hs, header{m.Headers[i], m.Headers[i+1]})
		}
		recs = append(recs, record{
			Partition: m.Partition, Offset: m.Offset,
			Key: *m.Key, Value: *m.Payload, Headers: hs, Timestamp: m.Ts,
		})
	}
	return recs, sc.Err()
}

// kcatSASL is kcat over SASL_SSL with a SASL mechanism and login.
func kcatSASL(label, caFile, mechanism, user, password string) secureKcat {
	return secureKcat{label, []string{
		"security.protocol=SASL_SSL", "ssl.ca.location=" + caFile,
		"sasl.mechanisms=" + mechanism, "sasl.username=" + user, "sasl.password=" + password,
	}}
}

// kcatSSL is kcat over SSL; certFile and keyFile may be empty (no client
// certificate).
func kcatSSL(label, caFile, certFile, keyFile string) secureKcat {
	props := []string{"security.protocol=SSL", "ssl.ca.location=" + caFile}
	if certFile != "" {
		props = append(props, "ssl.certificate.location="+certFile, "ssl.key.location="+keyFile)
	}
	return secureKcat{label, props}
}

// needKcat skips (fails under CI=true) a test when kcat is missing.
func needKcat(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("kcat")
	requireClient(t, err, "apt-get install -y kcat")
}

// needKafkaPython returns the interpreter and the script's path, or skips
// (fails under CI=true) when kafka-python is missing.
func needKafkaPython(t *testing.T) (py, script string) {
	t.Helper()
	py = pythonInterpreter()
	var missing error
	if _, err := exec.LookPath(py); err != nil {
		missing = fmt.Errorf("kafka-python: no %s: %w", py, err)
	} else if out, err := exec.Command(py, "-c", "import kafka").CombinedOutput(); err != nil {
		missing = fmt.Errorf("kafka-python: %s cannot import kafka: %w: %s", py, err, out)
	}
	requireClient(t, missing, "apt-get install -y python3-kafka")
	script, err := filepath.Abs(filepath.Join("python", "interop_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	return py, script
}

// needKafkaJS returns node and the script's path, or skips (fails under
// CI=true) when kafkajs is missing.
func needKafkaJS(t *testing.T) (node, script string) {
	t.Helper()
	var missing error
	node, err := exec.LookPath("node")
	if err != nil {
		missing = fmt.Errorf("kafkajs: node not found: %w", err)
	} else if _, err := os.Stat(filepath.Join("js", "node_modules", "kafkajs", "package.json")); err != nil {
		missing = fmt.Errorf("kafkajs: not installed in test/interop/js: %w", err)
	}
	requireClient(t, missing, "apt-get install -y nodejs npm && (cd test/interop/js && npm ci)")
	script, err = filepath.Abs(filepath.Join("js", "interop_client.js"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// pythonSecurity is kafka-python's security flags (see interop_client.py);
// they come before the mode. Failures print kafka-python's own log, which
// says why a connection was dropped.
type pythonSecurity struct {
	protocol           string // SSL or SASL_SSL
	caFile             string
	certFile, keyFile  string // a client certificate, or empty
	mechanism          string // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (SASL_SSL)
	username, password string
}

func (s pythonSecurity) flags() []string {
	f := []string{"--log-level", "ERROR", "--security-protocol", s.protocol}
	if s.caFile != "" {
		f = append(f, "--ssl-cafile", s.caFile)
	}
	if s.certFile != "" {
		f = append(f, "--ssl-certfile", s.certFile, "--ssl-keyfile", s.keyFile)
	}
	if s.mechanism != "" {
		f = append(f, "--sasl-mechanism", s.mechanism, "--sasl-username", s.username, "--sasl-password", s.password)
	}
	return f
}

// securePython is kafka-python through interop_client.py with security
// flags (plaintext when sec is the zero value) and any extra flags.
func securePython(t *testing.T, label string, sec pythonSecurity, extra ...string) scriptClient {
	py, script := needKafkaPython(t)
	cmd := []string{py, script, "--timeout", "60"}
	if sec.protocol != "" {
		cmd = append(cmd, sec.flags()...)
	}
	return scriptClient{"kafka-python-" + label, append(cmd, extra...)}
}

// jsSecurity is interop_client.js's security flags.
type jsSecurity struct {
	caFile             string // TLS when set
	certFile, keyFile  string
	mechanism          string // plain, scram-sha-256, scram-sha-512
	username, password string
	group              string // the consumer group of consume mode
	// noRetries makes kafkajs give up at the first failed connection
	// instead of retrying five times with backoff: for clients that
	// must be refused.
	noRetries bool
}

// secureJS is kafkajs through interop_client.js with security flags;
// plaintext when sec is the zero value.
func secureJS(t *testing.T, label string, sec jsSecurity) scriptClient {
	node, script := needKafkaJS(t)
	cmd := []string{node, script, "--timeout", "60"}
	if sec.caFile != "" {
		cmd = append(cmd, "--ssl-ca", sec.caFile)
	}
	if sec.certFile != "" {
		cmd = append(cmd, "--ssl-cert", sec.certFile, "--ssl-key", sec.keyFile)
	}
	if sec.mechanism != "" {
		cmd = append(cmd, "--sasl-mechanism", sec.mechanism, "--sasl-username", sec.username, "--sasl-password", sec.password)
	}
	if sec.group != "" {
		cmd = append(cmd, "--group", sec.group)
	}
	if sec.noRetries {
		cmd = append(cmd, "--retries", "0")
	}
	return scriptClient{"kafkajs-" + label, cmd}
}

// secureFranz is franz-go in this process with TLS and SASL options: an
// idempotent producer and a groupless consumer.
type secureFranz struct {
	label string
	opts  []kgo.Opt
}

func (c secureFranz) name() string { return "franz-go-" + c.label }

func (c secureFranz) headers(seq int) []header { return perRecordHeaders(c.name())(seq) }

func (c secureFranz) produce(ctx context.Context, _ *testing.T, addr, topic string, recs []outRecord) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	}, c.opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		hs := make([]kgo.RecordHeader, len(r.Headers))
		for j, h := range r.Headers {
			hs[j] = kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)}
		}
		rs[i] = &kgo.Record{Key: []byte(r.Key), Value: []byte(r.Value), Headers: hs}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

func (c secureFranz) consume(ctx context.Context, _ *testing.T, addr, topic string) ([]record, error) {
	return kgoRead(ctx, addr, topic, c.opts...)
}

// franzSASL is franz-go over SASL_SSL with mech; kgo checks the broker
// certificate against tlsCfg for the host name it dials.
func franzSASL(label string, tlsCfg *tls.Config, mech sasl.Mechanism) secureFranz {
	return secureFranz{label, []kgo.Opt{kgo.DialTLSConfig(tlsCfg), kgo.SASL(mech)}}
}

func plainMechanism(user, password string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: password}.AsMechanism()
}

func scram256(user, password string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
}

func scram512(user, password string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
}

// unsecuredOAuth is OAUTHBEARER with Kafka's unsecured (alg "none") token
// for sub, issued at issuedAt and valid for an hour; every connection gets
// a token issued at issuedAt, so a past issuedAt gives an expired token.
func unsecuredOAuth(t *testing.T, sub string, issuedAt func() time.Time) sasl.Mechanism {
	t.Helper()
	login, err := cli.NewUnsecuredLogin(map[string]string{"unsecuredLoginStringClaim_sub": sub})
	if err != nil {
		t.Fatalf("unsecured OAUTHBEARER login for %s: %v", sub, err)
	}
	return oauth.Oauth(func(context.Context) (oauth.Auth, error) { return login.Auth(issuedAt()) })
}

// expectRefused checks that a client run that had to fail did, and that
// its error (its stderr, for a child process) says why: it must contain
// every entry of want, where an entry "a|b" is satisfied by a or by b.
func expectRefused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: the client succeeded, want it refused", what)
		return
	}
	msg := err.Error()
	var said []string
	for _, w := range want {
		line := ""
		for _, alt := range strings.Split(w, "|") {
			if i := strings.Index(msg, alt); i >= 0 {
				start := strings.LastIndexByte(msg[:i], '\n') + 1
				end := strings.IndexByte(msg[i:], '\n')
				if end < 0 {
					end = len(msg) - i
				}
				line = strings.TrimSpace(msg[start : i+end])
				break
			}
		}
		if line == "" {
			t.Errorf("%s: the client failed without saying %q:\n%s", what, w, msg)
			return
		}
		if !slices.Contains(said, line) {
			said = append(said, line)
		}
	}
	t.Logf("%s: refused as expected:\n\t%s", what, strings.Join(said, "\n\t"))
}
