package securitytest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"strings"
	"testing"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

func TestIssueVerifiesAgainstCA(t *testing.T) {
	ca := NewCA(t)
	c := ca.Issue(t, "broker", "127.0.0.1", "localhost", "::1")

	if c.Leaf.Subject.CommonName != "broker" {
		t.Errorf("CN = %q, want broker", c.Leaf.Subject.CommonName)
	}
	if got := c.Leaf.DNSNames; len(got) != 1 || got[0] != "localhost" {
		t.Errorf("DNS SANs = %v, want [localhost]", got)
	}
	if got := c.Leaf.IPAddresses; len(got) != 2 || !got[0].Equal(net.IPv4(127, 0, 0, 1)) || !got[1].Equal(net.IPv6loopback) {
		t.Errorf("IP SANs = %v, want [127.0.0.1 ::1]", got)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
			_, err := c.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}})
			if err != nil {
				t.Errorf("verify for %s usage %v: %v", host, usage, err)
			}
		}
	}
	if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: NewCA(t).Pool()}); err == nil {
		t.Error("certificate verified against another CA")
	}
	if _, err := tls.X509KeyPair(c.ChainPEM(), c.KeyPEM); err != nil {
		t.Errorf("ChainPEM and KeyPEM do not make a key pair: %v", err)
	}
	if b, _ := pem.Decode(c.KeyPEM); b == nil || b.Type != "PRIVATE KEY" {
		t.Errorf("KeyPEM is not a PKCS#8 PRIVATE KEY block")
	}
}

func TestFilesRoundTrip(t *testing.T) {
	ca := NewCA(t)
	c := ca.Issue(t, "alice")
	dir := t.TempDir()

	certPath, keyPath := c.WritePEM(t, dir, "alice")
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		t.Errorf("WritePEM files: %v", err)
	}

	ksPath := c.KeystorePEM(t, dir, "alice")
	data, err := os.ReadFile(ksPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(data, data); err != nil {
		t.Errorf("KeystorePEM file is not a key pair: %v", err)
	}
	if n := strings.Count(string(data), "BEGIN CERTIFICATE"); n != 2 {
		t.Errorf("KeystorePEM holds %d certificates, want leaf and CA", n)
	}

	caPath := ca.WriteCertPEM(t, dir)
	if caPath2 := ca.WriteCertPEM(t, dir); caPath2 == caPath {
		t.Errorf("WriteCertPEM reused %s", caPath)
	}
	data, err = os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, ca.CertPEM()) {
		t.Error("WriteCertPEM content differs from CertPEM")
	}

	p12, err := os.ReadFile(c.WritePKCS12(t, dir, "alice", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	_, leaf, chain, err := pkcs12.DecodeChain(p12, "secret")
	if err != nil {
		t.Fatalf("decode PKCS12: %v", err)
	}
	if !leaf.Equal(c.Leaf) || len(chain) != 1 || !chain[0].Equal(ca.Certificate) {
		t.Error("PKCS12 keystore does not hold leaf then CA")
	}
	if _, _, _, err := pkcs12.DecodeChain(p12, "wrong"); err == nil {
		t.Error("PKCS12 keystore opened with a wrong password")
	}

	trust, err := os.ReadFile(ca.WriteTruststorePKCS12(t, dir, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pkcs12.DecodeTrustStore(trust, "secret")
	if err != nil || len(certs) != 1 || !certs[0].Equal(ca.Certificate) {
		t.Errorf("PKCS12 truststore = %v, %v; want the CA", certs, err)
	}

	jks := loadJKS(t, c.WriteJKS(t, dir, "alice", "secret"), "secret")
	entry, err := jks.GetPrivateKeyEntry("alice", []byte("secret"))
	if err != nil {
		t.Fatalf("JKS key entry: %v", err)
	}
	if len(entry.CertificateChain) != 2 || !bytes.Equal(entry.CertificateChain[0].Content, c.Leaf.Raw) {
		t.Error("JKS chain does not start with the leaf")
	}
	if _, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey); err != nil {
		t.Errorf("JKS key: %v", err)
	}

	jksTrust := loadJKS(t, ca.WriteTruststoreJKS(t, dir, "secret"), "secret")
	tc, err := jksTrust.GetTrustedCertificateEntry("caroot")
	if err != nil || !bytes.Equal(tc.Certificate.Content, ca.Certificate.Raw) {
		t.Errorf("JKS truststore entry = %v; want the CA", err)
	}
}

func TestTLSCertificateHandshake(t *testing.T) {
	ca := NewCA(t)
	server := ca.Issue(t, "broker", "localhost")
	client := ca.Issue(t, "alice")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c1 := <-accepted
	if c1 == nil {
		t.Fatal("accept failed")
	}
	defer c1.Close()
	srv := tls.Server(c1, &tls.Config{
		Certificates: []tls.Certificate{server.TLSCertificate()},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
	})
	cli := tls.Client(c2, &tls.Config{
		Certificates: []tls.Certificate{client.TLSCertificate()},
		RootCAs:      ca.Pool(),
		ServerName:   "localhost",
	})
	errc := make(chan error, 1)
	go func() { errc <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got := srv.ConnectionState().PeerCertificates[0].Subject.CommonName; got != "alice" {
		t.Errorf("server saw client %q, want alice", got)
	}
}

func loadJKS(t *testing.T, path, password string) keystore.KeyStore {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ks := keystore.New()
	if err := ks.Load(f, []byte(password)); err != nil {
		t.Fatalf("load JKS %s: %v", path, err)
	}
	return ks
}
