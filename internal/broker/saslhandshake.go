package broker

// SaslHandshake: v0-1
//
// Picks the SASL mechanism of a connection on a SASL_PLAINTEXT or SASL_SSL
// listener, as Kafka's SaslServerAuthenticator: after v0 the client's
// tokens follow as bare size-prefixed frames (conn.saslRawToken); after v1
// they come in SaslAuthenticate requests, and nothing else is admitted
// until the exchange ends (conn.admit). A mechanism the listener does not
// enable is answered UNSUPPORTED_SASL_MECHANISM with the enabled list, and
// the connection is closed.
//
// On an authenticated connection a v1 handshake starts a re-authentication
// (KIP-368) when the session has a lifetime (connections.max.reauth.ms or
// an expiring token); otherwise, and on a listener without SASL, the answer
// is ILLEGAL_SASL_STATE and the connection stays open (Kafka's KafkaApis
// answer). A re-authentication that names another mechanism is answered
// NONE and fails at its first token, as Kafka does.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.SASLHandshake, 0, 1, handleSaslHandshake) }

func handleSaslHandshake(b *Broker, r *request) {
	req := r.kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	c := r.c
	reauth := c.sasl == saslDone && c.ls.usesSASL()
	if !c.ls.usesSASL() || (reauth && (r.hdr.APIVersion == 0 || c.saslExpiry.IsZero())) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		r.respond(resp)
		return
	}
	resp.SupportedMechanisms = c.ls.names
	m := c.ls.mechs[req.Mechanism]
	switch {
	case reauth && req.Mechanism != c.saslMech:
		c.reauthBad = req.Mechanism
		c.sasl = saslReauthenticating
		r.respond(resp)
		return
	case m == nil:
		b.log.Info("SASL handshake with a mechanism that is not enabled", "listener", c.ls.name,
			"mechanism", req.Mechanism, "enabled", c.ls.names, "remote", c.nc.RemoteAddr().String())
		b.countFailedAuthentication()
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		r.respondAndClose(resp)
		return
	}
	if reauth {
		c.sasl = saslReauthenticating
	} else {
		c.sasl = saslAuthenticating
	}
	c.saslMech = req.Mechanism
	c.saslSession = m.NewSession()
	c.saslRaw = r.hdr.APIVersion == 0
	r.respond(resp)
}
