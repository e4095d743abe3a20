package sasl

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/xdg-go/scram"

	"github.com/silkworm/silkworm/internal/security"
)

// DelegationToken is what SCRAM needs of a Kafka delegation token (KIP-48):
// a client authenticates with the token id as username, the token's HMAC
// as password and the extension tokenauth=true, and becomes the token's
// owner. Credential.Mechanism is the mechanism in use, or empty.
type DelegationToken struct {
	Owner      security.Principal
	Credential security.ScramCredential
	Expiry     time.Time
}

// ScramOption configures NewScram.
type ScramOption func(*scramMechanism)

// WithDelegationTokens lets clients authenticate with delegation tokens.
// lookup is called from connection goroutines concurrently. Without this
// option a tokenauth=true exchange fails, as in a Kafka without tokens.
func WithDelegationTokens(lookup func(tokenID string) (DelegationToken, bool)) ScramOption {
	return func(m *scramMechanism) { m.tokens = lookup }
}

// withServerNonce replaces the server nonce generator; tests use it to
// replay RFC 7677's exchange.
func withServerNonce(f func() string) ScramOption {
	return func(m *scramMechanism) { m.nonce = f }
}

// NewScram returns SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802, RFC 7677)
// with Kafka's behaviour: only the "n" GS2 header (no channel binding),
// usernames and extensions in ASCII, the tokenauth extension for delegation
// tokens and every other extension ignored, stored credentials below 4096
// iterations refused.
//
// lookup returns a user's credential for this mechanism (one whose
// Mechanism names another counts as none); it is called from connection
// goroutines concurrently. A user lookup does not find is not
// refused at once (Kafka does that, which tells a client which users
// exist): the exchange goes on with a made-up salt, stable for the name,
// and fails after the client's proof exactly as a wrong password does.
func NewScram(mechanism string, lookup func(user string) (security.ScramCredential, bool), opts ...ScramOption) (Mechanism, error) {
	m := &scramMechanism{name: mechanism, lookup: lookup, nonce: rand.Text}
	switch mechanism {
	case security.ScramSHA256:
		m.hash = scram.SHA256
	case security.ScramSHA512:
		m.hash = scram.SHA512
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownScramMechanism, mechanism)
	}
	if lookup == nil {
		return nil, fmt.Errorf("%s: no credential lookup", mechanism)
	}
	rand.Read(m.secret[:])
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// scramMechanism is safe for concurrent use: every field is set by
// NewScram and only read afterwards.
type scramMechanism struct {
	name   string
	hash   scram.HashGeneratorFcn
	lookup func(string) (security.ScramCredential, bool)
	tokens func(string) (DelegationToken, bool)
	nonce  func() string
	// secret keys the made-up salts of unknown users, so that the same
	// name gets the same salt for the life of the broker.
	secret [32]byte
}

func (m *scramMechanism) Name() string { return m.name }

func (m *scramMechanism) NewSession() Session { return &scramSession{m: m} }

// scramSession is one SCRAM exchange: client-first, server-first,
// client-final, server-final. The proof check and the server signature
// are xdg-go/scram's server conversation; this type parses the messages
// with Kafka's grammar first and decides which credential the
// conversation uses.
type scramSession struct {
	m     *scramMechanism
	state sessionState
	conv  *scram.ServerConversation
	// unknown is set when the user (or token) was not found: the exchange
	// runs on a made-up credential and must fail.
	unknown   string
	principal security.Principal
	expiry    time.Time
	token     bool

	// What the exchange needs when the client-final nonce is not the
	// server's but ends with it (lenientFinal).
	cred            security.ScramCredential
	gs2Header       string // "n,," or "n,a=...,"
	clientFirstBare string
	serverFirst     string
}

// Step runs the exchange. Every failure but one is reported with Kafka's
// generic text, so a client cannot tell a wrong password from an unknown
// user; the exception is an authorization id different from the username,
// which Kafka reports as such.
func (s *scramSession) Step(in []byte) ([]byte, bool, error) {
	switch s.state {
	case stateFirst:
		out, err := s.first(in)
		if err != nil {
			s.fail()
			return nil, false, err
		}
		s.state = stateFinal
		return out, false, nil
	case stateFinal:
		out, err := s.final(in)
		if err != nil {
			s.fail()
			return nil, false, err
		}
		s.state = stateComplete
		s.conv = nil
		return out, true, nil
	default:
		return nil, false, illegalState(s.m.name, s.state)
	}
}

func (s *scramSession) fail() {
	s.state = stateFailed
	s.conv = nil
	s.principal = security.Principal{}
	s.expiry = time.Time{}
}

func (s *scramSession) first(in []byte) ([]byte, error) {
	name := s.m.name
	if len(in) > MaxScramMessage {
		return nil, tooLarge(name, len(in), MaxScramMessage)
	}
	msg, err := parseScramClientFirst(in)
	if err != nil {
		return nil, genericError(name, "invalid SCRAM client first message: %w", err)
	}
	// Checked before the lookup so that the answer does not depend on
	// whether the user exists.
	if msg.authzid != "" && msg.authzid != msg.username {
		return nil, clientError(name, "Authentication failed: Client requested an authorization id that is different from username")
	}
	var cred security.ScramCredential
	if msg.tokenAuth {
		var tok DelegationToken
		ok := false
		if s.m.tokens != nil {
			tok, ok = s.m.tokens(msg.username)
		}
		if !ok || (tok.Credential.Mechanism != "" && tok.Credential.Mechanism != name) {
			return nil, genericError(name, "Token Authentication failed: Invalid tokenId : %s", msg.username)
		}
		cred, s.principal, s.expiry, s.token = tok.Credential, tok.Owner, tok.Expiry, true
	} else {
		c, ok := s.m.lookup(msg.username)
		if ok && (c.Mechanism == "" || c.Mechanism == name) {
			cred, s.principal = c, security.User(msg.username)
		} else {
			cred = s.m.unknownCredential(msg.username)
			s.unknown = msg.username
		}
	}
	if cred.Iterations < MinScramIterations {
		return nil, genericError(name, "Iterations %d is less than the minimum %d for %s", cred.Iterations, MinScramIterations, name)
	}
	if size := s.m.hash().Size(); len(cred.StoredKey) != size || len(cred.ServerKey) != size {
		return nil, genericError(name, "stored %s credential of %q is malformed", name, msg.username)
	}
	stored := scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(cred.Salt), Iters: int(cred.Iterations)},
		StoredKey:  cred.StoredKey,
		ServerKey:  cred.ServerKey,
	}
	srv, err := s.m.hash.NewServer(func(string) (scram.StoredCredentials, error) { return stored, nil })
	if err != nil {
		return nil, genericError(name, "%w", err)
	}
	s.conv = srv.WithNonceGenerator(s.m.nonce).NewConversation()
	out, err := s.conv.Step(string(in))
	if err != nil {
		return nil, genericError(name, "invalid SCRAM client first message: %w", err)
	}
	// The GS2 header is the first two fields ("n," and the optional
	// authorization id); client-first-bare is the rest.
	i := strings.IndexByte(string(in), ',')
	j := i + 1 + strings.IndexByte(string(in[i+1:]), ',')
	s.cred, s.gs2Header, s.clientFirstBare, s.serverFirst = cred, string(in[:j+1]), string(in[j+1:]), out
	return []byte(out), nil
}

func (s *scramSession) final(in []byte) ([]byte, error) {
	name := s.m.name
	if len(in) > MaxScramMessage {
		return nil, tooLarge(name, len(in), MaxScramMessage)
	}
	if err := parseScramClientFinal(in); err != nil {
		return nil, genericError(name, "invalid SCRAM client final message: %w", err)
	}
	// The conversation checks the channel binding (the GS2 header again),
	// that the nonce is the one sent in server-first, and the proof.
	out, err := s.conv.Step(string(in))
	if err != nil && s.unknown == "" {
		if v, ok := s.lenientFinal(in); ok {
			return v, nil
		}
	}
	switch {
	case err != nil && s.unknown != "":
		return nil, genericError(name, "Authentication failed: Invalid user credentials: no %s credential for %q (%v)", name, s.unknown, err)
	case err != nil:
		return nil, genericError(name, "Authentication failed: %w", err)
	case !s.conv.Valid() || s.unknown != "":
		return nil, genericError(name, "Authentication failed: Invalid user credentials")
	}
	return []byte(out), nil
}

func (s *scramSession) Principal() security.Principal { return s.principal }

func (s *scramSession) Expiry() time.Time { return s.expiry }

// TokenAuthenticated reports whether the client authenticated with a
// delegation token (Kafka marks such principals: they may not create or
// renew tokens).
func (s *scramSession) TokenAuthenticated() bool { return s.state == stateComplete && s.token }

// unknownCredential is the made-up credential of a user that does not
// exist. Its salt is stable for the name and looks like the salts Kafka's
// tools create (130 random bits in base 36); its keys match no password.
func (m *scramMechanism) unknownCredential(user string) security.ScramCredential {
	mac := hmac.New(sha256.New, m.secret[:])
	mac.Write([]byte(m.name + "\x00" + user))
	sum := mac.Sum(nil)
	salt := new(big.Int).SetBytes(sum[:17])
	salt.Rsh(salt, 6) // 136 bits down to 130
	size := m.hash().Size()
	keys := make([]byte, 2*size)
	rand.Read(keys)
	return security.ScramCredential{
		Mechanism:  m.name,
		Salt:       []byte(salt.Text(36)),
		StoredKey:  keys[:size],
		ServerKey:  keys[size:],
		Iterations: MinScramIterations,
	}
}

// scramClientFirst is what Kafka reads of client-first-message:
//
//	"n," ["a=" saslname] "," "n=" saslname ",r=" nonce *("," alpha "=" value)
type scramClientFirst struct {
	authzid   string // decoded
	username  string // decoded
	tokenAuth bool
}

// parseScramClientFirst checks a client-first-message against Kafka's
// grammar (ScramMessages.ClientFirstMessage): every byte is ASCII without
// NUL; only the "n" GS2 flag; names are saslname (=2C and =3D the only
// escapes); the nonce is printable ASCII without ','; extensions are
// alpha=value pairs, of which only tokenauth means anything. Unlike Kafka,
// the reserved m= attribute is refused, as RFC 5802 requires.
func parseScramClientFirst(in []byte) (scramClientFirst, error) {
	var msg scramClientFirst
	if err := scramASCII(in); err != nil {
		return msg, err
	}
	fields := strings.Split(string(in), ",")
	if len(fields) < 4 {
		return msg, fmt.Errorf("%d fields, want at least 4", len(fields))
	}
	if fields[0] != "n" {
		return msg, fmt.Errorf("unsupported GS2 channel binding flag %q", fields[0])
	}
	if a := fields[1]; a != "" {
		v, ok := strings.CutPrefix(a, "a=")
		if !ok || !isSaslName(v) {
			return msg, fmt.Errorf("invalid authorization id %q", a)
		}
		msg.authzid = decodeSaslName(v)
	}
	if strings.HasPrefix(fields[2], "m=") {
		return msg, fmt.Errorf("SCRAM message extensions (m=) are not supported")
	}
	user, ok := strings.CutPrefix(fields[2], "n=")
	if !ok || !isSaslName(user) {
		return msg, fmt.Errorf("invalid username attribute %q", fields[2])
	}
	msg.username = decodeSaslName(user)
	if nonce, ok := strings.CutPrefix(fields[3], "r="); !ok || !isPrintable(nonce) {
		return msg, fmt.Errorf("invalid nonce attribute %q", fields[3])
	}
	for _, f := range fields[4:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !isAlpha(k) || !isValue(v) {
			return msg, fmt.Errorf("invalid extension %q", f)
		}
		if k == "tokenauth" {
			msg.tokenAuth = strings.EqualFold(v, "true") // Java's Boolean.parseBoolean
		}
	}
	return msg, nil
}

// parseScramClientFinal checks a client-final-message against Kafka's
// grammar (ScramMessages.ClientFinalMessage):
//
//	"c=" base64 ",r=" nonce *("," alpha "=" value) ",p=" base64
func parseScramClientFinal(in []byte) error {
	if err := scramASCII(in); err != nil {
		return err
	}
	fields := strings.Split(string(in), ",")
	if len(fields) < 3 {
		return fmt.Errorf("%d fields, want at least 3", len(fields))
	}
	if c, ok := strings.CutPrefix(fields[0], "c="); !ok || !isBase64(c) {
		return fmt.Errorf("invalid channel binding attribute %q", fields[0])
	}
	if r, ok := strings.CutPrefix(fields[1], "r="); !ok || !isPrintable(r) {
		return fmt.Errorf("invalid nonce attribute %q", fields[1])
	}
	last := len(fields) - 1
	for _, f := range fields[2:last] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !isAlpha(k) || !isValue(v) {
			return fmt.Errorf("invalid extension %q", f)
		}
	}
	if p, ok := strings.CutPrefix(fields[last], "p="); !ok || p == "" || !isBase64(p) {
		return fmt.Errorf("invalid proof attribute %q", fields[last])
	}
	return nil
}

// scramASCII refuses what Kafka's patterns cannot match: NUL and anything
// beyond ASCII (so also invalid UTF-8).
func scramASCII(in []byte) error {
	for i, c := range in {
		if c == 0 || c > 0x7F {
			return fmt.Errorf("byte 0x%02x at offset %d is not allowed", c, i)
		}
	}
	return nil
}

// isSaslName: one or more ASCII characters other than NUL, ',' and '=',
// or the escapes =2C and =3D.
func isSaslName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ',' || c == 0 || c > 0x7F:
			return false
		case c == '=':
			if !strings.HasPrefix(s[i:], "=2C") && !strings.HasPrefix(s[i:], "=3D") {
				return false
			}
			i += 2
		}
	}
	return true
}

var saslNameDecoder = strings.NewReplacer("=2C", ",", "=3D", "=")

func decodeSaslName(s string) string { return saslNameDecoder.Replace(s) }

// isPrintable: one or more of 0x21-0x7E except ','.
func isPrintable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7E || c == ',' {
			return false
		}
	}
	return true
}

// isValue: one or more of 0x01-0x7F except ','.
func isValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c > 0x7F || c == ',' {
			return false
		}
	}
	return true
}

// isAlpha: one or more ASCII letters.
func isAlpha(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// isBase64: standard base64 with padding (possibly empty), as Kafka's
// pattern accepts it. The decoder alone would also skip CR and LF.
func isBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	body := strings.TrimSuffix(strings.TrimSuffix(s, "="), "=")
	for i := 0; i < len(body); i++ {
		c := body[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '+' && c != '/' {
			return false
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// lenientFinal verifies a client-final-message whose nonce is not the
// server-first nonce but ends with it. Kafka up to 3.9 accepted that
// (ScramSaslServer checked endsWith), and librdkafka before 2.6.1 sends it
// (it repeats the client nonce in front), so Debian's kcat authenticates
// against Kafka 3.x: so it does here. Everything else is checked as usual:
// the channel binding, and the proof over the messages as the client sent
// them. It reports false when the message does not verify.
func (s *scramSession) lenientFinal(in []byte) ([]byte, bool) {
	msg := string(in)
	fields := strings.Split(msg, ",")
	serverNonce := ""
	for _, f := range strings.Split(s.serverFirst, ",") {
		if v, ok := strings.CutPrefix(f, "r="); ok {
			serverNonce = v
		}
	}
	nonce, _ := strings.CutPrefix(fields[1], "r=")
	if serverNonce == "" || nonce == serverNonce || !strings.HasSuffix(nonce, serverNonce) {
		return nil, false
	}
	binding, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(fields[0], "c="))
	if err != nil || string(binding) != s.gs2Header {
		return nil, false
	}
	proofAt := strings.LastIndex(msg, ",p=")
	proof, err := base64.StdEncoding.DecodeString(msg[proofAt+3:])
	if err != nil {
		return nil, false
	}
	authMessage := []byte(s.clientFirstBare + "," + s.serverFirst + "," + msg[:proofAt])
	mac := func(key []byte) []byte {
		h := hmac.New(s.m.hash, key)
		h.Write(authMessage)
		return h.Sum(nil)
	}
	clientSignature := mac(s.cred.StoredKey)
	if len(proof) != len(clientSignature) {
		return nil, false
	}
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ clientSignature[i]
	}
	h := s.m.hash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), s.cred.StoredKey) {
		return nil, false
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(mac(s.cred.ServerKey))), true
}
