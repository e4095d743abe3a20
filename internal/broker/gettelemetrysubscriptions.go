package broker

// GetTelemetrySubscriptions: v0
//
// Client metrics (KIP-714) as a Kafka 4 broker without a metrics receiver
// plugin (and so without subscriptions) answers them: ApiVersions does not
// advertise GetTelemetrySubscriptions or PushTelemetry (Kafka leaves them
// out when no ClientTelemetryReceiver is configured, so clients do not
// call them), but a client that sends them anyway is served by Kafka's
// ClientMetricsManager: a zero ClientInstanceID gets a new one; the
// subscription requests no metrics, pushes every 5 minutes at most 1 MiB
// compressed with zstd, lz4, gzip or snappy, as deltas. A second request
// within the push interval of the client instance's last request gets
// THROTTLING_QUOTA_EXCEEDED (unless its last error was
// UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE). Client
// instances are kept in memory, per broker, for at least 15 minutes after
// their last request (three push intervals).

import (
	"crypto/rand"
	"encoding/binary"
	"hash/crc32"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(kmsg.GetTelemetrySubscriptions, 0, 0, handleGetTelemetrySubscriptions)
}

// Kafka's client metrics defaults without subscriptions.
const (
	telemetryPushInterval = 5 * time.Minute
	telemetryMaxBytes     = 1 << 20
	// telemetryMaxInstances bounds the client instance cache (Kafka's
	// client.metrics cache of 16384 entries).
	telemetryMaxInstances = 16384
)

// telemetryCompressionTypes are the codecs a client may compress pushed
// metrics with, in Kafka's order of preference: zstd, lz4, gzip, snappy.
var telemetryCompressionTypes = []int8{4, 3, 1, 2}

// clientInstance is Kafka's ClientMetricsInstance without subscriptions.
type clientInstance struct {
	subscriptionID int32
	lastGet        time.Time
	lastPush       time.Time
	lastError      int16
	terminating    bool
}

// canGet is Kafka's maybeUpdateGetRequestTimestamp.
func (ci *clientInstance) canGet(now time.Time) bool {
	last := ci.lastGet
	if ci.lastPush.After(last) {
		last = ci.lastPush
	}
	if last.IsZero() || now.Sub(last) >= telemetryPushInterval {
		ci.lastGet = now
		return true
	}
	return false
}

// canPush is Kafka's maybeUpdatePushRequestTimestamp: a push right after
// a GetTelemetrySubscriptions is accepted, else one per push interval.
func (ci *clientInstance) canPush(now time.Time) bool {
	ok := ci.lastGet.After(ci.lastPush)
	if !ok {
		last := ci.lastGet
		if ci.lastPush.After(last) {
			last = ci.lastPush
		}
		ok = now.Sub(last) >= telemetryPushInterval
	}
	if ok {
		ci.lastPush = now
	}
	return ok
}

// clientMetrics is one broker's client instance cache. Safe for
// concurrent use.
type clientMetrics struct {
	mu        sync.Mutex
	instances map[[16]byte]*clientInstance
}

func newClientMetrics() *clientMetrics {
	return &clientMetrics{instances: map[[16]byte]*clientInstance{}}
}

func (b *Broker) clientMetrics() *clientMetrics { return b.telemetry }

// instanceLocked returns the client instance of id, creating it (and
// making room for it) if needed.
func (cm *clientMetrics) instanceLocked(id [16]byte, now time.Time) *clientInstance {
	if ci := cm.instances[id]; ci != nil {
		return ci
	}
	if len(cm.instances) >= telemetryMaxInstances {
		for k, ci := range cm.instances {
			last := ci.lastGet
			if ci.lastPush.After(last) {
				last = ci.lastPush
			}
			if now.Sub(last) > 3*telemetryPushInterval {
				delete(cm.instances, k)
			}
		}
		for k := range cm.instances {
			if len(cm.instances) < telemetryMaxInstances {
				break
			}
			delete(cm.instances, k)
		}
	}
	ci := &clientInstance{subscriptionID: telemetrySubscriptionID(id)}
	cm.instances[id] = ci
	return ci
}

// telemetrySubscriptionID derives the subscription id of a client
// instance from what its (empty) subscription is, as Kafka hashes the
// metrics, push interval and instance id.
func telemetrySubscriptionID(id [16]byte) int32 {
	var b [20]byte
	copy(b[:], id[:])
	binary.BigEndian.PutUint32(b[16:], uint32(telemetryPushInterval/time.Millisecond))
	return int32(crc32.Checksum(b[:], crc32.MakeTable(crc32.Castagnoli)))
}

// reservedInstanceID reports Kafka's reserved Uuids (zero and the
// metadata topic id, 1), which no client instance may have.
func reservedInstanceID(id [16]byte) bool {
	var one [16]byte
	one[15] = 1
	return id == [16]byte{} || id == one
}

func newInstanceID() [16]byte {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:])
		if !reservedInstanceID(id) {
			return id
		}
	}
}

func handleGetTelemetrySubscriptions(b *Broker, r *request) {
	req := r.kreq.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	id := req.ClientInstanceID
	if id == [16]byte{} {
		id = newInstanceID()
	}
	now := time.Now()
	cm := b.clientMetrics()
	cm.mu.Lock()
	ci := cm.instanceLocked(id, now)
	if !ci.canGet(now) && ci.lastError != kerr.UnknownSubscriptionID.Code && ci.lastError != kerr.UnsupportedCompressionType.Code {
		cm.mu.Unlock()
		resp.ErrorCode = kerr.ThrottlingQuotaExceeded.Code
		r.respond(resp)
		return
	}
	ci.lastError = 0
	resp.SubscriptionID = ci.subscriptionID
	cm.mu.Unlock()
	resp.ClientInstanceID = id
	resp.AcceptedCompressionTypes = telemetryCompressionTypes
	resp.PushIntervalMillis = int32(telemetryPushInterval / time.Millisecond)
	resp.TelemetryMaxBytes = telemetryMaxBytes
	resp.DeltaTemporality = true
	resp.RequestedMetrics = []string{}
	r.respond(resp)
}
