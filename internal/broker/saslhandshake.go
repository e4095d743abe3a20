package broker

// SaslHandshake: v0-1
//
// Picks the SASL mechanism of a connection on a SASL_PLAINTEXT or SASL_SSL
// listener. After v0 the client's tokens follow as bare size-prefixed
// frames (conn.saslRawToken); after v1 they come in SaslAuthenticate
// requests. A mechanism the listener does not enable is answered
// UNSUPPORTED_SASL_MECHANISM with the enabled list, and the connection is
// closed, as Kafka does. On an authenticated connection a v1 handshake
// starts a re-authentication (KIP-368). On a listener without SASL the
// answer is ILLEGAL_SASL_STATE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.SASLHandshake, 0, 1, handleSaslHandshake) }

func handleSaslHandshake(b *Broker, r *request) {
	req := r.kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	c := r.c
	if !c.ls.usesSASL() {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		r.respond(resp)
		return
	}
	resp.SupportedMechanisms = c.ls.names
	m := c.ls.mechs[req.Mechanism]
	if m == nil {
		b.log.Info("SASL handshake with a mechanism that is not enabled", "listener", c.ls.name,
			"mechanism", req.Mechanism, "enabled", c.ls.names, "remote", c.nc.RemoteAddr().String())
		b.countFailedAuthentication()
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		r.respondAndClose(resp)
		return
	}
	if c.authenticated {
		// Re-authentication: v0 cannot re-authenticate, and the mechanism
		// must stay the same.
		if r.hdr.APIVersion == 0 || req.Mechanism != c.saslMech {
			resp.ErrorCode = kerr.IllegalSaslState.Code
			r.respondAndClose(resp)
			return
		}
		c.reauthing = true
	}
	c.saslMech = req.Mechanism
	c.saslSession = m.NewSession()
	c.saslRaw = r.hdr.APIVersion == 0
	r.respond(resp)
}
