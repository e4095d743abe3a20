package security

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// side is one end of a test connection: its handshake (and first
// exchange) error and what it saw.
type side struct {
	err   error
	state tls.ConnectionState
}

// connect runs a TLS handshake over a loopback TCP connection between a
// server with serverCfg and a client with clientCfg dialling serverName,
// then has the server send one byte that the client reads: in TLS 1.3 a
// client learns that the server refused its certificate only when it
// reads. (Not net.Pipe: its writes wait for the reader, and both peers
// flush at once in some handshakes.)
func connect(t *testing.T, serverCfg, clientCfg *tls.Config, serverName string) (server, client side) {
	t.Helper()
	clientCfg = clientCfg.Clone()
	if clientCfg.ServerName == "" {
		clientCfg.ServerName = serverName
	}
	c1, c2 := tcpPair(t)
	srv, cli := tls.Server(c1, serverCfg), tls.Client(c2, clientCfg)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		server.err = srv.Handshake()
		if server.err == nil {
			_, server.err = srv.Write([]byte{1})
		}
		if server.err != nil {
			c1.Close()
		}
	}()
	go func() {
		defer wg.Done()
		client.err = cli.Handshake()
		if client.err == nil {
			_, client.err = io.ReadFull(cli, make([]byte, 1))
		}
		if client.err != nil {
			c2.Close()
		}
	}()
	wg.Wait()
	server.state, client.state = srv.ConnectionState(), cli.ConnectionState()
	c1.Close()
	c2.Close()
	return server, client
}

// tcpPair is both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		client.Close()
		t.Fatal("accept failed")
	}
	return server, client
}

// mustConnect fails the test unless both sides connect, and returns the
// leaf the server served.
func mustConnect(t *testing.T, serverCfg, clientCfg *tls.Config, serverName string) (server, client side) {
	t.Helper()
	server, client = connect(t, serverCfg, clientCfg, serverName)
	if server.err != nil || client.err != nil {
		t.Fatalf("handshake failed: server: %v; client: %v", server.err, client.err)
	}
	return server, client
}

func mustFail(t *testing.T, serverCfg, clientCfg *tls.Config, serverName string) {
	t.Helper()
	server, client := connect(t, serverCfg, clientCfg, serverName)
	if server.err == nil && client.err == nil {
		t.Fatalf("handshake succeeded (version %x), want a failure", client.state.Version)
	}
}

func newServer(t *testing.T, keys map[string]string) *ServerTLS {
	t.Helper()
	s, err := NewServerTLS(MapGetter(keys), WithLogger(discardLogger()))
	if err != nil {
		t.Fatalf("NewServerTLS: %v", err)
	}
	return s
}

func newClient(t *testing.T, keys map[string]string) *tls.Config {
	t.Helper()
	c, err := NewClientTLS(MapGetter(keys))
	if err != nil {
		t.Fatalf("NewClientTLS: %v", err)
	}
	return c
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func servedLeaf(t *testing.T, c side) *x509.Certificate {
	t.Helper()
	if len(c.state.PeerCertificates) == 0 {
		t.Fatal("the server presented no certificate")
	}
	return c.state.PeerCertificates[0]
}

// Each keystore format serves the broker's certificate, and each
// truststore format lets the client verify it.
func TestKeystoreAndTruststoreFormats(t *testing.T) {
	ca := securitytest.NewCA(t)
	broker := ca.Issue(t, "broker", "localhost", "127.0.0.1")
	dir := t.TempDir()
	certPath, _ := broker.WritePEM(t, dir, "broker")
	p12 := broker.WritePKCS12(t, dir, "broker", "store-pass")
	jks := broker.WriteJKS(t, dir, "broker", "store-pass")

	keystores := map[string]map[string]string{
		"PEM file": {"ssl.keystore.type": "PEM", "ssl.keystore.location": broker.KeystorePEM(t, dir, "broker")},
		"inline PEM": {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM),
			"ssl.keystore.certificate.chain": string(broker.ChainPEM())},
		"inline PEM, leaf only": {"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM),
			"ssl.keystore.certificate.chain": string(broker.CertPEM)},
		"PKCS12":                {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12, "ssl.keystore.password": "store-pass"},
		"JKS":                   {"ssl.keystore.type": "JKS", "ssl.keystore.location": jks, "ssl.keystore.password": "store-pass"},
		"JKS by default":        {"ssl.keystore.location": jks, "ssl.keystore.password": "store-pass"},
		"PKCS12 file, type JKS": {"ssl.keystore.type": "JKS", "ssl.keystore.location": p12, "ssl.keystore.password": "store-pass"},
		"JKS file, type PKCS12": {"ssl.keystore.type": "pkcs12", "ssl.keystore.location": jks, "ssl.keystore.password": "store-pass"},
	}
	truststores := map[string]map[string]string{
		"PEM file":   {"ssl.truststore.type": "PEM", "ssl.truststore.location": ca.WriteCertPEM(t, dir)},
		"inline PEM": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM())},
		"JKS":        {"ssl.truststore.location": ca.WriteTruststoreJKS(t, dir, "trust-pass"), "ssl.truststore.password": "trust-pass"},
		"JKS without password (no integrity check)": {"ssl.truststore.location": ca.WriteTruststoreJKS(t, dir, "trust-pass")},
		"PKCS12": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.WriteTruststorePKCS12(t, dir, "trust-pass"), "ssl.truststore.password": "trust-pass"},
		"PKCS12 keystore as truststore (its leaf)": {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": p12, "ssl.truststore.password": "store-pass"},
		"the leaf as a PEM truststore":             {"ssl.truststore.type": "PEM", "ssl.truststore.location": certPath},
	}
	for name, keys := range keystores {
		t.Run("keystore "+name, func(t *testing.T) {
			s := newServer(t, keys)
			_, client := mustConnect(t, s.Config(), newClient(t, truststores["PEM file"]), "localhost")
			if !servedLeaf(t, client).Equal(broker.Leaf) {
				t.Error("the server did not serve the keystore's certificate")
			}
			if n := len(client.state.PeerCertificates); keys["ssl.keystore.certificate.chain"] == "" && n != 2 {
				t.Errorf("the server sent %d certificates, want the leaf and its CA", n)
			}
		})
	}
	s := newServer(t, keystores["PEM file"])
	for name, keys := range truststores {
		t.Run("truststore "+name, func(t *testing.T) {
			mustConnect(t, s.Config(), newClient(t, keys), "localhost")
			// And another CA's server is refused.
			other := securitytest.NewCA(t).Issue(t, "impostor", "localhost")
			impostor := newServer(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": other.KeystorePEM(t, t.TempDir(), "x")})
			mustFail(t, impostor.Config(), newClient(t, keys), "localhost")
		})
	}
}

// Stores written by OpenSSL and Java's keytool (testdata/gen.sh), not by
// our own helpers.
func TestToolMadeStores(t *testing.T) {
	const pw = "fixture-pass"
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	trustFixture := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/cert.pem"}
	trustKeytool := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/keytool-cert.pem"}
	trustKeytoolP12 := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/keytool-p12-cert.pem"}
	cases := []struct {
		name   string
		server map[string]string
		client map[string]string
	}{
		{"keytool JKS", map[string]string{"ssl.keystore.location": "testdata/keytool.jks", "ssl.keystore.password": pw}, trustKeytool},
		{"keytool JKS, own key password", map[string]string{"ssl.keystore.location": "testdata/keytool-keypass.jks", "ssl.keystore.password": pw, "ssl.key.password": "key-pass"}, nil},
		{"keytool PKCS12", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/keytool.p12", "ssl.keystore.password": pw}, trustKeytoolP12},
		{"openssl PEM key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key.pem"), "ssl.keystore.certificate.chain": read("cert.pem")}, trustFixture},
		{"PBES2 AES-256 HMAC-SHA256 key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key-aes256.pem"), "ssl.key.password": pw, "ssl.keystore.certificate.chain": read("cert.pem")}, trustFixture},
		{"PBES2 AES-128 HMAC-SHA1 key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key-aes128-sha1.pem"), "ssl.key.password": pw, "ssl.keystore.certificate.chain": read("cert.pem")}, trustFixture},
		{"PBES2 DES-EDE3 key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key-des3.pem"), "ssl.key.password": pw, "ssl.keystore.certificate.chain": read("cert.pem")}, trustFixture},
		{"keytool JKS truststore", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key.pem"), "ssl.keystore.certificate.chain": read("cert.pem")},
			map[string]string{"ssl.truststore.location": "testdata/truststore.jks", "ssl.truststore.password": pw}},
		{"keytool PKCS12 truststore", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": read("key.pem"), "ssl.keystore.certificate.chain": read("cert.pem")},
			map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "testdata/truststore.p12", "ssl.truststore.password": pw}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.server)
			if tc.client == nil {
				// Trust what the server serves.
				leaf := s.cur.Load().leaves[0]
				tc.client = map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(pemOf(leaf))}
			}
			mustConnect(t, s.Config(), newClient(t, tc.client), "localhost")
			mustConnect(t, s.Config(), newClient(t, tc.client), "127.0.0.1")
		})
	}
}

func pemOf(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// A PEM value written over several lines of a properties file with '\'
// continuations reaches us on one line, as it reaches Kafka's PemParser.
func TestInlinePEMOnOneLine(t *testing.T) {
	ca := securitytest.NewCA(t)
	broker := ca.Issue(t, "broker", "localhost")
	oneLine := func(pem []byte) string { return strings.Join(strings.Fields(string(pem)), " ") }
	oneLineKeepMarkers := func(pem []byte) string {
		// "-----BEGIN PRIVATE KEY----- MIGH... -----END PRIVATE KEY-----"
		return strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", " ")
	}
	s := newServer(t, map[string]string{
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.key":               oneLineKeepMarkers(broker.KeyPEM),
		"ssl.keystore.certificate.chain": oneLine(broker.ChainPEM()),
	})
	client := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": oneLine(ca.CertPEM())})
	mustConnect(t, s.Config(), client, "localhost")
}

func TestClientAuth(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	broker := ca.Issue(t, "broker", "localhost")
	alice := ca.Issue(t, "alice")
	mallory := securitytest.NewCA(t).Issue(t, "mallory")
	caPath := ca.WriteCertPEM(t, dir)

	clients := map[string]map[string]string{
		"no certificate": {"ssl.truststore.type": "PEM", "ssl.truststore.location": caPath},
		"trusted certificate": {"ssl.truststore.type": "PEM", "ssl.truststore.location": caPath,
			"ssl.keystore.type": "PEM", "ssl.keystore.location": alice.KeystorePEM(t, dir, "alice")},
		// A Go (or Java) client offers only a certificate of a CA the
		// server names, so this one sends none.
		"untrusted certificate": {"ssl.truststore.type": "PEM", "ssl.truststore.location": caPath,
			"ssl.keystore.type": "PKCS12", "ssl.keystore.location": mallory.WritePKCS12(t, dir, "mallory", "pw"), "ssl.keystore.password": "pw"},
	}
	clientConfig := func(t *testing.T, name string) *tls.Config {
		if name != "untrusted certificate, sent anyway" {
			return newClient(t, clients[name])
		}
		cert := mallory.TLSCertificate()
		return &tls.Config{RootCAs: ca.Pool(), GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &cert, nil
		}}
	}
	// want: "" for no client certificate seen, a CN, or "fail".
	cases := []struct {
		auth   string
		client string
		want   string
	}{
		{"none", "no certificate", ""},
		{"none", "trusted certificate", ""},
		{"none", "untrusted certificate, sent anyway", ""},
		{"requested", "no certificate", ""},
		{"requested", "trusted certificate", "alice"},
		{"requested", "untrusted certificate", ""},
		{"requested", "untrusted certificate, sent anyway", "fail"},
		{"required", "no certificate", "fail"},
		{"required", "trusted certificate", "alice"},
		{"required", "untrusted certificate", "fail"},
		{"required", "untrusted certificate, sent anyway", "fail"},
		{"", "trusted certificate", ""}, // Kafka's default: none
	}
	mapper, err := ParsePrincipalMappingRules("RULE:^CN=(.*)$/$1/")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.auth+"/"+tc.client, func(t *testing.T) {
			keys := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": broker.KeystorePEM(t, t.TempDir(), "broker"),
				"ssl.truststore.type": "PEM", "ssl.truststore.location": caPath}
			if tc.auth != "" {
				keys["ssl.client.auth"] = tc.auth
			}
			s := newServer(t, keys)
			if want := tc.auth; want != "" && s.ClientAuth() != want {
				t.Errorf("ClientAuth() = %q, want %q", s.ClientAuth(), want)
			} else if want == "" && s.ClientAuth() != ClientAuthNone {
				t.Errorf("ClientAuth() = %q, want none", s.ClientAuth())
			}
			if tc.want == "fail" {
				mustFail(t, s.Config(), clientConfig(t, tc.client), "localhost")
				return
			}
			server, _ := mustConnect(t, s.Config(), clientConfig(t, tc.client), "localhost")
			var leaf *x509.Certificate
			if len(server.state.PeerCertificates) > 0 {
				leaf = server.state.PeerCertificates[0]
			}
			p, err := mapper.Principal(leaf)
			if err != nil {
				t.Fatalf("Principal: %v", err)
			}
			want := Anonymous
			if tc.want != "" {
				want = User(tc.want)
			}
			if p != want {
				t.Errorf("principal = %v, want %v", p, want)
			}
		})
	}
}

// brokerKeys is a PEM-file listener for the broker's certificate.
func brokerKeys(t *testing.T, c securitytest.Cert, extra ...string) map[string]string {
	t.Helper()
	keys := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": c.KeystorePEM(t, t.TempDir(), "broker")}
	for i := 0; i+1 < len(extra); i += 2 {
		keys[extra[i]] = extra[i+1]
	}
	return keys
}

func TestProtocols(t *testing.T) {
	ca := securitytest.NewCA(t)
	broker := ca.Issue(t, "broker", "localhost")
	trust := func(extra ...string) map[string]string {
		keys := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM())}
		for i := 0; i+1 < len(extra); i += 2 {
			keys[extra[i]] = extra[i+1]
		}
		return keys
	}

	def := newServer(t, brokerKeys(t, broker))
	_, c := mustConnect(t, def.Config(), newClient(t, trust()), "localhost")
	if c.state.Version != tls.VersionTLS13 {
		t.Errorf("default protocols negotiated %x, want TLS 1.3", c.state.Version)
	}
	_, c = mustConnect(t, def.Config(), newClient(t, trust("ssl.enabled.protocols", "TLSv1.2")), "localhost")
	if c.state.Version != tls.VersionTLS12 {
		t.Errorf("TLSv1.2 client negotiated %x, want TLS 1.2", c.state.Version)
	}
	// ssl.protocol=TLSv1.2 keeps a client on TLS 1.2 even with TLSv1.3 enabled.
	_, c = mustConnect(t, def.Config(), newClient(t, trust("ssl.protocol", "TLSv1.2")), "localhost")
	if c.state.Version != tls.VersionTLS12 {
		t.Errorf("ssl.protocol=TLSv1.2 client negotiated %x, want TLS 1.2", c.state.Version)
	}

	only13 := newServer(t, brokerKeys(t, broker, "ssl.enabled.protocols", "TLSv1.3"))
	mustFail(t, only13.Config(), newClient(t, trust("ssl.enabled.protocols", "TLSv1.2")), "localhost")
	mustConnect(t, only13.Config(), newClient(t, trust()), "localhost")

	only12 := newServer(t, brokerKeys(t, broker, "ssl.enabled.protocols", " TLSv1.2 "))
	mustFail(t, only12.Config(), newClient(t, trust("ssl.enabled.protocols", "TLSv1.3")), "localhost")

	for _, bad := range [][]string{
		{"ssl.enabled.protocols", "TLSv1.4"},
		{"ssl.enabled.protocols", "SSLv3"},
		{"ssl.enabled.protocols", "tlsv1.2"},
		{"ssl.enabled.protocols", "TLSv1.1,TLSv1.3"}, // a hole Go cannot express
		{"ssl.protocol", "TLSv9"},
	} {
		if _, err := NewServerTLS(MapGetter(brokerKeys(t, broker, bad...))); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%s: err = %v, want an error naming the key", bad[0], bad[1], err)
		}
	}
	// A client whose ssl.protocol is below every enabled protocol cannot connect.
	if _, err := NewClientTLS(MapGetter(trust("ssl.protocol", "TLSv1.2", "ssl.enabled.protocols", "TLSv1.3"))); err == nil {
		t.Error("ssl.protocol=TLSv1.2 with only TLSv1.3 enabled: want an error")
	}
}

func TestCipherSuites(t *testing.T) {
	names := func(ids []uint16) []string {
		var out []string
		for _, id := range ids {
			out = append(out, tls.CipherSuiteName(id))
		}
		return out
	}
	cases := []struct {
		list       string
		want       []string
		minV, maxV uint16
		err        string
	}{
		{list: "", want: nil, minV: tls.VersionTLS12, maxV: tls.VersionTLS13},
		{list: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
			want: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}, minV: tls.VersionTLS12, maxV: tls.VersionTLS12},
		{list: "TLS_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,TLS_EMPTY_RENEGOTIATION_INFO_SCSV",
			want: []string{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}, minV: tls.VersionTLS12, maxV: tls.VersionTLS13},
		{list: "SSL_RSA_WITH_3DES_EDE_CBC_SHA", want: []string{"TLS_RSA_WITH_3DES_EDE_CBC_SHA"}, minV: tls.VersionTLS12, maxV: tls.VersionTLS12},
		{list: "TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256", want: nil, minV: tls.VersionTLS13, maxV: tls.VersionTLS13},
		{list: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", err: "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"},
		{list: "NOT_A_SUITE", err: "NOT_A_SUITE"},
	}
	for _, tc := range cases {
		var list []string
		for _, n := range strings.Split(tc.list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				list = append(list, n)
			}
		}
		minV, maxV := uint16(tls.VersionTLS12), uint16(tls.VersionTLS13)
		ids, err := parseCipherSuites(list, &minV, &maxV)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "ssl.cipher.suites") {
				t.Errorf("%q: err = %v, want one naming ssl.cipher.suites and %s", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.list, err)
			continue
		}
		if got := names(ids); strings.Join(got, ",") != strings.Join(tc.want, ",") || minV != tc.minV || maxV != tc.maxV {
			t.Errorf("%q = %v [%x-%x], want %v [%x-%x]", tc.list, got, minV, maxV, tc.want, tc.minV, tc.maxV)
		}
	}
	only12Min, only12Max := uint16(tls.VersionTLS12), uint16(tls.VersionTLS12)
	if _, err := parseCipherSuites([]string{"TLS_AES_128_GCM_SHA256"}, &only12Min, &only12Max); err == nil {
		t.Error("only TLS 1.3 suites with only TLSv1.2 enabled: want an error")
	}

	// Over the wire.
	ca := securitytest.NewCA(t)
	broker := ca.Issue(t, "broker", "localhost")
	trust := map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM())}
	s := newServer(t, brokerKeys(t, broker, "ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"))
	_, c := mustConnect(t, s.Config(), newClient(t, trust), "localhost")
	if c.state.Version != tls.VersionTLS12 || c.state.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("negotiated %s over %x, want TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 over TLS 1.2", tls.CipherSuiteName(c.state.CipherSuite), c.state.Version)
	}
	trust["ssl.cipher.suites"] = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
	mustFail(t, s.Config(), newClient(t, trust), "localhost")
}

func TestHostnameVerification(t *testing.T) {
	ca := securitytest.NewCA(t)
	broker := ca.Issue(t, "broker", "localhost", "127.0.0.1")
	s := newServer(t, brokerKeys(t, broker))
	verify := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM())})
	noVerify := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.endpoint.identification.algorithm": ""})
	explicit := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.endpoint.identification.algorithm": "HTTPS"})

	mustConnect(t, s.Config(), verify, "localhost")
	mustConnect(t, s.Config(), verify, "127.0.0.1")
	mustFail(t, s.Config(), verify, "broker.example.com")
	mustFail(t, s.Config(), verify, "127.0.0.2")
	mustFail(t, s.Config(), explicit, "broker.example.com")
	mustConnect(t, s.Config(), noVerify, "broker.example.com")

	// Without hostname verification the chain is still verified.
	impostor := newServer(t, brokerKeys(t, securitytest.NewCA(t).Issue(t, "broker", "localhost")))
	mustFail(t, impostor.Config(), noVerify, "localhost")
	// And the server certificate must be for server authentication.
	clientOnly := ca.IssueTemplate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "x"}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	mustFail(t, newServer(t, brokerKeys(t, clientOnly)).Config(), noVerify, "localhost")

	if _, err := NewClientTLS(MapGetter(map[string]string{"ssl.endpoint.identification.algorithm": "ldaps"})); err == nil ||
		!strings.Contains(err.Error(), "ssl.endpoint.identification.algorithm") {
		t.Errorf("unknown algorithm: err = %v", err)
	}
}

// A client without a truststore verifies against the system's roots,
// which do not hold a test CA.
func TestClientWithoutTruststoreUsesSystemRoots(t *testing.T) {
	ca := securitytest.NewCA(t)
	s := newServer(t, brokerKeys(t, ca.Issue(t, "broker", "localhost")))
	c := newClient(t, nil)
	if c.RootCAs != nil || len(c.Certificates) != 0 {
		t.Errorf("client without stores: RootCAs %v, %d certificates", c.RootCAs, len(c.Certificates))
	}
	mustFail(t, s.Config(), c, "localhost")
}

func TestReload(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	first := ca.Issue(t, "broker", "localhost", "127.0.0.1")
	keystore := first.KeystorePEM(t, dir, "broker")
	truststore := ca.WriteCertPEM(t, dir)
	s := newServer(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
		"ssl.truststore.type": "PEM", "ssl.truststore.location": truststore, "ssl.client.auth": "required"})
	clientCert := ca.Issue(t, "alice")
	client := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.keystore.type": "PEM", "ssl.keystore.key": string(clientCert.KeyPEM), "ssl.keystore.certificate.chain": string(clientCert.ChainPEM())})

	_, c := mustConnect(t, s.Config(), client, "localhost")
	if !servedLeaf(t, c).Equal(first.Leaf) {
		t.Fatal("the server did not serve the first certificate")
	}

	// A renewed certificate, same name, one more SAN: picked up.
	second := ca.Issue(t, "broker", "localhost", "127.0.0.1", "broker.example.com")
	second.KeystorePEM(t, dir, "broker")
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	_, c = mustConnect(t, s.Config(), client, "localhost")
	if !servedLeaf(t, c).Equal(second.Leaf) {
		t.Error("after Reload the server still serves the old certificate")
	}

	// A broken file: the error names it, the renewed certificate stays.
	if err := os.WriteFile(keystore, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), keystore) {
		t.Errorf("Reload of a broken keystore: err = %v, want one naming %s", err, keystore)
	}
	_, c = mustConnect(t, s.Config(), client, "localhost")
	if !servedLeaf(t, c).Equal(second.Leaf) {
		t.Error("a failed Reload replaced the certificate")
	}

	// Kafka refuses a new subject name or fewer SANs.
	ca.Issue(t, "other-broker", "localhost", "127.0.0.1", "broker.example.com").KeystorePEM(t, dir, "broker")
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "ssl.allow.dn.changes") {
		t.Errorf("Reload with another DN: err = %v", err)
	}
	ca.Issue(t, "broker", "localhost").KeystorePEM(t, dir, "broker")
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "IP:127.0.0.1") {
		t.Errorf("Reload without a SAN: err = %v", err)
	}
	_, c = mustConnect(t, s.Config(), client, "localhost")
	if !servedLeaf(t, c).Equal(second.Leaf) {
		t.Error("a refused Reload replaced the certificate")
	}

	// The truststore is reloaded too: a client of a new CA is let in.
	ca2 := securitytest.NewCA(t)
	second.KeystorePEM(t, dir, "broker")
	if err := os.WriteFile(truststore, append(ca.CertPEM(), ca2.CertPEM()...), 0o600); err != nil {
		t.Fatal(err)
	}
	bob := ca2.Issue(t, "bob")
	bobClient := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.keystore.type": "PEM", "ssl.keystore.key": string(bob.KeyPEM), "ssl.keystore.certificate.chain": string(bob.ChainPEM())})
	mustFail(t, s.Config(), bobClient, "localhost")
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	mustConnect(t, s.Config(), bobClient, "localhost")
}

func TestReloadAllowsChangesWhenConfigured(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	keystore := ca.Issue(t, "broker", "localhost").KeystorePEM(t, dir, "broker")
	s := newServer(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
		"ssl.allow.dn.changes": "true", "ssl.allow.san.changes": "true"})
	next := ca.Issue(t, "new-name", "other.example.com")
	next.KeystorePEM(t, dir, "broker")
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if !s.cur.Load().leaves[0].Equal(next.Leaf) {
		t.Error("Reload did not take the new certificate")
	}
}

// syncBuffer is a log sink for a goroutine and a test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWatchFiles(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	first := ca.Issue(t, "broker", "localhost")
	second := ca.Issue(t, "broker", "localhost")
	third := ca.Issue(t, "broker", "localhost")
	keystore := first.KeystorePEM(t, dir, "broker")

	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		s, err := NewServerTLS(MapGetter(map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore}),
			WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		stop := s.WatchFiles(time.Second)
		defer stop()
		served := func() *x509.Certificate { return s.cur.Load().leaves[0] }
		// Files change at distinct times even on coarse clocks.
		mtime := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		rewrite := func(data []byte) {
			t.Helper()
			if err := os.WriteFile(keystore, data, 0o600); err != nil {
				t.Fatal(err)
			}
			mtime = mtime.Add(time.Minute)
			if err := os.Chtimes(keystore, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		tick := func() {
			time.Sleep(time.Second) // the fake clock of the bubble
			synctest.Wait()
		}

		tick()
		if !served().Equal(first.Leaf) {
			t.Fatal("reloaded without a change")
		}
		second.KeystorePEM(t, dir, "broker")
		rewrite(mustRead(t, keystore))
		tick()
		if !served().Equal(second.Leaf) {
			t.Fatal("a changed keystore was not reloaded")
		}

		rewrite([]byte("-----BEGIN PRIVATE KEY-----\ntruncated"))
		tick()
		tick()
		tick()
		if !served().Equal(second.Leaf) {
			t.Fatal("a broken keystore replaced the certificate")
		}
		if n := strings.Count(logs.String(), "cannot be loaded"); n != 1 {
			t.Errorf("the broken file was reported %d times, want once:\n%s", n, logs.String())
		}

		third.KeystorePEM(t, dir, "broker")
		rewrite(mustRead(t, keystore))
		tick()
		if !served().Equal(third.Leaf) {
			t.Fatal("a repaired keystore was not reloaded")
		}
		stop()
		stop() // idempotent
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExpiredCertificateIsAWarning(t *testing.T) {
	ca := securitytest.NewCA(t)
	expired := ca.IssueTemplate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "old"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	var logs syncBuffer
	s, err := NewServerTLS(MapGetter(brokerKeys(t, expired)), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatalf("NewServerTLS with an expired certificate: %v (Kafka starts with it)", err)
	}
	if !strings.Contains(logs.String(), "CN=old expired") {
		t.Errorf("no expiry warning logged:\n%s", logs.String())
	}
	// Clients refuse it.
	mustFail(t, s.Config(), newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM())}), "localhost")
}

// Configurations Kafka refuses, or that cannot work, fail with an error
// naming the key and, for files, the file.
func TestConfigurationErrors(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	broker := ca.Issue(t, "broker", "localhost")
	other := ca.Issue(t, "other", "localhost")
	pemKS := broker.KeystorePEM(t, dir, "broker")
	certPath, keyPath := broker.WritePEM(t, dir, "broker")
	p12 := broker.WritePKCS12(t, dir, "broker", "right")
	jks := broker.WriteJKS(t, dir, "broker", "right")
	jksTrust := ca.WriteTruststoreJKS(t, dir, "right")
	p12Trust := ca.WriteTruststorePKCS12(t, dir, "right")
	missing := filepath.Join(dir, "missing.jks")
	read := func(p string) string { return string(mustRead(t, p)) }
	fixture := func(name string) string { return read(filepath.Join("testdata", name)) }

	cases := []struct {
		name string
		keys map[string]string
		want []string // substrings of the error
	}{
		{"no keystore", map[string]string{}, []string{"ssl.keystore.location"}},
		{"missing keystore file", map[string]string{"ssl.keystore.location": missing, "ssl.keystore.password": "x"},
			[]string{"ssl.keystore.location", missing, "no such file"}},
		{"JKS wrong password", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "wrong"},
			[]string{jks, "ssl.keystore.password", "incorrect"}},
		{"JKS wrong key password", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "right", "ssl.key.password": "wrong"},
			[]string{jks, "ssl.key.password"}},
		{"PKCS12 wrong password", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12, "ssl.keystore.password": "wrong"},
			[]string{p12, "ssl.keystore.password", "incorrect"}},
		{"keystore without password", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": p12},
			[]string{"ssl.keystore.password"}},
		{"password without keystore", map[string]string{"ssl.keystore.password": "x"}, []string{"ssl.keystore.location"}},
		{"PEM keystore with store password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemKS, "ssl.keystore.password": "x"},
			[]string{"ssl.keystore.password", "PEM"}},
		{"inline key without type PEM", map[string]string{"ssl.keystore.key": string(broker.KeyPEM), "ssl.keystore.certificate.chain": string(broker.CertPEM)},
			[]string{"ssl.keystore.key", "JKS"}},
		{"inline key without chain", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM)},
			[]string{"ssl.keystore.certificate.chain"}},
		{"inline chain without key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": string(broker.CertPEM)},
			[]string{"ssl.keystore.key"}},
		{"inline key and location", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pemKS,
			"ssl.keystore.key": string(broker.KeyPEM), "ssl.keystore.certificate.chain": string(broker.CertPEM)},
			[]string{"ssl.keystore.location", "ssl.keystore.key"}},
		{"key does not match the certificate", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(other.KeyPEM),
			"ssl.keystore.certificate.chain": string(broker.ChainPEM())}, []string{"ssl.keystore.key", "does not match", "CN=broker"}},
		{"chain out of order", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM),
			"ssl.keystore.certificate.chain": string(broker.CertPEM) + string(other.CertPEM)}, []string{"out of order"}},
		{"PEM file without key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": certPath},
			[]string{certPath, "no private key"}},
		{"PEM file without certificate", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": keyPath},
			[]string{keyPath, "no certificate"}},
		{"truststore as keystore", map[string]string{"ssl.keystore.location": jksTrust, "ssl.keystore.password": "right"},
			[]string{jksTrust, "no private key"}},
		{"PEM file read as JKS", map[string]string{"ssl.keystore.location": pemKS, "ssl.keystore.password": "x"},
			[]string{pemKS, "ssl.keystore.type=PEM"}},
		{"unknown keystore type", map[string]string{"ssl.keystore.type": "BCFKS", "ssl.keystore.location": jks, "ssl.keystore.password": "right"},
			[]string{"ssl.keystore.type", "BCFKS"}},
		{"encrypted key without password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": fixture("key-aes256.pem"),
			"ssl.keystore.certificate.chain": fixture("cert.pem")}, []string{"ssl.key.password"}},
		{"encrypted key, wrong password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": fixture("key-aes256.pem"),
			"ssl.key.password": "wrong", "ssl.keystore.certificate.chain": fixture("cert.pem")}, []string{"ssl.key.password", "wrong password"}},
		{"key password for a plain key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM),
			"ssl.key.password": "x", "ssl.keystore.certificate.chain": string(broker.CertPEM)}, []string{"ssl.key.password", "not encrypted"}},
		{"PBES1 encrypted key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": fixture("key-pbes1.pem"),
			"ssl.key.password": "fixture-pass", "ssl.keystore.certificate.chain": fixture("cert.pem")}, []string{"PBES2"}},
		{"DSA key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": fixture("key-dsa.pem"),
			"ssl.keystore.certificate.chain": fixture("cert.pem")}, []string{"ssl.keystore.key", "DSA", "RSA"}},
		{"SEC1 key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": fixture("key-sec1.pem"),
			"ssl.keystore.certificate.chain": fixture("cert.pem")}, []string{"EC PRIVATE KEY", "PKCS#8"}},
		{"two keys", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(broker.KeyPEM) + string(other.KeyPEM),
			"ssl.keystore.certificate.chain": string(broker.CertPEM)}, []string{"one private key"}},
		{"missing truststore file", withKeystore(t, map[string]string{"ssl.truststore.location": missing}),
			[]string{"ssl.truststore.location", missing}},
		{"JKS truststore wrong password", withKeystore(t, map[string]string{"ssl.truststore.location": jksTrust, "ssl.truststore.password": "wrong"}),
			[]string{jksTrust, "ssl.truststore.password", "incorrect"}},
		{"PKCS12 truststore wrong password", withKeystore(t, map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": p12Trust, "ssl.truststore.password": "wrong"}),
			[]string{p12Trust, "ssl.truststore.password", "incorrect"}},
		{"PKCS12 truststore without trusted attribute", withKeystore(t, map[string]string{"ssl.truststore.type": "PKCS12",
			"ssl.truststore.location": "testdata/untrusted.p12", "ssl.truststore.password": "fixture-pass"}),
			[]string{"testdata/untrusted.p12", "not marked as trusted"}},
		{"PEM truststore without certificates", withKeystore(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": keyPath}),
			[]string{keyPath, "no certificate"}},
		{"PEM truststore with password", withKeystore(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": certPath, "ssl.truststore.password": "x"}),
			[]string{"ssl.truststore.password"}},
		{"inline truststore without type PEM", withKeystore(t, map[string]string{"ssl.truststore.certificates": string(ca.CertPEM())}),
			[]string{"ssl.truststore.certificates", "JKS"}},
		{"bad client auth", withKeystore(t, map[string]string{"ssl.client.auth": "REQUIRED"}), []string{"ssl.client.auth"}},
		{"bad allow.dn.changes", withKeystore(t, map[string]string{"ssl.allow.dn.changes": "yes"}), []string{"ssl.allow.dn.changes"}},
		{"broken PEM", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----",
			"ssl.keystore.certificate.chain": string(broker.CertPEM)}, []string{"ssl.keystore.key", "PRIVATE KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewServerTLS(MapGetter(tc.keys), WithLogger(discardLogger()))
			if err == nil {
				t.Fatalf("NewServerTLS succeeded, want an error containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// withKeystore adds a valid keystore to truststore-only test keys.
func withKeystore(t *testing.T, keys map[string]string) map[string]string {
	t.Helper()
	keys["ssl.keystore.type"] = "PEM"
	keys["ssl.keystore.key"] = string(mustRead(t, "testdata/key.pem"))
	keys["ssl.keystore.certificate.chain"] = string(mustRead(t, "testdata/cert.pem"))
	return keys
}

// A client whose CA a reload removed from the truststore cannot come back
// by resuming a TLS session made before the reload.
func TestReloadedTruststoreAppliesToResumedSessions(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	truststore := ca.WriteCertPEM(t, dir)
	s := newServer(t, brokerKeys(t, ca.Issue(t, "broker", "localhost"),
		"ssl.truststore.type", "PEM", "ssl.truststore.location", truststore, "ssl.client.auth", "required"))
	alice := ca.Issue(t, "alice")
	client := newClient(t, map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.CertPEM()),
		"ssl.keystore.type": "PEM", "ssl.keystore.key": string(alice.KeyPEM), "ssl.keystore.certificate.chain": string(alice.ChainPEM())})
	client.ClientSessionCache = tls.NewLRUClientSessionCache(4)

	mustConnect(t, s.Config(), client, "localhost")
	if _, c := mustConnect(t, s.Config(), client, "localhost"); !c.state.DidResume {
		t.Fatal("the second connection did not resume: the test proves nothing")
	}
	// The broker's certificate is unchanged, so a resumed session would
	// still be good for the client.
	if err := os.WriteFile(truststore, securitytest.NewCA(t).CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	mustFail(t, s.Config(), client, "localhost")
}
