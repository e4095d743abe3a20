package broker

// PushTelemetry: v0
//
// Accepts a client's metrics as Kafka 4's ClientMetricsManager does with no
// receiver plugin: validated, then dropped. In Kafka's order: a reserved
// ClientInstanceID (zero) gets INVALID_REQUEST; a push after the instance's
// terminating push INVALID_REQUEST; a SubscriptionID that is not the
// instance's current one UNKNOWN_SUBSCRIPTION_ID; a push within the push
// interval of the previous one (other than the first after a
// GetTelemetrySubscriptions, or a terminating one) THROTTLING_QUOTA_EXCEEDED;
// metrics above 1 MiB TELEMETRY_TOO_LARGE; a codec outside the accepted ones
// (uncompressed is always accepted) UNSUPPORTED_COMPRESSION_TYPE. See
// gettelemetrysubscriptions.go for the client instance cache.

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.PushTelemetry, 0, 0, handlePushTelemetry) }

func handlePushTelemetry(b *Broker, r *request) {
	req := r.kreq.(*kmsg.PushTelemetryRequest)
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	if reservedInstanceID(req.ClientInstanceID) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		r.respond(resp)
		return
	}
	now := time.Now()
	cm := b.clientMetrics()
	cm.mu.Lock()
	ci := cm.instanceLocked(req.ClientInstanceID, now)
	var code int16
	switch {
	case ci.terminating:
		code = kerr.InvalidRequest.Code
	case req.SubscriptionID != ci.subscriptionID:
		code = kerr.UnknownSubscriptionID.Code
	case !ci.canPush(now) && !req.Terminating:
		code = kerr.ThrottlingQuotaExceeded.Code
	case len(req.Metrics) > telemetryMaxBytes:
		code = kerr.TelemetryTooLarge.Code
	case req.CompressionType != 0 && !slices.Contains(telemetryCompressionTypes, req.CompressionType):
		code = kerr.UnsupportedCompressionType.Code
	}
	ci.lastError = code
	ci.terminating = ci.terminating || req.Terminating
	cm.mu.Unlock()
	resp.ErrorCode = code
	r.respond(resp)
}
