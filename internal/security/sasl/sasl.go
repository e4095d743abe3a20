package sasl

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/silkworm/silkworm/internal/security"
)

// Session is one authentication exchange on one connection: the broker
// creates it when SaslHandshake selects a mechanism and feeds it the
// auth_bytes of each SaslAuthenticate request, in order. A Session is not
// safe for concurrent use; the connection's goroutine owns it.
type Session interface {
	// Step consumes the client's next token and returns the server's next
	// token. done reports successful completion; the broker then sends out
	// (possibly empty) and the connection is authenticated as Principal.
	//
	// On failure err != nil and is an *Error: err.Error() is the message
	// the broker puts in SaslAuthenticate's error_message (Kafka's text),
	// and out may still hold a final server token where the mechanism
	// sends one. A failed or completed Session refuses every further Step
	// with an error matching ErrIllegalState.
	//
	// With done false and err nil the exchange continues: the broker
	// answers with out and waits for the client's next token.
	Step(in []byte) (out []byte, done bool, err error)

	// Principal is the authenticated principal, valid once Step reported
	// done (the zero Principal before).
	Principal() security.Principal

	// Expiry is when the credential expires (the OAUTHBEARER token's exp,
	// a delegation token's expiry), zero if it does not. The broker bounds
	// the session lifetime by it (connections.max.reauth.ms).
	Expiry() time.Time
}

// Mechanism is one SASL mechanism a listener offers. NewSession is called
// once per connection, from the connection's goroutine; a Mechanism is safe
// for concurrent use.
type Mechanism interface {
	// Name is the mechanism name as SaslHandshake carries it: "PLAIN",
	// "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER".
	Name() string
	NewSession() Session
}

// Mechanism names, as Kafka spells them. The SCRAM names are
// security.ScramSHA256 and security.ScramSHA512.
const (
	PlainName       = "PLAIN"
	OAuthBearerName = "OAUTHBEARER"
)

// ErrIllegalState is matched (errors.Is) by the error of a Step on a
// Session that already completed or failed: Kafka's IllegalSaslStateException,
// which the broker answers with ILLEGAL_SASL_STATE.
var ErrIllegalState = errors.New("unexpected SASL token")

// Error is why an authentication failed. Its Error() text is what Kafka
// sends to the client in SaslAuthenticate's error_message; Reason is the
// server-side detail, for the broker's log only (it may name users or
// token contents and must not reach the client).
//
// Kafka has two kinds of failure: one whose text is meant for the client
// (SaslAuthenticationException, e.g. PLAIN's "Authentication failed: Invalid
// username or password") and one that is replaced by a generic text so that
// nothing leaks ("Authentication failed during authentication due to invalid
// credentials with SASL mechanism SCRAM-SHA-256"). Error keeps that
// distinction so the broker can word the generic text for a
// re-authentication (Message(true)). An Error is not modified after it is
// returned.
type Error struct {
	Mechanism string
	// Reason is the cause, for the log. Unwrap returns it.
	Reason error
	// custom is the client-facing text; empty means Kafka's generic text.
	custom string
}

// Error returns the error_message for a first authentication.
func (e *Error) Error() string { return e.Message(false) }

// Unwrap returns the Reason, so errors.Is(err, ErrIllegalState) works.
func (e *Error) Unwrap() error { return e.Reason }

// Message returns the error_message Kafka sends, worded for a
// re-authentication (KIP-368) when reauthenticating is true.
func (e *Error) Message(reauthenticating bool) string {
	if e.custom != "" {
		return e.custom
	}
	during := "authentication"
	if reauthenticating {
		during = "re-authentication"
	}
	return "Authentication failed during " + during +
		" due to invalid credentials with SASL mechanism " + e.Mechanism
}

// LogValue logs the client-facing message and the reason, so that a
// broker logging the error with slog records the detail.
func (e *Error) LogValue() slog.Value {
	reason := ""
	if e.Reason != nil {
		reason = e.Reason.Error()
	}
	return slog.GroupValue(slog.String("message", e.Error()), slog.String("reason", reason))
}

// Generic reports whether the client sees Kafka's generic text rather than
// a mechanism-specific one.
func (e *Error) Generic() bool { return e.custom == "" }

// genericError is a failure the client sees only as Kafka's generic text
// (Kafka's SaslException).
func genericError(mechanism string, format string, args ...any) *Error {
	return &Error{Mechanism: mechanism, Reason: fmt.Errorf(format, args...)}
}

// clientError is a failure whose text goes to the client as it is (Kafka's
// SaslAuthenticationException).
func clientError(mechanism, message string) *Error {
	return &Error{Mechanism: mechanism, Reason: errors.New(message), custom: message}
}

func clientErrorf(mechanism, format string, args ...any) *Error {
	return clientError(mechanism, fmt.Sprintf(format, args...))
}

// sessionState is where a Session is in its exchange; every mechanism
// moves from its first state to stateComplete or stateFailed, never back.
type sessionState int

const (
	stateFirst sessionState = iota // waiting for the client's first message
	stateFinal                     // waiting for the client's second message
	stateComplete
	stateFailed
)

func (s sessionState) String() string {
	switch s {
	case stateFirst:
		return "RECEIVE_CLIENT_FIRST_MESSAGE"
	case stateFinal:
		return "RECEIVE_CLIENT_FINAL_MESSAGE"
	case stateComplete:
		return "COMPLETE"
	default:
		return "FAILED"
	}
}

// illegalState is the error of a Step after the exchange ended, worded as
// Kafka's IllegalSaslStateException.
func illegalState(mechanism string, s sessionState) *Error {
	msg := "Unexpected challenge in Sasl server state " + s.String()
	return &Error{Mechanism: mechanism, Reason: fmt.Errorf("%w: %s", ErrIllegalState, msg), custom: msg}
}

// tooLarge is the error for a client token over a mechanism's bound; the
// token is refused before any parsing allocates in proportion to it.
func tooLarge(mechanism string, n, limit int) *Error {
	return genericError(mechanism, "client token of %d bytes exceeds the %s limit of %d bytes", n, mechanism, limit)
}

// Bounds on one client token, per mechanism. The broker's frame limit
// (sasl.server.max.receive.size, 524288 by default) applies first; these
// keep what a single message may make a mechanism parse and allocate well
// below it for mechanisms whose messages are small.
const (
	// MaxPlainMessage bounds a PLAIN message (authzid, username and
	// password). RFC 4616 asks for 255 octets each at least; passwords
	// that are API keys or tokens are longer.
	MaxPlainMessage = 64 << 10
	// MaxScramMessage bounds each SCRAM client message; usernames, nonces
	// and extensions are short ASCII strings.
	MaxScramMessage = 8 << 10
	// MaxOAuthBearerMessage bounds the OAUTHBEARER client initial
	// response; JWTs carrying group claims can be tens of kilobytes.
	MaxOAuthBearerMessage = 512 << 10
)
