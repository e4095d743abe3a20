package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Getter reads one of Kafka's configuration keys, e.g.
// "ssl.keystore.location". For a listener the broker resolves
// listener.name.<name>.ssl.x over ssl.x before answering; for a tool it
// reads the --command-config file. ok is false for a key that is not set;
// an empty value counts as not set, except for
// ssl.endpoint.identification.algorithm, where empty disables hostname
// verification.
type Getter func(key string) (value string, ok bool)

// MapGetter is a Getter over a map of keys to values.
func MapGetter(m map[string]string) Getter {
	return func(key string) (string, bool) {
		v, ok := m[key]
		return v, ok
	}
}

// Client authentication modes of ssl.client.auth.
const (
	ClientAuthNone      = "none"
	ClientAuthRequested = "requested"
	ClientAuthRequired  = "required"
)

// settings is what the ssl.* keys say, parsed once.
type settings struct {
	keystore   keystoreConfig
	truststore truststoreConfig

	minVersion, maxVersion uint16
	protocolCap            uint16   // ssl.protocol's version: clients use nothing above it
	cipherSuites           []uint16 // TLS 1.0-1.2 suites; nil for Go's defaults

	// Server only.
	clientAuth      string
	allowDNChanges  bool
	allowSANChanges bool

	// Client only.
	verifyHostname bool
}

// lookup reads a key, treating an empty value as unset.
func lookup(get Getter, key string) (string, bool) {
	if get == nil {
		return "", false
	}
	v, ok := get(key)
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

func lookupTrimmed(get Getter, key string) string {
	v, _ := lookup(get, key)
	return strings.TrimSpace(v)
}

func lookupSecret(get Getter, key string) secret {
	v, ok := lookup(get, key)
	return secret{value: v, set: ok}
}

// lookupList reads a Kafka LIST value: comma separated, spaces trimmed,
// empty items dropped.
func lookupList(get Getter, key string) []string {
	v, _ := lookup(get, key)
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func lookupBool(get Getter, key string) (bool, error) {
	switch v := strings.ToLower(lookupTrimmed(get, key)); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%s: expected true or false", key, v)
	}
}

func parseSettings(get Getter, server bool) (settings, error) {
	var s settings
	storeType := func(key string) string {
		if t := lookupTrimmed(get, key); t != "" {
			return strings.ToUpper(t)
		}
		return storeJKS // Kafka's default
	}
	s.keystore = keystoreConfig{
		typ:         storeType("ssl.keystore.type"),
		location:    lookupTrimmed(get, "ssl.keystore.location"),
		password:    lookupSecret(get, "ssl.keystore.password"),
		keyPassword: lookupSecret(get, "ssl.key.password"),
	}
	s.keystore.key, _ = lookup(get, "ssl.keystore.key")
	s.keystore.chain, _ = lookup(get, "ssl.keystore.certificate.chain")
	s.truststore = truststoreConfig{
		typ:      storeType("ssl.truststore.type"),
		location: lookupTrimmed(get, "ssl.truststore.location"),
		password: lookupSecret(get, "ssl.truststore.password"),
	}
	s.truststore.certs, _ = lookup(get, "ssl.truststore.certificates")
	if err := s.keystore.validate(); err != nil {
		return s, err
	}
	if err := s.truststore.validate(); err != nil {
		return s, err
	}

	var err error
	if s.minVersion, s.maxVersion, err = parseProtocols(lookupList(get, "ssl.enabled.protocols")); err != nil {
		return s, err
	}
	if s.protocolCap, err = parseProtocol(lookupTrimmed(get, "ssl.protocol")); err != nil {
		return s, err
	}
	if s.cipherSuites, err = parseCipherSuites(lookupList(get, "ssl.cipher.suites"), &s.minVersion, &s.maxVersion); err != nil {
		return s, err
	}

	if server {
		switch v := lookupTrimmed(get, "ssl.client.auth"); v {
		case "":
			s.clientAuth = ClientAuthNone
		case ClientAuthNone, ClientAuthRequested, ClientAuthRequired:
			s.clientAuth = v
		default:
			return s, fmt.Errorf("ssl.client.auth=%s: expected one of none, requested, required", v)
		}
		if s.allowDNChanges, err = lookupBool(get, "ssl.allow.dn.changes"); err != nil {
			return s, err
		}
		if s.allowSANChanges, err = lookupBool(get, "ssl.allow.san.changes"); err != nil {
			return s, err
		}
		return s, nil
	}

	s.verifyHostname = true
	if v, ok := get0(get, "ssl.endpoint.identification.algorithm"); ok {
		switch v = strings.TrimSpace(v); {
		case v == "":
			s.verifyHostname = false
		case strings.EqualFold(v, "https"):
		default:
			return s, fmt.Errorf("ssl.endpoint.identification.algorithm=%s: expected https (verify the server's hostname) or empty (do not)", v)
		}
	}
	if s.protocolCap < s.minVersion {
		return s, fmt.Errorf("ssl.protocol=%s keeps clients below every protocol of ssl.enabled.protocols", versionName(s.protocolCap))
	}
	if s.protocolCap < s.maxVersion {
		s.maxVersion = s.protocolCap
	}
	return s, nil
}

// get0 reads a key as it is, an empty value included.
func get0(get Getter, key string) (string, bool) {
	if get == nil {
		return "", false
	}
	return get(key)
}

var protocolVersions = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

func versionName(v uint16) string {
	for name, ver := range protocolVersions {
		if ver == v {
			return name
		}
	}
	return fmt.Sprintf("0x%04x", v)
}

// parseProtocols reads ssl.enabled.protocols (Kafka's default
// TLSv1.2,TLSv1.3). Go enables a range of versions, so the list must not
// have holes.
func parseProtocols(names []string) (minV, maxV uint16, err error) {
	if len(names) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	var vs []uint16
	for _, n := range names {
		v, ok := protocolVersions[n]
		if !ok {
			return 0, 0, fmt.Errorf("ssl.enabled.protocols: protocol %s is not supported (TLSv1.2, TLSv1.3; TLSv1 and TLSv1.1 are deprecated)", n)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[i-1]+1 {
			return 0, 0, fmt.Errorf("ssl.enabled.protocols=%s: the protocols must be consecutive versions (Go enables a range)", strings.Join(names, ","))
		}
	}
	return vs[0], vs[len(vs)-1], nil
}

// parseProtocol reads ssl.protocol (Kafka's default TLSv1.3), the protocol
// of Java's SSLContext. For a client it is a ceiling: with TLSv1.2 a client
// does not offer TLS 1.3. "TLS" (or "SSL") sets no ceiling.
func parseProtocol(name string) (uint16, error) {
	switch name {
	case "", "TLS", "SSL":
		return tls.VersionTLS13, nil
	}
	v, ok := protocolVersions[name]
	if !ok {
		return 0, fmt.Errorf("ssl.protocol=%s is not supported (TLSv1.3, TLSv1.2 or TLS)", name)
	}
	return v, nil
}

// parseCipherSuites maps ssl.cipher.suites, IANA names as Java spells them
// (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256; the SSL_ prefix of old Java
// names is accepted too), to Go's suites. A name Go does not implement is
// an error naming it.
//
// TLS 1.3 suites (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384,
// TLS_CHACHA20_POLY1305_SHA256) are not configurable in Go's crypto/tls:
// naming some of them enables TLS 1.3 with all three. As in Java, a list
// without TLS 1.3 suites disables TLS 1.3 and a list of only TLS 1.3 suites
// disables TLS 1.2 and below; min and max are narrowed accordingly.
func parseCipherSuites(names []string, minV, maxV *uint16) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := map[string]*tls.CipherSuite{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[cs.Name] = cs
	}
	var ids []uint16
	tls13 := false
	for _, n := range names {
		if n == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
			continue // a signalling value Java lists, not a suite
		}
		cs, ok := known[n]
		if !ok && strings.HasPrefix(n, "SSL_") {
			cs, ok = known["TLS_"+strings.TrimPrefix(n, "SSL_")]
		}
		if !ok {
			return nil, fmt.Errorf("ssl.cipher.suites: cipher suite %s is not supported", n)
		}
		if slices.Contains(cs.SupportedVersions, tls.VersionTLS13) {
			tls13 = true
			continue
		}
		if !slices.Contains(ids, cs.ID) {
			ids = append(ids, cs.ID)
		}
	}
	if len(ids) == 0 {
		if !tls13 {
			return nil, errors.New("ssl.cipher.suites names no cipher suite")
		}
		if *maxV < tls.VersionTLS13 {
			return nil, errors.New("ssl.cipher.suites names only TLS 1.3 suites but ssl.enabled.protocols does not enable TLSv1.3")
		}
		*minV = tls.VersionTLS13
		return nil, nil
	}
	if !tls13 {
		if *minV > tls.VersionTLS12 {
			return nil, errors.New("ssl.cipher.suites names no TLS 1.3 suite but ssl.enabled.protocols enables only TLSv1.3")
		}
		if *maxV > tls.VersionTLS12 {
			*maxV = tls.VersionTLS12
		}
	}
	return ids, nil
}

// ServerTLS is a listener's TLS configuration built from Kafka's ssl.*
// keys. It is safe for concurrent use: handshakes read the current
// certificates while Reload (or the WatchFiles goroutine) replaces them;
// existing connections keep the certificates they were made with.
type ServerTLS struct {
	settings settings
	log      *slog.Logger
	config   *tls.Config // handed to listeners; GetConfigForClient serves cur

	reloadMu sync.Mutex // serialises Reload
	cur      atomic.Pointer[serverState]
}

// serverState is one loaded generation of keystore and truststore. It is
// never modified once published.
type serverState struct {
	config *tls.Config
	leaves []*x509.Certificate
	stamps []fileStamp // of the files read, taken before reading them
}

// fileStamp identifies a version of a file by modification time and size.
type fileStamp struct {
	path    string
	modTime time.Time
	size    int64
	missing bool
}

// ServerOption configures a ServerTLS.
type ServerOption func(*ServerTLS)

// WithLogger sends ServerTLS's warnings (certificates outside their
// validity period, failed reloads) to l instead of slog.Default().
func WithLogger(l *slog.Logger) ServerOption {
	return func(s *ServerTLS) { s.log = l }
}

// NewServerTLS reads a listener's keys and loads its keystore (required)
// and truststore (optional: without one, client certificates are verified
// against the system's roots, as Java uses its default truststore). The
// error names the key, and the file, that is missing or wrong. A
// certificate outside its validity period is only logged as a warning:
// Kafka starts with it too.
//
// Keys read: ssl.keystore.type/location/password, ssl.key.password,
// ssl.keystore.key, ssl.keystore.certificate.chain,
// ssl.truststore.type/location/password, ssl.truststore.certificates,
// ssl.client.auth, ssl.enabled.protocols, ssl.protocol (validated only),
// ssl.cipher.suites, ssl.allow.dn.changes, ssl.allow.san.changes.
func NewServerTLS(get Getter, opts ...ServerOption) (*ServerTLS, error) {
	st, err := parseSettings(get, true)
	if err != nil {
		return nil, err
	}
	if !st.keystore.configured() {
		return nil, errors.New("a TLS listener needs a keystore: set ssl.keystore.location (or ssl.keystore.type=PEM with ssl.keystore.key and ssl.keystore.certificate.chain)")
	}
	s := &ServerTLS{settings: st, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	state, err := s.load()
	if err != nil {
		return nil, err
	}
	s.cur.Store(state)
	s.config = &tls.Config{
		MinVersion:   st.minVersion,
		MaxVersion:   st.maxVersion,
		CipherSuites: st.cipherSuites,
		ClientAuth:   clientAuthType(st.clientAuth),
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.cur.Load().config, nil
		},
	}
	return s, nil
}

func clientAuthType(mode string) tls.ClientAuthType {
	switch mode {
	case ClientAuthRequested:
		return tls.VerifyClientCertIfGiven
	case ClientAuthRequired:
		return tls.RequireAndVerifyClientCert
	}
	return tls.NoClientCert
}

// load reads the keystore and truststore files into a new state.
func (s *ServerTLS) load() (*serverState, error) {
	st := s.settings
	files := append(st.keystore.files(), st.truststore.files()...)
	stamps := make([]fileStamp, len(files))
	for i, f := range files {
		stamps[i] = stamp(f)
	}
	certs, err := st.keystore.load()
	if err != nil {
		return nil, err
	}
	var pool *x509.CertPool
	if st.truststore.configured() {
		trusted, err := st.truststore.load()
		if err != nil {
			return nil, err
		}
		pool = x509.NewCertPool()
		for _, c := range trusted {
			pool.AddCert(c)
		}
	}
	for _, w := range expiryWarnings(certs, time.Now()) {
		s.log.Warn("TLS keystore certificate outside its validity period", "keystore", keystoreName(st.keystore), "certificate", w)
	}
	leaves := make([]*x509.Certificate, len(certs))
	for i, c := range certs {
		leaves[i] = c.Leaf
	}
	return &serverState{
		config: &tls.Config{
			Certificates: certs,
			ClientCAs:    pool,
			ClientAuth:   clientAuthType(st.clientAuth),
			MinVersion:   st.minVersion,
			MaxVersion:   st.maxVersion,
			CipherSuites: st.cipherSuites,
		},
		leaves: leaves,
		stamps: stamps,
	}, nil
}

func keystoreName(c keystoreConfig) string {
	if c.location != "" {
		return c.location
	}
	return "ssl.keystore.key"
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{path: path, missing: true}
	}
	return fileStamp{path: path, modTime: fi.ModTime(), size: fi.Size()}
}

// Config is the configuration to give tls.Server or tls.NewListener. It
// never changes; its GetConfigForClient hands each new handshake the
// certificates and trusted CAs loaded last.
func (s *ServerTLS) Config() *tls.Config { return s.config }

// ClientAuth is the listener's ssl.client.auth: "none", "requested" (a
// client certificate is asked for and verified if given) or "required".
func (s *ServerTLS) ClientAuth() string { return s.settings.clientAuth }

// Reload re-reads the keystore and truststore files named by the keys
// given to NewServerTLS (inline PEM values cannot change). New handshakes
// use the new certificates; on error the old ones stay in use. As in Kafka,
// a new keystore must keep each certificate's subject distinguished name
// (unless ssl.allow.dn.changes=true) and its subject alternative names
// (a superset is fine; unless ssl.allow.san.changes=true). A client
// resuming a TLS session made before the reload is checked against the new
// truststore (crypto/tls re-verifies resumed client certificates). Safe to
// call from any goroutine.
func (s *ServerTLS) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	next, err := s.load()
	if err != nil {
		return fmt.Errorf("reload TLS keystore/truststore: %w", err)
	}
	if err := s.compatible(s.cur.Load().leaves, next.leaves); err != nil {
		return fmt.Errorf("reload TLS keystore: %w", err)
	}
	s.cur.Store(next)
	return nil
}

// compatible applies Kafka's checks on a keystore update.
func (s *ServerTLS) compatible(old, next []*x509.Certificate) error {
	if s.settings.allowDNChanges && s.settings.allowSANChanges {
		return nil
	}
	if len(old) != len(next) {
		return fmt.Errorf("the keystore had %d private key entries and now has %d", len(old), len(next))
	}
	for i := range old {
		if !s.settings.allowDNChanges && !strings.EqualFold(DistinguishedName(old[i]), DistinguishedName(next[i])) {
			return fmt.Errorf("the certificate's distinguished name changed from %s to %s (set ssl.allow.dn.changes=true to allow it)",
				DistinguishedName(old[i]), DistinguishedName(next[i]))
		}
		if !s.settings.allowSANChanges {
			if missing := missingSANs(old[i], next[i]); len(missing) > 0 {
				return fmt.Errorf("the new certificate of %s lacks subject alternative names %s (set ssl.allow.san.changes=true to allow it)",
					DistinguishedName(next[i]), strings.Join(missing, ", "))
			}
		}
	}
	return nil
}

// missingSANs lists the subject alternative names of old that next lacks.
func missingSANs(old, next *x509.Certificate) []string {
	have := map[string]bool{}
	for _, n := range sans(next) {
		have[n] = true
	}
	var missing []string
	for _, n := range sans(old) {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	return missing
}

func sans(c *x509.Certificate) []string {
	var out []string
	for _, n := range c.DNSNames {
		out = append(out, "DNS:"+n)
	}
	for _, ip := range c.IPAddresses {
		out = append(out, "IP:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		out = append(out, "email:"+e)
	}
	for _, u := range c.URIs {
		out = append(out, "URI:"+u.String())
	}
	return out
}

// WatchFiles starts a goroutine that checks the keystore and truststore
// files every interval and reloads when one's modification time or size
// differs from the version last loaded. A failed reload is logged and not
// retried until the files change again. stop ends the goroutine and
// returns once it has exited; calling it again does nothing.
func (s *ServerTLS) WatchFiles(interval time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		var failed []fileStamp
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			cur := s.cur.Load().stamps
			now := make([]fileStamp, len(cur))
			for i, f := range cur {
				now[i] = stamp(f.path)
			}
			if slices.EqualFunc(now, cur, sameStamp) || (failed != nil && slices.EqualFunc(now, failed, sameStamp)) {
				continue
			}
			if err := s.Reload(); err != nil {
				s.log.Warn("TLS files changed but cannot be loaded; keeping the previous certificates", "err", err)
				failed = now
				continue
			}
			failed = nil
			s.log.Info("TLS keystore/truststore reloaded", "keystore", keystoreName(s.settings.keystore))
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}
}

func sameStamp(a, b fileStamp) bool {
	return a.path == b.path && a.missing == b.missing && a.size == b.size && a.modTime.Equal(b.modTime)
}

// NewClientTLS builds the TLS configuration of a Kafka client (a tool's
// --command-config, an inter-broker or controller connection) from the
// ssl.* keys: the truststore verifies the server (without one, the
// system's roots do), the keystore, if any, is the client certificate for
// mTLS. With ssl.endpoint.identification.algorithm=https (the default) the
// server's certificate must match the host dialled; ServerName is left
// empty for the dialer (tls.Dial, kgo) to fill in from the address. With
// the algorithm empty, the chain is still verified but not the hostname.
// The returned Config is the caller's to modify.
func NewClientTLS(get Getter) (*tls.Config, error) {
	st, err := parseSettings(get, false)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion:   st.minVersion,
		MaxVersion:   st.maxVersion,
		CipherSuites: st.cipherSuites,
	}
	if st.keystore.configured() {
		certs, err := st.keystore.load()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = certs
	}
	if st.truststore.configured() {
		trusted, err := st.truststore.load()
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		for _, c := range trusted {
			cfg.RootCAs.AddCert(c)
		}
	}
	if !st.verifyHostname {
		// crypto/tls verifies the chain and the hostname together; skip
		// both and verify the chain alone.
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs.PeerCertificates, roots)
		}
	}
	return cfg, nil
}

// verifyChain verifies a server's chain against roots (nil: the system's)
// for server authentication, without a hostname.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool) error {
	if len(certs) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("tls: verify the server certificate: %w", err)
	}
	return nil
}
