// Real clients against Silkworm's security (issue 9): TLS, mutual TLS,
// SASL PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER, and ACLs.
//
// One silkworm process (startSecureBroker) has four listeners on 127.0.0.1:
//
//	PLAINTEXT   the admin: principal User:ANONYMOUS, a super user
//	SASL_SSL    PLAIN (alice, from the listener's JAAS config),
//	            SCRAM-SHA-256 and SCRAM-SHA-512 (bob, created with
//	            `silkworm configs`), OAUTHBEARER (unsecured tokens: erin)
//	SSL         mutual TLS: ssl.client.auth=required, the certificate's
//	            CN is the principal (ssl.principal.mapping.rules): dave
//	SSL_ONEWAY  TLS without a client certificate: User:ANONYMOUS
//
// Every certificate comes from a test CA made for the run (securitytest).
// The authorizer is on (StandardAuthorizer, super.users=User:ANONYMOUS) and
// `silkworm acls` gives each user Write and Read on the topics and Read on
// the groups named "<user>-..." (prefixed patterns), nothing else.
//
// TestSecurityClients: each client, over each mechanism it supports,
// produces keyed records with headers to a topic of its user and reads
// them back over the same listener, checking every key, value, header,
// timestamp and offset (check in scenario_test.go).
//
// TestSecurityRefusals: a wrong password, an unknown user, a client that
// does not trust the broker's CA, a plaintext client on a TLS port, no or an
// untrusted client certificate on the mutual TLS listener, a produce to a
// topic the ACLs hide and to one they let the user only read, an expired
// OAUTHBEARER token. Each client must fail and say why (the strings each
// must print are in the test's table); after each, a new franz-go client
// still logs in, produces and consumes.
//
// TestSecurityClusterKill (security_cluster_test.go): the kill -9 test of
// chaos_test.go on three nodes where every listener is SASL_SSL.

package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security/securitytest"
	"github.com/silkworm/silkworm/internal/testcluster"
)

// The test users and their secrets.
const (
	plainUser     = "alice" // SASL PLAIN, listed in the JAAS config
	plainPassword = "alice-secret"
	scramUser     = "bob" // SCRAM-SHA-256 and SCRAM-SHA-512, created with silkworm configs
	scramPassword = "bob-secret"
	certUser      = "dave" // mutual TLS: a certificate with CN=dave
	oauthUser     = "erin" // OAUTHBEARER: an unsecured token with sub=erin
)

// secureRecords is how many records each client round trip produces:
// enough to spread keyed records over every partition, few enough to keep
// the many round trips short.
const secureRecords = 300

// securePKI is the certificates of a secure broker's run, as files.
type securePKI struct {
	ca          *securitytest.CA
	caFile      string // PEM: the CA of the broker and client certificates
	otherCAFile string // PEM: a CA that signed nothing the broker trusts
	// certFile and keyFile are dave's client certificate (CN=dave).
	certFile, keyFile string
	// impostorCert and impostorKey claim CN=dave too, but another CA
	// signed them.
	impostorCert, impostorKey string
}

// tlsConfig is a crypto/tls client config trusting the run's CA.
func (p securePKI) tlsConfig() *tls.Config { return &tls.Config{RootCAs: p.ca.Pool()} }

// clientCertificate is dave's certificate for crypto/tls.
func (p securePKI) clientCertificate(t *testing.T) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		t.Fatalf("load %s: %v", p.certFile, err)
	}
	return c
}

// secureBroker is a silkworm server process with the four listeners the
// package comment lists. Its methods are called from the test goroutine.
type secureBroker struct {
	*processBroker        // Addr is the PLAINTEXT listener
	saslAddr       string // SASL_SSL
	mtlsAddr       string // SSL, client certificate required
	tlsAddr        string // SSL_ONEWAY
	pki            securePKI
}

// startSecureBroker makes the certificates, starts the broker, creates
// the SCRAM credentials with `silkworm configs` and the ACLs with
// `silkworm acls`.
func startSecureBroker(t *testing.T) *secureBroker {
	t.Helper()
	if os.Getenv("SILKWORM_TEST_BOOTSTRAP") != "" || os.Getenv("SILKWORM_TEST_BROKER") == "kfake" {
		t.Skip("the security tests configure their own silkworm process")
	}
	tmp := t.TempDir()
	pkiDir := filepath.Join(tmp, "pki")
	if err := os.Mkdir(pkiDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := securitytest.NewCA(t)
	other := securitytest.NewCA(t)
	p := securePKI{ca: ca, caFile: ca.WriteCertPEM(t, pkiDir), otherCAFile: other.WriteCertPEM(t, pkiDir)}
	p.certFile, p.keyFile = ca.Issue(t, certUser).WritePEM(t, pkiDir, certUser)
	p.impostorCert, p.impostorKey = other.Issue(t, certUser).WritePEM(t, pkiDir, "impostor")
	keystore := ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, pkiDir, "broker")

	ports := testcluster.Ports(t, 4)
	addr := func(i int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i])) }
	b := &secureBroker{
		saslAddr: addr(1),
		mtlsAddr: addr(2),
		tlsAddr:  addr(3),
		pki:      p,
	}
	b.processBroker = startProcessBrokerOn(t, addr(0),
		fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_SSL://%s,SSL://%s,SSL_ONEWAY://%s", addr(0), b.saslAddr, b.mtlsAddr, b.tlsAddr),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,SSL_ONEWAY:SSL",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+keystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+p.caFile,
		"listener.name.ssl.ssl.client.auth=required",
		"listener.name.ssl.ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT",
		"listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		"listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "+
			`user_`+plainUser+`="`+plainPassword+`";`,
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS",
		"group.initial.rebalance.delay.ms=0",
	)
	b.createSCRAMUser(t)
	for _, user := range []string{plainUser, scramUser, certUser, oauthUser} {
		b.grantOwnTopicsAndGroups(t, user)
	}
	return b
}

// tool runs a silkworm admin tool against the PLAINTEXT listener and
// returns its output.
func (b *secureBroker) tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	args = append([]string{name, "--bootstrap-server", b.Addr()}, args...)
	out, err := exec.Command(b.node.Bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("silkworm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// createSCRAMUser gives bob SCRAM-SHA-256 and SCRAM-SHA-512 credentials
// with `silkworm configs`, as kafka-configs.sh would: one mechanism per
// run, since a KRaft controller refuses a request that alters one user
// twice (DUPLICATE_RESOURCE, Kafka's ScramControlManager), which both
// mechanisms in one --add-config would be.
func (b *secureBroker) createSCRAMUser(t *testing.T) {
	t.Helper()
	for _, cfg := range []string{"SCRAM-SHA-256=[iterations=4096,password=%s]", "SCRAM-SHA-512=[iterations=8192,password=%s]"} {
		out := b.tool(t, "configs", "--alter", "--entity-type", "users", "--entity-name", scramUser,
			"--add-config", fmt.Sprintf(cfg, scramPassword))
		if want := "Completed updating config for user " + scramUser + "."; !strings.Contains(out, want) {
			t.Fatalf("silkworm configs --alter: %q, want %q", out, want)
		}
	}
	out := b.tool(t, "configs", "--describe", "--entity-type", "users", "--entity-name", scramUser)
	want := "SCRAM credential configs for user-principal '" + scramUser + "' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192"
	if !strings.Contains(out, want) {
		t.Fatalf("silkworm configs --describe: %q, want %q", out, want)
	}
}

// grantOwnTopicsAndGroups lets user write and read the topics named
// "<user>-..." and read the groups named so, with `silkworm acls`.
func (b *secureBroker) grantOwnTopicsAndGroups(t *testing.T, user string) {
	t.Helper()
	prefix := user + "-"
	out := b.tool(t, "acls", "--add", "--allow-principal", "User:"+user, "--operation", "Write", "--operation", "Read",
		"--topic", prefix, "--resource-pattern-type", "prefixed")
	if want := "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=" + prefix + ", patternType=PREFIXED)`"; !strings.Contains(out, want) {
		t.Fatalf("silkworm acls --add --topic: %q, want %q", out, want)
	}
	out = b.tool(t, "acls", "--add", "--allow-principal", "User:"+user, "--operation", "Read",
		"--group", prefix, "--resource-pattern-type", "prefixed")
	if want := "(principal=User:" + user + ", host=*, operation=READ, permissionType=ALLOW)"; !strings.Contains(out, want) {
		t.Fatalf("silkworm acls --add --group: %q, want %q", out, want)
	}
}

// roundTrip creates topic (as the admin), lets c produce secureRecords
// records to it over addr and read them back over addr, and checks what
// it read.
func roundTrip(t *testing.T, b *secureBroker, c client, addr, topic string) {
	t.Helper()
	createTopic(t, b.Addr(), topic)
	want := makeRecords(c)[:secureRecords]
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	from := time.Now().Truncate(time.Millisecond)
	if err := c.produce(ctx, t, addr, topic, want); err != nil {
		t.Fatalf("%s produce: %v", c.name(), err)
	}
	to := time.Now()
	got, err := c.consume(ctx, t, addr, topic)
	if err != nil {
		t.Fatalf("%s consume: %v", c.name(), err)
	}
	verify(t, want, got, from, to)
}

// TestSecurityClients runs every client over every mechanism it supports.
func TestSecurityClients(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	p := b.pki

	// Kafka's defaults are ssl.protocol=TLSv1.3 and ssl.enabled.protocols=
	// TLSv1.2,TLSv1.3 (SslConfigs): a client offering TLS 1.3 gets it.
	t.Run("tls-1.3-by-default", func(t *testing.T) {
		for _, addr := range []string{b.saslAddr, b.mtlsAddr, b.tlsAddr} {
			cfg := p.tlsConfig()
			cfg.ServerName = "127.0.0.1"
			cfg.Certificates = []tls.Certificate{p.clientCertificate(t)}
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
			if err != nil {
				t.Fatalf("TLS handshake with %s: %v", addr, err)
			}
			if v := conn.ConnectionState().Version; v != tls.VersionTLS13 {
				t.Errorf("%s negotiated %s with a client offering TLS 1.2 and 1.3, want TLS 1.3 (Kafka's default ssl.enabled.protocols=TLSv1.2,TLSv1.3)",
					addr, tls.VersionName(v))
			}
			conn.Close()
		}
	})

	t.Run("kcat", func(t *testing.T) {
		needKcat(t)
		t.Run("sasl-ssl-plain", func(t *testing.T) {
			roundTrip(t, b, kcatSASL("plain", p.caFile, "PLAIN", plainUser, plainPassword), b.saslAddr, plainUser+"-kcat")
		})
		// librdkafka before 2.6.1 (Debian's kcat has 2.0.2) repeats its
		// nonce in client-final-message; Kafka 3.8.1-3.9 accept that,
		// Kafka 4.x does not; Silkworm does (internal/security/sasl).
		t.Run("sasl-ssl-scram-sha-512", func(t *testing.T) {
			c := kcatSASL("scram-sha-512", p.caFile, "SCRAM-SHA-512", scramUser, scramPassword)
			roundTrip(t, b, c, b.saslAddr, scramUser+"-kcat")
		})
		t.Run("ssl-client-certificate", func(t *testing.T) {
			roundTrip(t, b, kcatSSL("mtls", p.caFile, p.certFile, p.keyFile), b.mtlsAddr, certUser+"-kcat")
		})
	})

	t.Run("kafka-python", func(t *testing.T) {
		for _, tc := range []struct {
			label, addr, topic string
			sec                pythonSecurity
		}{
			{"ssl", b.tlsAddr, "anonymous-python", pythonSecurity{protocol: "SSL", caFile: p.caFile}},
			{"ssl-client-certificate", b.mtlsAddr, certUser + "-python",
				pythonSecurity{protocol: "SSL", caFile: p.caFile, certFile: p.certFile, keyFile: p.keyFile}},
			{"sasl-ssl-plain", b.saslAddr, plainUser + "-python",
				pythonSecurity{protocol: "SASL_SSL", caFile: p.caFile, mechanism: "PLAIN", username: plainUser, password: plainPassword}},
			{"sasl-ssl-scram-sha-256", b.saslAddr, scramUser + "-python-256",
				pythonSecurity{protocol: "SASL_SSL", caFile: p.caFile, mechanism: "SCRAM-SHA-256", username: scramUser, password: scramPassword}},
			{"sasl-ssl-scram-sha-512", b.saslAddr, scramUser + "-python-512",
				pythonSecurity{protocol: "SASL_SSL", caFile: p.caFile, mechanism: "SCRAM-SHA-512", username: scramUser, password: scramPassword}},
		} {
			t.Run(tc.label, func(t *testing.T) {
				roundTrip(t, b, securePython(t, tc.label, tc.sec), tc.addr, tc.topic)
			})
		}
	})

	t.Run("kafkajs", func(t *testing.T) {
		for _, tc := range []struct {
			label, mechanism, user, password string
		}{
			{"plain", "plain", plainUser, plainPassword},
			{"scram-sha-256", "scram-sha-256", scramUser, scramPassword},
			{"scram-sha-512", "scram-sha-512", scramUser, scramPassword},
		} {
			t.Run("sasl-ssl-"+tc.label, func(t *testing.T) {
				// kafkajs reads through a consumer group: one the user may read.
				topic := tc.user + "-kafkajs-" + tc.label
				c := secureJS(t, "sasl-ssl-"+tc.label, jsSecurity{caFile: p.caFile, mechanism: tc.mechanism,
					username: tc.user, password: tc.password, group: topic + "-reader"})
				roundTrip(t, b, c, b.saslAddr, topic)
			})
		}
	})

	t.Run("franz-go", func(t *testing.T) {
		for _, tc := range []struct {
			c     secureFranz
			topic string
		}{
			{franzSASL("sasl-ssl-plain", p.tlsConfig(), plainMechanism(plainUser, plainPassword)), plainUser + "-franz"},
			{franzSASL("sasl-ssl-scram-sha-256", p.tlsConfig(), scram256(scramUser, scramPassword)), scramUser + "-franz-256"},
			{franzSASL("sasl-ssl-scram-sha-512", p.tlsConfig(), scram512(scramUser, scramPassword)), scramUser + "-franz-512"},
			{franzSASL("sasl-ssl-oauthbearer", p.tlsConfig(), unsecuredOAuth(t, oauthUser, time.Now)), oauthUser + "-franz"},
		} {
			t.Run(strings.TrimPrefix(tc.c.name(), "franz-go-"), func(t *testing.T) {
				roundTrip(t, b, tc.c, b.saslAddr, tc.topic)
			})
		}
	})
}

// stillServes checks that the broker accepts a new client: franz-go logs
// in with SCRAM-SHA-512 over SASL_SSL, produces a record to bob's topic
// and reads it back from where it was stored.
func (b *secureBroker) stillServes(t *testing.T) {
	t.Helper()
	const topic = scramUser + "-still-serving"
	ensureTopic(t, b.Addr(), topic)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	login := []kgo.Opt{kgo.SeedBrokers(b.saslAddr), kgo.DialTLSConfig(b.pki.tlsConfig()), kgo.SASL(scram512(scramUser, scramPassword))}
	producer, err := kgo.NewClient(append(login, kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	value := fmt.Sprintf("still serving %d", time.Now().UnixNano())
	stored, err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).First()
	if err != nil {
		t.Fatalf("the broker no longer serves a good client: produce: %v", err)
	}
	consumer, err := kgo.NewClient(append(login, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {stored.Partition: kgo.NewOffset().At(stored.Offset)},
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	fs := consumer.PollRecords(ctx, 1)
	if err := fs.Err(); err != nil {
		t.Fatalf("the broker no longer serves a good client: fetch: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != value {
		t.Fatalf("the broker no longer serves a good client: read %v at %s-%d@%d, want %q", recs, topic, stored.Partition, stored.Offset, value)
	}
}

// ensureTopic creates topic unless it exists.
func ensureTopic(t *testing.T, addr, topic string) {
	t.Helper()
	adm, done := admin(t, addr)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// refusal is one client run that the broker must refuse.
type refusal struct {
	name string
	// needs, when set, checks that the client is installed (skips the
	// subtest, or fails it under CI=true); the script clients check
	// when they are built, franz-go needs nothing.
	needs func(*testing.T)
	run   func(ctx context.Context, t *testing.T) error
	// want are strings the client's error must contain: what it says
	// about the reason.
	want []string
}

// produceOne asks a client to produce one record.
func produceOne(ctx context.Context, t *testing.T, c client, addr, topic string) error {
	return c.produce(ctx, t, addr, topic, makeRecords(c)[:1])
}

// TestSecurityRefusals checks that each client is refused, with an error
// that says why, and that the broker then still serves a good client.
func TestSecurityRefusals(t *testing.T) {
	t.Parallel()
	b := startSecureBroker(t)
	p := b.pki
	// Topics the refused clients aim at: their own (so that only the
	// authentication can fail), and bob's (which alice may not write).
	own := map[string]string{}
	for _, user := range []string{plainUser, certUser, "anonymous"} {
		own[user] = user + "-refused"
		createTopic(t, b.Addr(), own[user])
	}
	othersTopic := scramUser + "-not-for-alice"
	createTopic(t, b.Addr(), othersTopic)
	// A topic alice may read (so describe), but not write: a literal ACL.
	const readOnlyTopic = "shared-read-only"
	createTopic(t, b.Addr(), readOnlyTopic)
	if out := b.tool(t, "acls", "--add", "--allow-principal", "User:"+plainUser, "--operation", "Read", "--topic", readOnlyTopic); !strings.Contains(out,
		"Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name="+readOnlyTopic+", patternType=LITERAL)`") {
		t.Fatalf("silkworm acls --add: %q", out)
	}

	py := func(label string, sec pythonSecurity, extra ...string) func(*testing.T) client {
		return func(t *testing.T) client { return securePython(t, label, sec, extra...) }
	}
	js := func(label string, sec jsSecurity) func(*testing.T) client {
		sec.noRetries = true
		return func(t *testing.T) client { return secureJS(t, label, sec) }
	}
	script := func(c func(*testing.T) client, addr, topic string) func(context.Context, *testing.T) error {
		return func(ctx context.Context, t *testing.T) error { return produceOne(ctx, t, c(t), addr, topic) }
	}
	kcatRun := func(c secureKcat, addr, topic string) func(context.Context, *testing.T) error {
		return func(ctx context.Context, t *testing.T) error { return produceOne(ctx, t, c, addr, topic) }
	}
	// franz-go would retry a record until its context ends; a Metadata
	// request returns what the connection attempt ran into.
	franz := func(addr string, opts ...kgo.Opt) func(context.Context, *testing.T) error {
		return func(ctx context.Context, t *testing.T) error {
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(5 * time.Second)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			_, err = cl.Request(ctx, kmsg.NewPtrMetadataRequest())
			return err
		}
	}
	sasl := func(mech, user, password string) pythonSecurity {
		return pythonSecurity{protocol: "SASL_SSL", caFile: p.caFile, mechanism: mech, username: user, password: password}
	}
	const (
		// Kafka's answers to a failed SASL login (PlainSaslServer; the
		// generic SaslAuthenticationException text for SCRAM).
		plainFailed = "Authentication failed: Invalid username or password"
		scramFailed = "Authentication failed during authentication due to invalid credentials with SASL mechanism"
		// kafka-python 2.0.2 uses SaslHandshake v0, then raw SASL tokens:
		// a failed login can only be a closed connection, as in Kafka.
		pythonLoginClosed = "<authenticating>"
		// What OpenSSL clients print when the broker wants a client
		// certificate and gets none: the alert of TLS 1.2 or of TLS 1.3.
		noCertificate = "alert handshake failure|alert certificate required"
	)

	for _, r := range []refusal{
		// Wrong password, unknown user.
		{"kcat/wrong-password", needKcat, kcatRun(kcatSASL("plain", p.caFile, "PLAIN", plainUser, "not-"+plainPassword), b.saslAddr, own[plainUser]),
			[]string{"SASL authentication error: " + plainFailed}},
		{"kcat/unknown-user", needKcat, kcatRun(kcatSASL("plain", p.caFile, "PLAIN", "mallory", plainPassword), b.saslAddr, own[plainUser]),
			[]string{"SASL authentication error: " + plainFailed}},
		{"kafka-python/wrong-password", nil, script(py("scram", sasl("SCRAM-SHA-256", scramUser, "not-"+scramPassword)), b.saslAddr, own[plainUser]),
			[]string{pythonLoginClosed, "NoBrokersAvailable"}},
		{"kafka-python/unknown-user", nil, script(py("plain", sasl("PLAIN", "mallory", plainPassword)), b.saslAddr, own[plainUser]),
			[]string{pythonLoginClosed, "NoBrokersAvailable"}},
		{"kafkajs/wrong-password", nil, script(js("scram", jsSecurity{caFile: p.caFile, mechanism: "scram-sha-512", username: scramUser, password: "not-" + scramPassword}), b.saslAddr, own[plainUser]),
			[]string{"KafkaJSSASLAuthenticationError", scramFailed + " SCRAM-SHA-512"}},
		{"kafkajs/unknown-user", nil, script(js("plain", jsSecurity{caFile: p.caFile, mechanism: "plain", username: "mallory", password: plainPassword}), b.saslAddr, own[plainUser]),
			[]string{"KafkaJSSASLAuthenticationError", plainFailed}},
		{"franz-go/wrong-password", nil, franz(b.saslAddr, kgo.DialTLSConfig(p.tlsConfig()), kgo.SASL(scram256(scramUser, "not-"+scramPassword))),
			[]string{"SASL_AUTHENTICATION_FAILED", scramFailed + " SCRAM-SHA-256"}},
		{"franz-go/expired-oauthbearer-token", nil,
			franz(b.saslAddr, kgo.DialTLSConfig(p.tlsConfig()), kgo.SASL(unsecuredOAuth(t, oauthUser, func() time.Time { return time.Now().Add(-2 * time.Hour) }))),
			// Kafka's OAuthBearerSaslServer fails the exchange with its
			// error challenge as the message.
			[]string{"SASL_AUTHENTICATION_FAILED", `{"status":"invalid_token"}`}},

		// A client that does not trust the broker's CA.
		{"kcat/untrusted-broker-certificate", needKcat, kcatRun(kcatSSL("other-ca", p.otherCAFile, "", ""), b.tlsAddr, own["anonymous"]),
			[]string{"certificate verify failed"}},
		{"kafka-python/untrusted-broker-certificate", nil, script(py("other-ca", pythonSecurity{protocol: "SSL", caFile: p.otherCAFile}), b.tlsAddr, own["anonymous"]),
			[]string{"CERTIFICATE_VERIFY_FAILED"}},
		{"kafkajs/untrusted-broker-certificate", nil, script(js("other-ca", jsSecurity{caFile: p.otherCAFile}), b.tlsAddr, own["anonymous"]),
			[]string{"KafkaJSConnectionError: Connection error: self-signed certificate in certificate chain"}},
		{"franz-go/untrusted-broker-certificate", nil, franz(b.saslAddr, kgo.DialTLSConfig(&tls.Config{RootCAs: securitytest.NewCA(t).Pool()}), kgo.SASL(plainMechanism(plainUser, plainPassword))),
			[]string{"certificate signed by unknown authority"}},

		// A plaintext client on a TLS port.
		{"kcat/plaintext-on-tls-port", needKcat, kcatRun(secureKcat{"plaintext", nil}, b.saslAddr, own[plainUser]),
			[]string{"Disconnected while requesting ApiVersion", "connecting to a SSL listener?"}},
		{"kafka-python/plaintext-on-tls-port", nil, script(py("plaintext", pythonSecurity{}), b.tlsAddr, own["anonymous"]),
			// kafka-python guesses the broker's version from which probes
			// it answers; a closed connection answers none.
			[]string{"UnrecognizedBrokerVersion"}},
		{"kafkajs/plaintext-on-tls-port", nil, script(js("plaintext", jsSecurity{}), b.saslAddr, own[plainUser]),
			[]string{"KafkaJSConnectionClosedError: Closed connection"}},
		{"franz-go/plaintext-on-tls-port", nil, franz(b.saslAddr), []string{"is TLS missing?"}},

		// The mutual TLS listener: no client certificate, or one from a
		// CA the broker does not trust.
		{"kcat/no-client-certificate", needKcat, kcatRun(kcatSSL("no-cert", p.caFile, "", ""), b.mtlsAddr, own[certUser]),
			[]string{noCertificate}},
		{"kcat/untrusted-client-certificate", needKcat, kcatRun(kcatSSL("impostor", p.caFile, p.impostorCert, p.impostorKey), b.mtlsAddr, own[certUser]),
			[]string{"SSL routines::tlsv1 alert unknown ca"}},
		{"kafka-python/no-client-certificate", nil, script(py("no-cert", pythonSecurity{protocol: "SSL", caFile: p.caFile}), b.mtlsAddr, own[certUser]),
			// TLS 1.2 fails the handshake; with TLS 1.3 the client's
			// handshake is over before the broker checks its certificate,
			// and kafka-python's first write finds the connection closed.
			[]string{"ssl.SSLError: [SSL: SSLV3_ALERT_HANDSHAKE_FAILURE]|ssl.SSLError: [SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]|ssl.SSLEOFError: EOF occurred in violation of protocol"}},
		{"kafkajs/no-client-certificate", nil, script(js("no-cert", jsSecurity{caFile: p.caFile}), b.mtlsAddr, own[certUser]),
			[]string{"KafkaJSConnectionError", noCertificate}},

		// Authenticated, but the ACLs do not allow it: a topic alice may
		// not even describe (the Metadata answer refuses it), and one she
		// may read but not write (the Produce answer refuses it).
		{"kcat/acl-denied-topic", needKcat, kcatRun(kcatSASL("plain", p.caFile, "PLAIN", plainUser, plainPassword), b.saslAddr, othersTopic),
			[]string{"Delivery failed for message: Broker: Topic authorization failed"}},
		{"kcat/acl-denied-produce", needKcat, kcatRun(kcatSASL("plain", p.caFile, "PLAIN", plainUser, plainPassword), b.saslAddr, readOnlyTopic),
			[]string{"Delivery failed for message: Broker: Topic authorization failed"}},
		{"kafka-python/acl-denied-topic", nil, script(py("plain", sasl("PLAIN", plainUser, plainPassword), "--max-block-ms", "3000"), b.saslAddr, othersTopic),
			// kafka-python 2.0.2 only times out waiting for the metadata
			// of a topic the broker denies it; the script then shows the
			// error the broker gave (see explain_metadata_timeout).
			[]string{"KafkaTimeoutError", "metadata for topic " + othersTopic + ": TopicAuthorizationFailedError"}},
		{"kafka-python/acl-denied-produce", nil, script(py("plain", sasl("PLAIN", plainUser, plainPassword)), b.saslAddr, readOnlyTopic),
			[]string{"kafka.errors.TopicAuthorizationFailedError"}},
		{"kafkajs/acl-denied-topic", nil, script(js("plain", jsSecurity{caFile: p.caFile, mechanism: "plain", username: plainUser, password: plainPassword}), b.saslAddr, othersTopic),
			[]string{"KafkaJSNonRetriableError: Not authorized to access topics: [Topic authorization failed]"}},
		{"kafkajs/acl-denied-produce", nil, script(js("plain", jsSecurity{caFile: p.caFile, mechanism: "plain", username: plainUser, password: plainPassword}), b.saslAddr, readOnlyTopic),
			[]string{"KafkaJSProtocolError: Not authorized to access topics: [Topic authorization failed]"}},
		{"franz-go/acl-denied-topic", nil, func(ctx context.Context, t *testing.T) error {
			c := franzSASL("plain", p.tlsConfig(), plainMechanism(plainUser, plainPassword))
			return produceOne(ctx, t, c, b.saslAddr, othersTopic)
		}, []string{"TOPIC_AUTHORIZATION_FAILED"}},
		{"franz-go/acl-denied-produce", nil, func(ctx context.Context, t *testing.T) error {
			c := franzSASL("plain", p.tlsConfig(), plainMechanism(plainUser, plainPassword))
			return produceOne(ctx, t, c, b.saslAddr, readOnlyTopic)
		}, []string{"TOPIC_AUTHORIZATION_FAILED"}},
	} {
		t.Run(r.name, func(t *testing.T) {
			if r.needs != nil {
				r.needs(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			expectRefused(t, r.name, r.run(ctx, t), r.want...)
			b.stillServes(t)
		})
	}
}
