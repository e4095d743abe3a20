package sasl

import (
	"bytes"
	"crypto/subtle"
	"time"
	"unicode/utf8"

	"github.com/silkworm/silkworm/internal/security"
)

// PlainAuthenticator checks a PLAIN username and password: the pluggable
// store behind SASL/PLAIN (Kafka's sasl.server.callback.handler.class for
// PLAIN). Authenticate is called from connection goroutines concurrently
// and must be safe for that; user and password are valid UTF-8 and
// non-empty.
type PlainAuthenticator interface {
	Authenticate(user, password string) bool
}

// PlainUsers is the user store of Kafka's default PLAIN callback handler:
// username to password, as the user_<name>="<password>" options of the
// listener's JAAS entry list them (PlainUsersFromJAAS). Passwords are
// compared in constant time. A PlainUsers is safe for concurrent use as
// long as nobody writes to the map.
type PlainUsers map[string]string

// Authenticate reports whether user exists with this password.
func (u PlainUsers) Authenticate(user, password string) bool {
	want, ok := u[user]
	if !ok {
		// Compare anyway so that an unknown user costs what a wrong
		// password costs.
		want = password
	}
	match := subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
	return ok && match
}

// NewPlain returns the PLAIN mechanism (RFC 4616) checking passwords with
// auth. A nil auth accepts nobody.
func NewPlain(auth PlainAuthenticator) Mechanism {
	if auth == nil {
		auth = PlainUsers(nil)
	}
	return plainMechanism{auth: auth}
}

type plainMechanism struct{ auth PlainAuthenticator }

func (plainMechanism) Name() string { return PlainName }

func (m plainMechanism) NewSession() Session { return &plainSession{auth: m.auth} }

// plainSession is one PLAIN exchange: a single client message,
// authzid NUL authcid NUL passwd, answered with an empty token.
type plainSession struct {
	auth      PlainAuthenticator
	state     sessionState
	principal security.Principal
}

// Step checks the client's only message. Every failure text is Kafka's
// PlainSaslServer text, which Kafka sends to the client as it is.
func (s *plainSession) Step(in []byte) ([]byte, bool, error) {
	if s.state != stateFirst {
		return nil, false, illegalState(PlainName, s.state)
	}
	s.state = stateFailed
	if len(in) > MaxPlainMessage {
		return nil, false, tooLarge(PlainName, len(in), MaxPlainMessage)
	}
	// Kafka splits at NUL at most three times: more than two NULs count
	// as four tokens.
	parts := bytes.SplitN(in, []byte{0}, 4)
	if len(parts) != 3 {
		return nil, false, clientErrorf(PlainName, "Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	authzid, user, password := parts[0], parts[1], parts[2]
	if len(user) == 0 {
		return nil, false, clientError(PlainName, "Authentication failed: username not specified")
	}
	if len(password) == 0 {
		return nil, false, clientError(PlainName, "Authentication failed: password not specified")
	}
	// Kafka decodes the message as UTF-8, turning malformed bytes into
	// U+FFFD, so such a name or password never matches a configured one.
	if !utf8.Valid(user) || !utf8.Valid(password) || !s.auth.Authenticate(string(user), string(password)) {
		return nil, false, clientError(PlainName, "Authentication failed: Invalid username or password")
	}
	if len(authzid) > 0 && !bytes.Equal(authzid, user) {
		return nil, false, clientError(PlainName, "Authentication failed: Client requested an authorization id that is different from username")
	}
	s.state = stateComplete
	s.principal = security.User(string(user))
	return []byte{}, true, nil
}

func (s *plainSession) Principal() security.Principal { return s.principal }

func (s *plainSession) Expiry() time.Time { return time.Time{} }
