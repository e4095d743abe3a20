package securitytest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// validity is how long certificates are valid; they start an hour in the
// past so that a clock slightly behind does not reject them.
const validity = 7 * 24 * time.Hour

// CA is a test certificate authority whose key lives only in memory. It
// is immutable after NewCA and safe for concurrent use.
type CA struct {
	// Certificate is the CA's self-signed certificate, the one truststores
	// hold.
	Certificate *x509.Certificate

	key *ecdsa.PrivateKey
}

// NewCA creates a CA with a fresh ECDSA P-256 key and a self-signed
// certificate whose subject is CN=Silkworm Test CA <serial>, so that two CAs
// of one test never look alike.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	serial := newSerial(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Silkworm Test CA " + serial.Text(16)[:8]},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("securitytest: create CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("securitytest: parse CA certificate: %v", err)
	}
	return &CA{Certificate: cert, key: key}
}

// CertPEM is the CA certificate as one PEM block: the content of a PEM
// truststore (ssl.truststore.certificates, kcat's ssl.ca.location).
func (ca *CA) CertPEM() []byte { return certPEM(ca.Certificate) }

// Pool is a certificate pool holding only the CA, for tls.Config's RootCAs
// or ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Certificate)
	return p
}

// WriteCertPEM writes CertPEM to a new file ca-*.pem in dir and returns its
// path: a truststore for ssl.truststore.type=PEM.
func (ca *CA) WriteCertPEM(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "ca-*.pem")
	if err != nil {
		t.Fatalf("securitytest: %v", err)
	}
	defer f.Close()
	if _, err := f.Write(ca.CertPEM()); err != nil {
		t.Fatalf("securitytest: write %s: %v", f.Name(), err)
	}
	return f.Name()
}

// WriteTruststorePKCS12 writes a PKCS12 truststore holding the CA as a
// trusted certificate (with the attribute Java's keytool sets) to a new
// file ca-*.p12 in dir and returns its path.
func (ca *CA) WriteTruststorePKCS12(t testing.TB, dir, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Certificate}, password)
	if err != nil {
		t.Fatalf("securitytest: encode PKCS12 truststore: %v", err)
	}
	return writeTemp(t, dir, "ca-*.p12", data)
}

// WriteTruststoreJKS writes a JKS truststore holding the CA as a trusted
// certificate entry (alias "caroot") to a new file ca-*.jks in dir and
// returns its path.
func (ca *CA) WriteTruststoreJKS(t testing.TB, dir, password string) string {
	t.Helper()
	ks := keystore.New()
	err := ks.SetTrustedCertificateEntry("caroot", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(),
		Certificate:  keystore.Certificate{Type: "X509", Content: ca.Certificate.Raw},
	})
	if err != nil {
		t.Fatalf("securitytest: JKS trusted entry: %v", err)
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(password)); err != nil {
		t.Fatalf("securitytest: encode JKS truststore: %v", err)
	}
	return writeTemp(t, dir, "ca-*.jks", buf.Bytes())
}

// Issue signs a certificate for cn with a fresh ECDSA P-256 key. Each host
// that parses as an IP address becomes an IP SAN, every other one a DNS
// SAN. The certificate allows both server and client authentication, so
// one Issue serves a broker listener or an mTLS client.
func (ca *CA) Issue(t testing.TB, cn string, hosts ...string) Cert {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.IssueTemplate(t, tmpl)
}

// IssueTemplate signs tmpl with a fresh ECDSA P-256 key, for certificates
// Issue cannot make: a subject with several attributes or a raw subject
// (tmpl.RawSubject), an expired certificate, other key usages. Zero fields
// are filled in: SerialNumber (random), NotBefore/NotAfter (an hour ago,
// a week from now), KeyUsage (digital signature) and ExtKeyUsage (server
// and client authentication). tmpl is modified.
func (ca *CA) IssueTemplate(t testing.TB, tmpl *x509.Certificate) Cert {
	t.Helper()
	key := newKey(t)
	if tmpl.SerialNumber == nil {
		tmpl.SerialNumber = newSerial(t)
	}
	now := time.Now()
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = now.Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = now.Add(validity)
	}
	if tmpl.KeyUsage == 0 {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	}
	if tmpl.ExtKeyUsage == nil {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Certificate, key.Public(), ca.key)
	if err != nil {
		t.Fatalf("securitytest: create certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("securitytest: parse certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("securitytest: marshal key: %v", err)
	}
	return Cert{
		CertPEM: certPEM(leaf),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Leaf:    leaf,
		Key:     key,
		CA:      ca.Certificate,
	}
}

// Cert is a certificate signed by a CA and its private key. It is a value;
// its methods only read it.
type Cert struct {
	CertPEM []byte            // the leaf certificate alone, one PEM block
	KeyPEM  []byte            // the private key, unencrypted PKCS#8 ("PRIVATE KEY"), as Kafka's PEM keystores want it
	Leaf    *x509.Certificate // the parsed leaf
	Key     crypto.Signer     // the private key
	CA      *x509.Certificate // the issuing CA's certificate
}

// ChainPEM is the leaf followed by its CA: the value of
// ssl.keystore.certificate.chain.
func (c Cert) ChainPEM() []byte {
	return append(append([]byte{}, c.CertPEM...), certPEM(c.CA)...)
}

// TLSCertificate is the certificate chain and key for a crypto/tls
// Config's Certificates, for a peer built without Kafka's keys.
func (c Cert) TLSCertificate() tls.Certificate {
	return tls.Certificate{
		Certificate: [][]byte{c.Leaf.Raw, c.CA.Raw},
		PrivateKey:  c.Key,
		Leaf:        c.Leaf,
	}
}

// WritePEM writes the leaf certificate to dir/name.pem and the private key
// to dir/name-key.pem, and returns both paths.
func (c Cert) WritePEM(t testing.TB, dir, name string) (certPath, keyPath string) {
	t.Helper()
	certPath = filepath.Join(dir, name+".pem")
	keyPath = filepath.Join(dir, name+"-key.pem")
	writeFile(t, certPath, c.CertPEM)
	writeFile(t, keyPath, c.KeyPEM)
	return certPath, keyPath
}

// KeystorePEM writes one file, dir/name-keystore.pem, holding the private
// key followed by the chain (leaf, then CA), and returns its path: the
// keystore for ssl.keystore.type=PEM with ssl.keystore.location.
func (c Cert) KeystorePEM(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+"-keystore.pem")
	writeFile(t, path, append(append([]byte{}, c.KeyPEM...), c.ChainPEM()...))
	return path
}

// WritePKCS12 writes a PKCS12 keystore with the key and the chain (leaf,
// then CA), protected by password (store and key alike, as keytool makes
// them), to dir/name.p12 and returns its path. The encryption is the
// modern one (PBES2 with AES-256, SHA-256 MAC) that Java 11+ reads.
func (c Cert) WritePKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(c.Key, c.Leaf, []*x509.Certificate{c.CA}, password)
	if err != nil {
		t.Fatalf("securitytest: encode PKCS12 keystore: %v", err)
	}
	path := filepath.Join(dir, name+".p12")
	writeFile(t, path, data)
	return path
}

// WriteJKS writes a JKS keystore with one private key entry (alias name,
// the chain leaf then CA), the store and the key both protected by
// password, to dir/name.jks and returns its path.
func (c Cert) WriteJKS(t testing.TB, dir, name, password string) string {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatalf("securitytest: marshal key: %v", err)
	}
	ks := keystore.New()
	err = ks.SetPrivateKeyEntry(name, keystore.PrivateKeyEntry{
		CreationTime: time.Now(),
		PrivateKey:   keyDER,
		CertificateChain: []keystore.Certificate{
			{Type: "X509", Content: c.Leaf.Raw},
			{Type: "X509", Content: c.CA.Raw},
		},
	}, []byte(password))
	if err != nil {
		t.Fatalf("securitytest: JKS key entry: %v", err)
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(password)); err != nil {
		t.Fatalf("securitytest: encode JKS keystore: %v", err)
	}
	path := filepath.Join(dir, name+".jks")
	writeFile(t, path, buf.Bytes())
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("securitytest: generate key: %v", err)
	}
	return key
}

func newSerial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		t.Fatalf("securitytest: serial number: %v", err)
	}
	// At least 2^124: the hex form has 32 digits, and never zero.
	return n.Add(n, new(big.Int).Lsh(big.NewInt(1), 124))
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("securitytest: %v", err)
	}
}

func writeTemp(t testing.TB, dir, pattern string, data []byte) string {
	t.Helper()
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		t.Fatalf("securitytest: %v", err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatalf("securitytest: write %s: %v", f.Name(), err)
	}
	return f.Name()
}
