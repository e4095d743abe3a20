// Package sasl is the server side of Kafka's SASL mechanisms other than
// GSSAPI: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, as state
// machines over byte tokens. It knows nothing of sockets or requests.
//
// The broker builds one Mechanism per enabled mechanism of a listener
// (NewPlain, NewScram, NewOAuthBearer) at start. When SaslHandshake selects
// a mechanism it calls NewSession, then feeds each SaslAuthenticate
// auth_bytes (or each raw token after a v0 handshake) to Session.Step and
// answers with the token Step returns:
//
//	out, done, err := session.Step(authBytes)
//	switch {
//	case err != nil: // SASL_AUTHENTICATION_FAILED, error_message err.Error()
//	case done:       // authenticated as session.Principal(), until session.Expiry()
//	default:         // send out, wait for the next token
//	}
//
// Errors are *Error: Error() is the error_message Kafka would send (Kafka's
// texts: a mechanism-specific one where Kafka sends one, else Kafka's
// generic "Authentication failed during authentication due to invalid
// credentials with SASL mechanism X"), Message(true) words it for a
// re-authentication, Reason holds the detail for the broker's log and must
// not reach the client. A Step after the exchange ended matches
// ErrIllegalState.
//
// Behaviour follows Apache Kafka's SaslServer implementations:
//
//   - PLAIN (RFC 4616, PlainSaslServer): one message, authzid NUL authcid
//     NUL passwd; passwords are checked by a PlainAuthenticator, by default
//     the user_<name> options of the JAAS entry (PlainUsersFromJAAS,
//     ParseJAAS).
//   - SCRAM (RFC 5802, RFC 7677, ScramSaslServer): Kafka's message grammar
//     (ASCII only, "n" GS2 header, extensions of which tokenauth selects a
//     delegation token), credentials from a lookup function, stored keys
//     derived as Kafka derives them (ScramCredentialFromSalted). The proof
//     check and server signature are xdg-go/scram's server conversation.
//     One deliberate difference: Kafka refuses an unknown user at the
//     client-first message; here the exchange continues with a made-up salt
//     and fails after the proof, with the same text as a wrong password, so
//     that clients cannot probe which users exist.
//   - OAUTHBEARER (RFC 7628, OAuthBearerSaslServer): the client initial
//     response carries auth=Bearer <JWT>. With OAuthConfig.Unsecured the
//     token is checked as Kafka's default unsecured validator does (alg
//     "none"); otherwise its signature is verified with go-jose against a
//     JWKS from a file or an http(s) endpoint that a goroutine refreshes
//     (OAuthBearer.Close stops it). A refused token is answered with
//     Kafka's JSON error token; the client's 0x01 then ends the exchange
//     with that JSON as the error message. The session also offers
//     Extensions() map[string]string (the client's SASL extensions).
//
// Each client token is bounded (MaxPlainMessage, MaxScramMessage,
// MaxOAuthBearerMessage) before it is parsed.
//
// Mechanisms are safe for concurrent use; a Session belongs to one
// connection's goroutine and is not.
package sasl
