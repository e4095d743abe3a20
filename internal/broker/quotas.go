package broker

// Client quota enforcement (KIP-13, KIP-124, KIP-219): produce bytes,
// fetch bytes and request-handler time are recorded per (user, client id)
// against the quotas of the metadata image; a client over its quota gets
// the throttle time in its response and its connection is muted (no
// request is read from it) for that long.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/quota"
)

// throttle records value against the request's quota of kind and, when
// the client is over it, mutes the connection for the throttle time. It
// returns the throttle time in milliseconds for the response.
func (b *Broker) throttle(r *request, kind quota.Kind, value float64) int32 {
	if !b.authz.quotas.Enabled(kind) {
		return 0
	}
	now := time.Now()
	d := b.authz.quotas.Record(kind, r.principal.Name, r.hdr.ClientID, value, now)
	if d <= 0 {
		return 0
	}
	r.c.mute(now.Add(d))
	return int32(d / time.Millisecond)
}

// recordRequestTime records the handler time of a request against
// request_percentage. The response is already on its way, so an excess
// only mutes the connection (Kafka also reports it in throttle_time_ms).
//
// Exempt as in Kafka: requests before authentication, follower fetches and
// WriteTxnMarkers (brokers' own traffic).
func (b *Broker) recordRequestTime(r *request, d time.Duration) {
	switch key := kmsg.Key(r.hdr.APIKey); {
	case key == kmsg.ApiVersions || key == kmsg.SASLHandshake || key == kmsg.SASLAuthenticate,
		key == kmsg.WriteTxnMarkers,
		key == kmsg.Fetch && fetchReplicaID(r) >= 0:
		return
	}
	b.throttle(r, quota.RequestTime, float64(d.Nanoseconds()))
}

// mute stops reading requests from the connection until t.
func (c *conn) mute(t time.Time) {
	n := t.UnixNano()
	for {
		cur := c.mutedUntil.Load()
		if cur >= n || c.mutedUntil.CompareAndSwap(cur, n) {
			return
		}
	}
}

// mutationQuota is the controller_mutation_rate quota of the request's
// client (KIP-599), nil when no such quota is configured. From the
// version strictSince on, a request over the quota is refused
// (THROTTLING_QUOTA_EXCEEDED); older versions are only throttled.
func (b *Broker) mutationQuota(r *request, strictSince int16) *quota.MutationQuota {
	if !b.authz.quotas.Enabled(quota.ControllerMutations) {
		return nil
	}
	return b.authz.quotas.MutationQuota(r.principal.Name, r.hdr.ClientID, r.hdr.APIVersion >= strictSince)
}

// recordMutations charges partitions against mq; a non-nil error is the
// refusal to answer for the topic (THROTTLING_QUOTA_EXCEEDED).
func recordMutations(mq *quota.MutationQuota, partitions int) *apiError {
	if mq == nil || partitions <= 0 {
		return nil
	}
	if err := mq.Record(partitions, time.Now()); err != nil {
		return newAPIError(kerr.ThrottlingQuotaExceeded, "%s", err.Error())
	}
	return nil
}

// mutationThrottle is the throttle time in ms a mutation request reports,
// muting the connection for it.
func (r *request) mutationThrottle(mq *quota.MutationQuota) int32 {
	if mq == nil {
		return 0
	}
	now := time.Now()
	d := mq.ThrottleTime(now)
	if d <= 0 {
		return 0
	}
	r.c.mute(now.Add(d))
	return int32(d / time.Millisecond)
}
