package security

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/pbkdf2"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf16"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Store types of ssl.keystore.type and ssl.truststore.type.
const (
	storeJKS    = "JKS"
	storePKCS12 = "PKCS12"
	storePEM    = "PEM"
)

// secret is a password-type config value: Kafka distinguishes an unset
// password from a set one (an unset truststore password skips the
// integrity check).
type secret struct {
	value string
	set   bool
}

// keystoreConfig is the ssl.keystore.* and ssl.key.password part of a
// configuration, checked by validate the way Kafka's
// DefaultSslEngineFactory.createKeystore checks it.
type keystoreConfig struct {
	typ         string // upper case; JKS when unset
	location    string
	password    secret
	keyPassword secret
	key         string // ssl.keystore.key (inline PEM)
	chain       string // ssl.keystore.certificate.chain (inline PEM)
}

// truststoreConfig is the ssl.truststore.* part of a configuration.
type truststoreConfig struct {
	typ      string
	location string
	password secret
	certs    string // ssl.truststore.certificates (inline PEM)
}

// configured reports whether the keys name a keystore at all (a client may
// have none).
func (c keystoreConfig) configured() bool { return c.location != "" || c.key != "" }

func (c truststoreConfig) configured() bool { return c.location != "" || c.certs != "" }

// validate refuses the combinations Kafka refuses at start.
func (c keystoreConfig) validate() error {
	switch c.typ {
	case storeJKS, storePKCS12, storePEM:
	default:
		return fmt.Errorf("ssl.keystore.type=%s is not supported (JKS, PKCS12 or PEM)", c.typ)
	}
	switch {
	case c.key != "":
		switch {
		case c.typ != storePEM:
			return fmt.Errorf("ssl.keystore.key can be set only with ssl.keystore.type=PEM, but the type is %s", c.typ)
		case c.chain == "":
			return errors.New("ssl.keystore.key is set but ssl.keystore.certificate.chain is not")
		case c.location != "":
			return errors.New("ssl.keystore.location and ssl.keystore.key are both set: use one")
		case c.password.set:
			return errors.New("ssl.keystore.password cannot be set with ssl.keystore.type=PEM; only ssl.key.password (for an encrypted key) may be")
		}
	case c.chain != "":
		return errors.New("ssl.keystore.certificate.chain is set but ssl.keystore.key is not")
	case c.typ == storePEM && c.location != "":
		if c.password.set {
			return errors.New("ssl.keystore.password cannot be set with ssl.keystore.type=PEM; only ssl.key.password (for an encrypted key) may be")
		}
	case c.location == "" && c.password.set:
		return errors.New("ssl.keystore.password is set but ssl.keystore.location is not")
	case c.location != "" && !c.password.set:
		return fmt.Errorf("ssl.keystore.location is set but ssl.keystore.password is not (required for ssl.keystore.type=%s)", c.typ)
	}
	return nil
}

func (c truststoreConfig) validate() error {
	switch c.typ {
	case storeJKS, storePKCS12, storePEM:
	default:
		return fmt.Errorf("ssl.truststore.type=%s is not supported (JKS, PKCS12 or PEM)", c.typ)
	}
	switch {
	case c.certs != "":
		switch {
		case c.typ != storePEM:
			return fmt.Errorf("ssl.truststore.certificates can be set only with ssl.truststore.type=PEM, but the type is %s", c.typ)
		case c.location != "":
			return errors.New("ssl.truststore.location and ssl.truststore.certificates are both set: use one")
		case c.password.set:
			return errors.New("ssl.truststore.password cannot be set with ssl.truststore.type=PEM")
		}
	case c.typ == storePEM && c.location != "":
		if c.password.set {
			return errors.New("ssl.truststore.password cannot be set with ssl.truststore.type=PEM")
		}
	case c.location == "" && c.password.set:
		return errors.New("ssl.truststore.password is set but ssl.truststore.location is not")
	}
	return nil
}

// load reads the keystore: every private key with its certificate chain.
// A keystore without a private key is an error.
func (c keystoreConfig) load() ([]tls.Certificate, error) {
	if c.key != "" {
		cert, err := pemKeyPair([]byte(c.chain), []byte(c.key), c.keyPassword)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.key/ssl.keystore.certificate.chain: %w", err)
		}
		return []tls.Certificate{cert}, nil
	}
	data, err := os.ReadFile(c.location)
	if err != nil {
		return nil, fmt.Errorf("ssl.keystore.location: %w", err)
	}
	var certs []tls.Certificate
	switch c.typ {
	case storePEM:
		var cert tls.Certificate
		cert, err = pemKeyPair(data, data, c.keyPassword)
		certs = []tls.Certificate{cert}
	default:
		// Java's JKS and PKCS12 keystore types each read the other format
		// (keystore.type.compat), so the file decides.
		switch sniff(data) {
		case storeJKS:
			certs, err = jksKeyPairs(data, c.password.value, c.keyPassword)
		case storePKCS12:
			var cert tls.Certificate
			cert, err = pkcs12KeyPair(data, c.password.value)
			certs = []tls.Certificate{cert}
		case storePEM:
			err = errors.New("the file is PEM: set ssl.keystore.type=PEM")
		default:
			err = errors.New("neither a JKS nor a PKCS12 keystore")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ssl.keystore.location %s (ssl.keystore.type=%s): %w", c.location, c.typ, err)
	}
	return certs, nil
}

// load reads the trusted certificates. An empty truststore is an error:
// it would refuse every peer.
func (c truststoreConfig) load() ([]*x509.Certificate, error) {
	if c.certs != "" {
		certs, err := pemCertificates([]byte(c.certs))
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.certificates: %w", err)
		}
		return certs, nil
	}
	data, err := os.ReadFile(c.location)
	if err != nil {
		return nil, fmt.Errorf("ssl.truststore.location: %w", err)
	}
	var certs []*x509.Certificate
	switch c.typ {
	case storePEM:
		certs, err = pemCertificates(data)
	default:
		switch sniff(data) {
		case storeJKS:
			certs, err = jksTrusted(data, c.password)
		case storePKCS12:
			certs, err = pkcs12Trusted(data, c.password.value)
		case storePEM:
			err = errors.New("the file is PEM: set ssl.truststore.type=PEM")
		default:
			err = errors.New("neither a JKS nor a PKCS12 truststore")
		}
		if err == nil && len(certs) == 0 {
			err = errors.New("no trusted certificate in it")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ssl.truststore.location %s (ssl.truststore.type=%s): %w", c.location, c.typ, err)
	}
	return certs, nil
}

// files are the paths the keystore reads, for WatchFiles.
func (c keystoreConfig) files() []string {
	if c.key != "" || c.location == "" {
		return nil
	}
	return []string{c.location}
}

func (c truststoreConfig) files() []string {
	if c.certs != "" || c.location == "" {
		return nil
	}
	return []string{c.location}
}

const (
	jksMagic   = 0xFEEDFEED
	jceksMagic = 0xCECECECE
)

// sniff tells a file's format by its first bytes.
func sniff(data []byte) string {
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return storeJKS
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jceksMagic:
		return "JCEKS"
	case len(data) > 0 && data[0] == 0x30: // a DER SEQUENCE: PKCS#12's PFX
		return storePKCS12
	case bytes.Contains(data, []byte("-----BEGIN")):
		return storePEM
	}
	return ""
}

// pemKeyPair builds a key pair from PEM text the way Kafka's PemStore
// does: exactly one PKCS#8 private key (encrypted when keyPassword is set,
// as Kafka requires) and a chain of at least one certificate, leaf first.
func pemKeyPair(chainPEM, keyPEM []byte, keyPassword secret) (tls.Certificate, error) {
	chain, err := pemCertificates(chainPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	blocks, err := pemBlocks(keyPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	var keys []pemBlock
	for _, b := range blocks {
		if strings.HasSuffix(b.label, "PRIVATE KEY") {
			keys = append(keys, b)
		}
	}
	switch {
	case len(keys) == 0:
		return tls.Certificate{}, errors.New("no private key (PEM block PRIVATE KEY or ENCRYPTED PRIVATE KEY) found")
	case len(keys) > 1:
		return tls.Certificate{}, fmt.Errorf("expected one private key, found %d", len(keys))
	}
	der, err := pemPrivateKey(keys[0], keyPassword)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := parsePKCS8Key(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return keyPair(key, chain)
}

// pemPrivateKey returns the PKCS#8 DER of a PEM private key block.
func pemPrivateKey(b pemBlock, keyPassword secret) ([]byte, error) {
	switch {
	case b.headers:
		return nil, fmt.Errorf("private key block %q has headers (OpenSSL's legacy encryption): Kafka reads only PKCS#8 (convert with: openssl pkcs8 -topk8)", b.label)
	case b.label == "PRIVATE KEY":
		if keyPassword.set {
			return nil, errors.New("ssl.key.password is set but the private key is not encrypted (Kafka requires an ENCRYPTED PRIVATE KEY then); remove ssl.key.password or encrypt the key")
		}
		return b.der, nil
	case b.label == "ENCRYPTED PRIVATE KEY":
		if !keyPassword.set {
			return nil, errors.New("the private key is encrypted but ssl.key.password is not set")
		}
		der, err := decryptPKCS8(b.der, keyPassword.value)
		if err != nil {
			return nil, fmt.Errorf("decrypt the private key with ssl.key.password: %w", err)
		}
		return der, nil
	default:
		return nil, fmt.Errorf("private key block %q is not PKCS#8: Kafka reads only \"PRIVATE KEY\" or \"ENCRYPTED PRIVATE KEY\" (convert with: openssl pkcs8 -topk8)", b.label)
	}
}

// pemCertificates parses every CERTIFICATE block of a PEM text; there must
// be at least one.
func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, b := range blocks {
		if b.label != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate (PEM block CERTIFICATE) found")
	}
	return certs, nil
}

// pemBlock is one BEGIN/END block of a PEM text.
type pemBlock struct {
	label   string // e.g. "CERTIFICATE", "ENCRYPTED PRIVATE KEY"; spaces collapsed
	der     []byte
	headers bool // RFC 1421 headers (Proc-Type: ...) preceded the data
}

var (
	pemBegin = regexp.MustCompile(`-+BEGIN\s*([^-]*?)\s*-+`)
	pemEnd   = regexp.MustCompile(`-+END\s*([^-]*?)\s*-+`)
)

// pemBlocks finds the PEM blocks of a text. Like Kafka's PemParser, and
// unlike encoding/pem, it accepts the base64 on the marker lines' own line
// and spaces instead of line breaks: a value written over several lines of
// a properties file with '\' continuations arrives on one line.
func pemBlocks(data []byte) ([]pemBlock, error) {
	s := string(data)
	var blocks []pemBlock
	for {
		begin := pemBegin.FindStringSubmatchIndex(s)
		if begin == nil {
			return blocks, nil
		}
		label := strings.Join(strings.Fields(s[begin[2]:begin[3]]), " ")
		s = s[begin[1]:]
		end := pemEnd.FindStringSubmatchIndex(s)
		if end == nil {
			return nil, fmt.Errorf("PEM block %s has no END line", label)
		}
		if endLabel := strings.Join(strings.Fields(s[end[2]:end[3]]), " "); endLabel != label {
			return nil, fmt.Errorf("PEM block BEGIN %s ends with END %s", label, endLabel)
		}
		body := s[:end[0]]
		s = s[end[1]:]
		b := pemBlock{label: label}
		var b64 strings.Builder
		for _, line := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if strings.Contains(line, ":") {
				b.headers = true
				continue
			}
			for _, f := range strings.Fields(line) {
				b64.WriteString(f)
			}
		}
		der, err := base64.StdEncoding.DecodeString(b64.String())
		if err != nil {
			return nil, fmt.Errorf("PEM block %s: %w", label, err)
		}
		b.der = der
		blocks = append(blocks, b)
	}
}

// oidDSA is the PKCS#8 algorithm of a DSA key (RFC 3279).
var oidDSA = asn1.ObjectIdentifier{1, 2, 840, 10040, 4, 1}

// parsePKCS8Key parses a PKCS#8 private key of a type crypto/tls can sign
// with.
func parsePKCS8Key(der []byte) (crypto.Signer, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		var p8 struct {
			Version int
			Algo    pkix.AlgorithmIdentifier
			Key     []byte
		}
		if _, e := asn1.Unmarshal(der, &p8); e == nil && p8.Algo.Algorithm.Equal(oidDSA) {
			// Java's TLS takes DSA keys (old keytool defaults made
			// them); Go's crypto/tls has no DSA.
			return nil, errors.New("the private key is a DSA key, which Silkworm's TLS cannot use: make an RSA, EC or Ed25519 key (keytool -keyalg RSA)")
		}
		return nil, fmt.Errorf("parse the PKCS#8 private key: %w", err)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	default:
		return nil, fmt.Errorf("private key type %T is not supported for TLS", k)
	}
}

// keyPair checks that the chain starts with the key's certificate and that
// each certificate is issued by the next, as Java's keystores check it, and
// builds the tls.Certificate.
func keyPair(key crypto.Signer, chain []*x509.Certificate) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate for the private key")
	}
	if !publicKeyEqual(key.Public(), chain[0].PublicKey) {
		return tls.Certificate{}, fmt.Errorf("the private key does not match the first certificate of the chain (subject %s)", DistinguishedName(chain[0]))
	}
	raw := make([][]byte, len(chain))
	for i, c := range chain {
		raw[i] = c.Raw
		if i+1 < len(chain) && !issuedBy(c, chain[i+1]) {
			return tls.Certificate{}, fmt.Errorf("certificate chain out of order: certificate %d (subject %s) is issued by %s, but certificate %d is %s",
				i+1, DistinguishedName(c), distinguishedName(c.RawIssuer), i+2, DistinguishedName(chain[i+1]))
		}
	}
	return tls.Certificate{Certificate: raw, PrivateKey: key, Leaf: chain[0]}, nil
}

func issuedBy(c, issuer *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, issuer.RawSubject) ||
		strings.EqualFold(distinguishedName(c.RawIssuer), DistinguishedName(issuer))
}

func publicKeyEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// jksKeyPairs reads every private key entry of a JKS keystore. The store
// password checks the file's integrity; each key is protected by
// ssl.key.password, or by the store password when that is unset.
func jksKeyPairs(data []byte, storePassword string, keyPassword secret) ([]tls.Certificate, error) {
	if !jksIntegrityOK(data, storePassword) {
		return nil, errors.New("keystore password (ssl.keystore.password) is incorrect or the file is corrupt")
	}
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(storePassword)); err != nil {
		return nil, fmt.Errorf("read JKS: %w", err)
	}
	kp := storePassword
	if keyPassword.set {
		kp = keyPassword.value
	}
	var certs []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(kp))
		if err != nil {
			which := "ssl.keystore.password"
			if keyPassword.set {
				which = "ssl.key.password"
			}
			return nil, fmt.Errorf("recover the private key %q (wrong %s?): %w", alias, which, err)
		}
		key, err := parsePKCS8Key(e.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", alias, err)
		}
		chain, err := jksChain(e.CertificateChain)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", alias, err)
		}
		cert, err := keyPair(key, chain)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", alias, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no private key entry in it")
	}
	return certs, nil
}

func jksChain(entries []keystore.Certificate) ([]*x509.Certificate, error) {
	var chain []*x509.Certificate
	for i, e := range entries {
		c, err := x509.ParseCertificate(e.Content)
		if err != nil {
			return nil, fmt.Errorf("certificate %d of the chain: %w", i+1, err)
		}
		chain = append(chain, c)
	}
	return chain, nil
}

// jksTrusted reads the trusted certificates of a JKS truststore, and, as
// Java's trust managers do, the leaf of each private key entry. Without a
// password the integrity check is skipped (Kafka: "integrity checking is
// disabled").
func jksTrusted(data []byte, password secret) ([]*x509.Certificate, error) {
	if password.set && !jksIntegrityOK(data, password.value) {
		return nil, errors.New("truststore password (ssl.truststore.password) is incorrect or the file is corrupt")
	}
	pw := password.value
	if !password.set {
		// keystore-go always checks the digest: re-sign the body with
		// the empty password so that it passes.
		data = jksResign(data)
		pw = ""
	}
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(pw)); err != nil {
		return nil, fmt.Errorf("read JKS: %w", err)
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var content []byte
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", alias, err)
			}
			content = e.Certificate.Content
		case ks.IsPrivateKeyEntry(alias):
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil || len(chain) == 0 {
				continue
			}
			content = chain[0].Content
		default:
			continue
		}
		c, err := x509.ParseCertificate(content)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// jksDigest is the JKS integrity digest: SHA-1 over the password (UTF-16
// big endian), the phrase "Mighty Aphrodite" and the body.
func jksDigest(body []byte, password string) []byte {
	h := sha1.New()
	for _, u := range utf16.Encode([]rune(password)) {
		h.Write([]byte{byte(u >> 8), byte(u)})
	}
	h.Write([]byte("Mighty Aphrodite"))
	h.Write(body)
	return h.Sum(nil)
}

func jksIntegrityOK(data []byte, password string) bool {
	if len(data) < sha1.Size {
		return false
	}
	body, digest := data[:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	return subtle.ConstantTimeCompare(jksDigest(body, password), digest) == 1
}

func jksResign(data []byte) []byte {
	if len(data) < sha1.Size {
		return data
	}
	body := data[:len(data)-sha1.Size]
	return append(append([]byte{}, body...), jksDigest(body, "")...)
}

// pkcs12KeyPair reads the one private key of a PKCS12 keystore and its
// chain. keytool makes the key password equal to the store password, and
// go-pkcs12 uses the store password for both, so ssl.key.password is not
// consulted.
func pkcs12KeyPair(data []byte, password string) (tls.Certificate, error) {
	k, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
			return tls.Certificate{}, errors.New("keystore password (ssl.keystore.password) is incorrect")
		}
		return tls.Certificate{}, fmt.Errorf("read PKCS12: %w", err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("private key type %T is not supported for TLS", k)
	}
	// go-pkcs12 takes the first certificate as the leaf; find the one
	// that matches the key instead, and keep the others in file order.
	all := append([]*x509.Certificate{leaf}, cas...)
	chain := make([]*x509.Certificate, 0, len(all))
	for _, c := range all {
		if publicKeyEqual(key.Public(), c.PublicKey) {
			chain = append(chain, c)
		}
	}
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate in it matches the private key")
	}
	for _, c := range all {
		if c != chain[0] {
			chain = append(chain, c)
		}
	}
	return keyPair(key, orderChain(chain))
}

// orderChain puts the certificates after the leaf in issuing order when a
// file lists them otherwise; certificates that do not belong to the chain
// stay at the end.
func orderChain(certs []*x509.Certificate) []*x509.Certificate {
	out := []*x509.Certificate{certs[0]}
	rest := append([]*x509.Certificate{}, certs[1:]...)
	for len(rest) > 0 {
		last := out[len(out)-1]
		i := 0
		for i < len(rest) && !issuedBy(last, rest[i]) {
			i++
		}
		if i == len(rest) || bytes.Equal(last.Raw, rest[i].Raw) {
			break
		}
		out = append(out, rest[i])
		rest = append(rest[:i], rest[i+1:]...)
	}
	// A certificate that issues nothing here is dropped from what the
	// peer is sent, as Java drops it from the key entry.
	return out
}

// pkcs12Trusted reads a PKCS12 truststore: certificates carrying Java's
// trusted-certificate attribute, which keytool -importcert sets. Like
// Java, it does not trust certificates without it.
func pkcs12Trusted(data []byte, password string) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(data, password)
	if err == nil {
		return certs, nil
	}
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return nil, errors.New("truststore password (ssl.truststore.password) is incorrect")
	}
	// A keystore used as a truststore: Java trusts the leaf of its key
	// entry.
	if _, leaf, _, err2 := pkcs12.DecodeChain(data, password); err2 == nil {
		return []*x509.Certificate{leaf}, nil
	}
	if strings.Contains(err.Error(), "not marked as trusted") {
		return nil, errors.New("its certificates are not marked as trusted (Java ignores them too): create it with keytool -importcert, or use ssl.truststore.type=PEM")
	}
	return nil, fmt.Errorf("read PKCS12: %w", err)
}

// Encrypted PKCS#8 (RFC 5958 EncryptedPrivateKeyInfo) with PBES2 (RFC
// 8018): PBKDF2 with HMAC-SHA1/224/256/384/512 and AES-CBC or
// DES-EDE3-CBC, what `openssl pkcs8 -topk8` and Java write today. PBES1 and
// the PKCS#12 PBE schemes are refused.
var (
	oidPBES2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA1  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA2x = map[int]func() hash.Hash{
		8: sha256.New224, 9: sha256.New, 10: sha512.New384, 11: sha512.New,
	}
	oidAESCBC     = map[int]int{2: 16, 22: 24, 42: 32} // last arc of 2.16.840.1.101.3.4.1.x → key length
	oidAESPrefix  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

// maxPBKDF2Iterations bounds the work a configured key can ask for.
const maxPBKDF2Iterations = 10_000_000

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo and returns the
// PKCS#8 PrivateKeyInfo DER inside.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("not an EncryptedPrivateKeyInfo: %v", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encryption scheme %s is not supported, only PBES2 (re-encrypt with: openssl pkcs8 -topk8 -v2 aes-256-cbc)", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %w", err)
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation function %s is not supported, only PBKDF2", params.KeyDerivationFunc.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %w", err)
	}
	if kdf.IterationCount < 1 || kdf.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("PBKDF2 iteration count %d out of range", kdf.IterationCount)
	}
	prf := sha1.New
	if len(kdf.PRF.Algorithm) > 0 && !kdf.PRF.Algorithm.Equal(oidHMACWithSHA1) {
		a := kdf.PRF.Algorithm
		h, ok := oidHMACWithSHA2x[a[len(a)-1]]
		if !ok || len(a) != len(oidHMACWithSHA1) || !a[:len(a)-1].Equal(oidHMACWithSHA1[:len(a)-1]) {
			return nil, fmt.Errorf("PBKDF2 pseudo-random function %s is not supported", a)
		}
		prf = h
	}

	scheme := params.EncryptionScheme.Algorithm
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch {
	case len(scheme) == len(oidAESPrefix)+1 && scheme[:len(oidAESPrefix)].Equal(oidAESPrefix) && oidAESCBC[scheme[len(scheme)-1]] != 0:
		keyLen, newBlock = oidAESCBC[scheme[len(scheme)-1]], aes.NewCipher
	case scheme.Equal(oidDESEDE3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("cipher %s is not supported (AES-128/192/256-CBC or DES-EDE3-CBC)", scheme)
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, fmt.Errorf("PBKDF2 key length %d does not fit cipher %s", kdf.KeyLength, scheme)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("cipher IV: %w", err)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.IterationCount, keyLen)
	if err != nil {
		return nil, fmt.Errorf("PBKDF2: %w", err)
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.EncryptedData) == 0 || len(info.EncryptedData)%bs != 0 {
		return nil, errors.New("malformed ciphertext or IV")
	}
	plain := make([]byte, len(info.EncryptedData))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.EncryptedData)
	// PKCS#7 padding; a wrong password almost always breaks it.
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > bs {
		return nil, errors.New("wrong password (bad padding)")
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errors.New("wrong password (bad padding)")
		}
	}
	plain = plain[:len(plain)-pad]
	var probe struct {
		Version int
		Algo    pkix.AlgorithmIdentifier
		Key     []byte
	}
	if _, err := asn1.Unmarshal(plain, &probe); err != nil {
		return nil, errors.New("wrong password (decrypted data is not a private key)")
	}
	return plain, nil
}

// expiryWarnings says which certificates of the chains are outside their
// validity period at now. Kafka loads such keystores; the peers refuse
// them, so the broker logs a warning rather than failing.
func expiryWarnings(certs []tls.Certificate, now time.Time) []string {
	var w []string
	for _, c := range certs {
		for i, raw := range c.Certificate {
			x, err := x509.ParseCertificate(raw)
			if err != nil {
				continue
			}
			what := "certificate"
			if i > 0 {
				what = "chain certificate"
			}
			switch {
			case now.After(x.NotAfter):
				w = append(w, fmt.Sprintf("%s %s expired at %s", what, DistinguishedName(x), x.NotAfter.UTC().Format(time.RFC3339)))
			case now.Before(x.NotBefore):
				w = append(w, fmt.Sprintf("%s %s is not valid before %s", what, DistinguishedName(x), x.NotBefore.UTC().Format(time.RFC3339)))
			}
		}
	}
	return w
}
