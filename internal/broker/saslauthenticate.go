package broker

// SaslAuthenticate: v0-2
//
// Carries one SASL token of the exchange a v1 SaslHandshake started. A
// failed authentication answers SASL_AUTHENTICATION_FAILED with the
// mechanism's message and closes the connection once the answer is out.
// On success v1+ returns the session lifetime (KIP-368: the smaller of
// connections.max.reauth.ms and the credential's remaining life, 0 for
// none); the connection is closed when a request other than a
// re-authentication arrives after it.
//
// Deviation: a SaslAuthenticate with no handshake before it closes the
// connection without an answer, as Kafka's authenticator does
// ("unexpected Kafka request during SASL handshake").

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security/sasl"
)

func init() { register(kmsg.SASLAuthenticate, 0, 2, handleSaslAuthenticate) }

func handleSaslAuthenticate(b *Broker, r *request) {
	req := r.kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	c := r.c
	if c.reauthBad != "" {
		msg := "SASL mechanism '" + c.reauthBad + "' requested by client is not supported for re-authentication of mechanism '" + c.saslMech + "'"
		c.reauthBad = ""
		b.countFailedAuthentication()
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
		r.respondAndClose(resp)
		return
	}
	if c.saslSession == nil {
		msg := "SaslAuthenticate request received after successful authentication"
		if !c.ls.usesSASL() {
			msg = "SaslAuthenticate request received on a listener without SASL (" + c.ls.protocol + ")"
		}
		resp.ErrorCode, resp.ErrorMessage = kerr.IllegalSaslState.Code, &msg
		r.respond(resp)
		return
	}
	out, done, err := c.saslSession.Step(req.SASLAuthBytes)
	if err != nil {
		b.log.Info("SASL authentication failed", "listener", c.ls.name, "mechanism", c.saslMech,
			"remote", c.nc.RemoteAddr().String(), "err", err)
		b.countFailedAuthentication()
		msg := err.Error()
		var se *sasl.Error
		if errors.As(err, &se) {
			msg = se.Message(c.sasl == saslReauthenticating)
		}
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
		resp.SASLAuthBytes = out
		r.respondAndClose(resp)
		return
	}
	resp.SASLAuthBytes = out
	if done {
		if err := c.finishSASL(); err != nil {
			b.countFailedAuthentication()
			msg := err.Error()
			resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
			r.respondAndClose(resp)
			return
		}
		if !c.saslExpiry.IsZero() {
			resp.SessionLifetimeMillis = max(time.Until(c.saslExpiry).Milliseconds(), 1)
		}
		b.log.Debug("SASL authenticated", "listener", c.ls.name, "mechanism", c.saslMech, "principal", c.principal.String())
	}
	r.respond(resp)
}
