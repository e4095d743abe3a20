package cli

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	kafkasasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/silkworm/silkworm/internal/security/sasl"
	"github.com/silkworm/silkworm/internal/security/securitytest"
)

const (
	plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`
	scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`
	oauthJAAS = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";`
)

// mechanisms returns the SASL mechanism names and whether TLS is set on a
// client built from p.
func mechanisms(t *testing.T, p Props) ([]string, *tls.Config) {
	t.Helper()
	cl := build(t, Admin, p)
	var names []string
	if ms, ok := cl.OptValue(kgo.SASL).([]kafkasasl.Mechanism); ok {
		for _, m := range ms {
			names = append(names, m.Name())
		}
	}
	cfg, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
	return names, cfg
}

func TestSecurityProps(t *testing.T) {
	for _, tc := range []struct {
		p    Props
		mech string
	}{
		{Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}, "PLAIN"},
		{Props{"security.protocol": "sasl_plaintext", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramJAAS}, "SCRAM-SHA-256"},
		{Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS}, "SCRAM-SHA-512"},
		// Java hands PlainLoginModule's credentials to SCRAM too.
		{Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": plainJAAS}, "SCRAM-SHA-512"},
		{Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": oauthJAAS}, "OAUTHBEARER"},
	} {
		names, cfg := mechanisms(t, tc.p)
		if len(names) != 1 || names[0] != tc.mech || cfg != nil {
			t.Errorf("%v: mechanisms %v, TLS %v; want %s without TLS", tc.p, names, cfg != nil, tc.mech)
		}
	}
	// PLAINTEXT ignores ssl.* and sasl.*; SSL ignores sasl.*.
	ignored := Props{"sasl.mechanism": "GSSAPI", "sasl.jaas.config": "garbage", "ssl.truststore.location": "/nonexistent",
		"sasl.oauthbearer.token.endpoint.url": "https://idp", "ssl.keymanager.algorithm": "SunX509"}
	if names, cfg := mechanisms(t, ignored); names != nil || cfg != nil {
		t.Errorf("PLAINTEXT: mechanisms %v, TLS %v", names, cfg != nil)
	}
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	sslProps := Props{"security.protocol": "SSL", "ssl.truststore.location": ca.WriteTruststoreJKS(t, dir, "changeit"),
		"ssl.truststore.password": "changeit", "sasl.jaas.config": "garbage"}
	if names, cfg := mechanisms(t, sslProps); names != nil || cfg == nil || cfg.RootCAs == nil {
		t.Errorf("SSL: mechanisms %v, TLS %+v", names, cfg)
	}
	sslProps["security.protocol"] = "SASL_SSL"
	sslProps["sasl.mechanism"] = "PLAIN"
	sslProps["sasl.jaas.config"] = plainJAAS
	if names, cfg := mechanisms(t, sslProps); len(names) != 1 || names[0] != "PLAIN" || cfg == nil {
		t.Errorf("SASL_SSL: mechanisms %v, TLS %v", names, cfg != nil)
	}
}

func TestSecurityPropErrors(t *testing.T) {
	sasl := func(kv ...string) Props {
		p := Props{"security.protocol": "SASL_PLAINTEXT"}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		p    Props
		want string
	}{
		{Props{"security.protocol": "TLS"}, "expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{sasl(), "SASL mechanism GSSAPI is not supported"},
		{sasl("sasl.mechanism", "AWS_MSK_IAM", "sasl.jaas.config", plainJAAS), "SASL mechanism AWS_MSK_IAM is not supported"},
		{sasl("sasl.mechanism", "PLAIN"), "needs the login module and credentials in sasl.jaas.config"},
		{sasl("sasl.mechanism", "PLAIN", "sasl.jaas.config", "PlainLoginModule required username=3;"), "sasl.jaas.config"},
		{sasl("sasl.mechanism", "PLAIN", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a";`), "needs username and password"},
		{sasl("sasl.mechanism", "PLAIN", "sasl.jaas.config", oauthJAAS), "needs org.apache.kafka.common.security.plain.PlainLoginModule or"},
		{sasl("sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", plainJAAS), "needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"},
		{sasl("sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.login.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"), "is not supported"},
		{sasl("sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthJAAS, "sasl.oauthbearer.token.endpoint.url", "https://idp/token"), "sasl.oauthbearer.token.endpoint.url is not supported"},
		{sasl("sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_name="x";`), "needs a non-empty 'sub' claim"},
		{Props{"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/truststore.jks"}, "SSL client TLS settings"},
		{Props{"security.protocol": "SSL", "ssl.engine.factory.class": "com.example.Engine"}, "ssl.engine.factory.class is not supported"},
	} {
		p := tc.p.Clone()
		p["bootstrap.servers"] = "127.0.0.1:9092"
		_, err := ClientOpts(Admin, p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ClientOpts(%v) = %v, want error containing %q", tc.p, err, tc.want)
		}
	}
}

// decodeJWT splits an unsecured token into its header and claims.
func decodeJWT(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("token %q: want header.claims. with an empty signature", token)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatalf("token part %d %s: %v", i, raw, err)
		}
	}
	return header, claims
}

func TestUnsecuredLogin(t *testing.T) {
	l, err := NewUnsecuredLogin(map[string]string{
		"unsecuredLoginStringClaim_sub":     "alice",
		"unsecuredLoginStringClaim_q":       `say "hi" \o/`,
		"unsecuredLoginNumberClaim_level":   "5",
		"unsecuredLoginListClaim_scope":     " read write",
		"unsecuredLoginListClaim_empty":     ",a,,b",
		"unsecuredLoginExtension_traceId":   "t-1",
		"unsecuredLoginLifetimeSeconds":     "60",
		"unsecuredLoginPrincipalClaimName":  "sub",
		"unrelatedOptionKafkaIgnoresAsWell": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1712345678901)
	token := l.Token(now)
	header, claims := decodeJWT(t, token)
	if len(header) != 1 || header["alg"] != "none" {
		t.Errorf("header %v", header)
	}
	want := map[string]any{
		"exp": 1712345738.901, "iat": 1712345678.901, "sub": "alice", "q": `say "hi" \o/`, "level": 5.0,
		"scope": []any{"read", "write"}, "empty": []any{"a", "", "b", ""},
	}
	if len(claims) != len(want) {
		t.Errorf("claims %v, want %v", claims, want)
	}
	for k, v := range want {
		if got, _ := json.Marshal(claims[k]); string(got) != mustJSON(t, v) {
			t.Errorf("claim %s = %s, want %s", k, got, mustJSON(t, v))
		}
	}
	// The token's numbers are written as Kafka (Java) writes doubles.
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if !strings.HasPrefix(string(raw), `{"exp":1.712345738901E9,"iat":1.712345678901E9,`) {
		t.Errorf("claims text %s", raw)
	}
	auth, _ := l.Auth(now)
	if auth.Token != token || auth.Extensions["traceId"] != "t-1" || len(auth.Extensions) != 1 {
		t.Errorf("Auth = %+v", auth)
	}

	for opts, want := range map[string]map[string]string{
		"no token to log in with":                              {},
		"Extensions provided in login context without a token": {"unsecuredLoginExtension_a": "b"},
		"needs a non-empty 'sub' claim":                        {"unsecuredLoginStringClaim_name": "alice"},
		"needs a non-empty 'who' claim":                        {"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginPrincipalClaimName": "who"},
		"Cannot explicitly set the 'exp' claim":                {"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginNumberClaim_exp": "1"},
		"unsecuredLoginNumberClaim_n: not a number":            {"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginNumberClaim_n": "many"},
		"unsecuredLoginLifetimeSeconds: not a number":          {"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginLifetimeSeconds": "1h"},
		"Extension name auth is invalid":                       {"unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginExtension_auth": "x"},
	} {
		if _, err := NewUnsecuredLogin(want); err == nil || !strings.Contains(err.Error(), opts) {
			t.Errorf("NewUnsecuredLogin(%v) = %v, want an error containing %q", want, err, opts)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOAuthBearerLogin checks the tools' OAUTHBEARER client-first message
// against the broker's OAUTHBEARER mechanism with Kafka's unsecured
// validator: the broker accepts it and authenticates the token's principal.
func TestOAuthBearerLogin(t *testing.T) {
	opts, err := ClientOpts(Admin, Props{"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": oauthJAAS})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	client := cl.OptValue(kgo.SASL).([]kafkasasl.Mechanism)[0]
	_, first, err := client.Authenticate(context.Background(), "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	server, err := sasl.NewOAuthBearer(sasl.OAuthConfig{Unsecured: true})
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewSession()
	if _, done, err := s.Step(first); err != nil || !done {
		t.Fatalf("broker mechanism: done %v, err %v (client-first %q)", done, err, first)
	}
	if p := s.Principal(); p.String() != "User:alice" {
		t.Errorf("principal %v, want User:alice", p)
	}
}

// TestSecurityEndToEnd connects to kfake over each protocol with the
// tools' client properties: the handshake or login succeeds with the right
// settings and fails with wrong ones.
func TestSecurityEndToEnd(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	serverCert := ca.Issue(t, "broker", "127.0.0.1", "localhost")
	truststore := ca.WriteTruststoreJKS(t, dir, "trust-pw")
	otherCA := securitytest.NewCA(t)
	wrongTruststore := otherCA.WriteCertPEM(t, dir)
	clientKeystore := ca.Issue(t, "alice").WritePKCS12(t, dir, "alice", "key-pw")

	start := func(opts ...kfake.Opt) string {
		t.Helper()
		c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.ListenAddrs()[0]
	}
	connect := func(addr string, p Props) error {
		p = p.Clone()
		p["bootstrap.servers"] = addr
		cl, err := NewClient(context.Background(), Admin, p)
		if err == nil {
			cl.Close()
		}
		return err
	}
	tlsServer := &tls.Config{Certificates: []tls.Certificate{serverCert.TLSCertificate()}, MinVersion: tls.VersionTLS12}
	mtlsServer := tlsServer.Clone()
	mtlsServer.ClientAuth = tls.RequireAndVerifyClientCert
	mtlsServer.ClientCAs = ca.Pool()

	saslAddr := start(kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", "alice-secret"),
		kfake.User("SCRAM-SHA-256", "alice", "alice-secret"), kfake.User("SCRAM-SHA-512", "alice", "alice-secret"))
	tlsAddr := start(kfake.TLS(tlsServer))
	mtlsAddr := start(kfake.TLS(mtlsServer))
	saslSSLAddr := start(kfake.TLS(tlsServer.Clone()), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "alice", "alice-secret"))

	ssl := Props{"security.protocol": "SSL", "ssl.truststore.location": truststore, "ssl.truststore.password": "trust-pw"}
	withKeystore := ssl.Clone().Merge(Props{"ssl.keystore.location": clientKeystore, "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "key-pw"})
	saslProps := func(mech, jaas string) Props {
		return Props{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech, "sasl.jaas.config": jaas}
	}
	for _, tc := range []struct {
		name string
		addr string
		p    Props
		ok   bool
	}{
		{"PLAIN", saslAddr, saslProps("PLAIN", plainJAAS), true},
		{"PLAIN, wrong password", saslAddr, saslProps("PLAIN", strings.Replace(plainJAAS, "alice-secret", "guess", 1)), false},
		{"SCRAM-SHA-256", saslAddr, saslProps("SCRAM-SHA-256", scramJAAS), true},
		{"SCRAM-SHA-512", saslAddr, saslProps("SCRAM-SHA-512", scramJAAS), true},
		{"SCRAM-SHA-512, wrong password", saslAddr, saslProps("SCRAM-SHA-512", strings.Replace(scramJAAS, "alice-secret", "guess", 1)), false},
		{"no SASL against a SASL listener", saslAddr, Props{}, false},
		{"SSL with a JKS truststore", tlsAddr, ssl, true},
		{"SSL with a PEM truststore of another CA", tlsAddr, Props{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": wrongTruststore}, false},
		{"mTLS with a PKCS12 keystore", mtlsAddr, withKeystore, true},
		{"mTLS without a client certificate", mtlsAddr, ssl, false},
		{"SASL_SSL", saslSSLAddr, ssl.Clone().Merge(Props{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS}), true},
		{"SASL_SSL without SASL", saslSSLAddr, ssl, false},
	} {
		p := tc.p.Clone()
		delete(p, "bootstrap.servers")
		err := connect(tc.addr, p)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if testing.Verbose() && err != nil {
			t.Logf("%s: %v", tc.name, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: connected, want a failure", tc.name)
		}
	}

	// The server's certificate names 127.0.0.1 and localhost; dialled as
	// another name it is refused unless the name check is off.
	otherName := ca.Issue(t, "broker", "broker.example")
	namedAddr := start(kfake.TLS(&tls.Config{Certificates: []tls.Certificate{otherName.TLSCertificate()}}))
	if err := connect(namedAddr, ssl); err == nil {
		t.Error("certificate for another host name: connected, want a failure")
	}
	if err := connect(namedAddr, ssl.Clone().Merge(Props{"ssl.endpoint.identification.algorithm": ""})); err != nil {
		t.Errorf("certificate for another host name, name check off: %v", err)
	}
}
