package broker

// Replication throttles (Kafka's ReplicationQuotaManager, KIP-73), as
// kafka-reassign-partitions.sh --throttle sets them:
//
//   - leader.replication.throttled.rate (broker config) bounds the bytes
//     per second this broker, as a leader, serves to followers for the
//     replicas listed in the topic config leader.replication.throttled.replicas
//     ("partition:broker" pairs naming the leader's replica, or "*");
//   - follower.replication.throttled.rate bounds the bytes per second this
//     broker's replica fetchers pull for the replicas listed in
//     follower.replication.throttled.replicas (pairs naming this broker).
//
// The leader answers a follower that is not in the ISR with no data for a
// throttled partition while the leader quota is exceeded; the follower
// leaves its throttled partitions out of its fetches while its quota is
// exceeded. Replicas that are not listed are never held back, and
// consumer fetches are never counted or throttled here.
//
// Deviation: the rate is a token bucket (one second of burst) rather than
// Kafka's sampled windows; the long-run rate is the same.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
)

const (
	leaderThrottledRateKey       = "leader.replication.throttled.rate"
	followerThrottledRateKey     = "follower.replication.throttled.rate"
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

// rateLimiter is a byte-rate token bucket. Safe for concurrent use.
type rateLimiter struct {
	now func() time.Time

	mu     sync.Mutex // guards the fields below
	rate   int64      // bytes per second; math.MaxInt64 or <= 0: unlimited
	tokens float64    // bytes that may still be sent; negative: over quota
	last   time.Time  // when tokens was last refilled
}

func newRateLimiter(now func() time.Time) *rateLimiter {
	return &rateLimiter{now: now, rate: math.MaxInt64}
}

// unlimitedLocked reports whether no rate is set.
func (l *rateLimiter) unlimitedLocked() bool { return l.rate <= 0 || l.rate == math.MaxInt64 }

// setRate changes the rate; a new rate starts with a full bucket of one
// second's worth.
func (l *rateLimiter) setRate(rate int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rate == l.rate {
		return
	}
	l.rate = rate
	l.tokens = float64(rate)
	l.last = l.now()
}

// refillLocked adds the tokens earned since last, up to one second's worth.
func (l *rateLimiter) refillLocked() {
	now := l.now()
	if dt := now.Sub(l.last).Seconds(); dt > 0 {
		l.tokens = min(l.tokens+dt*float64(l.rate), float64(l.rate))
	}
	l.last = now
}

// exceeded reports whether more bytes were recorded than the rate allows.
func (l *rateLimiter) exceeded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlimitedLocked() {
		return false
	}
	l.refillLocked()
	return l.tokens < 0
}

// record counts n bytes sent.
func (l *rateLimiter) record(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlimitedLocked() || n <= 0 {
		return
	}
	l.refillLocked()
	l.tokens -= float64(n)
}

// replicationThrottle is one side (leader or follower) of a broker's
// replication throttle. Safe for concurrent use.
type replicationThrottle struct {
	meta        metadata.Store
	cfg         *config.Broker
	nodeID      int32
	rateKey     string
	replicasKey string
	limiter     *rateLimiter

	mu    sync.Mutex // guards epoch
	epoch int64      // the image epoch the rate was last read from; -1 none
}

// refresh reads the rate from im when im is newer than the last one read.
func (t *replicationThrottle) refresh(im *metadata.Image) {
	t.mu.Lock()
	if t.epoch == im.Epoch {
		t.mu.Unlock()
		return
	}
	t.epoch = im.Epoch
	t.mu.Unlock()
	t.limiter.setRate(throttleRate(t.cfg, im, t.rateKey))
}

// throttled reports whether replica broker of topic-partition is listed
// in the topic's throttled-replicas config.
func (t *replicationThrottle) throttled(im *metadata.Image, topic string, partition, broker int32) bool {
	tp := im.Topics[topic]
	if tp == nil {
		return false
	}
	return listsReplica(tp.Configs[t.replicasKey], partition, broker)
}

// Throttled, Exceeded and Record make the follower side a
// replication.Quota for this broker's replica fetchers.
func (t *replicationThrottle) Throttled(topic string, partition int32) bool {
	im := t.meta.Image()
	t.refresh(im)
	return t.throttled(im, topic, partition, t.nodeID)
}

func (t *replicationThrottle) Exceeded() bool {
	t.refresh(t.meta.Image())
	return t.limiter.exceeded()
}

func (t *replicationThrottle) Record(n int64) { t.limiter.record(n) }

// throttleRate is the broker's value of key: its own dynamic config, else
// the cluster-wide dynamic default, else the static one, else unlimited.
func throttleRate(cfg *config.Broker, im *metadata.Image, key string) int64 {
	for _, dyn := range []map[string]string{im.NodeConfigsOf(cfg.NodeID), im.BrokerConfigs} {
		if v, ok := dyn[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return intConfig(cfg, key, math.MaxInt64)
}

// listsReplica reports whether a throttled-replicas value ("*" or
// "partition:broker,...") names the replica.
func listsReplica(value string, partition, broker int32) bool {
	value = strings.TrimSpace(value)
	if value == "" {
		return false
	}
	if value == "*" {
		return true
	}
	for pair := range strings.SplitSeq(value, ",") {
		ps, bs, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			continue
		}
		p, err1 := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		br, err2 := strconv.ParseInt(strings.TrimSpace(bs), 10, 32)
		if err1 == nil && err2 == nil && int32(p) == partition && int32(br) == broker {
			return true
		}
	}
	return false
}

// replicationThrottles are a broker's two sides.
type replicationThrottles struct {
	leader, follower *replicationThrottle
}

// newReplicationThrottles creates b's throttles (New calls it once the
// metadata store and the replica fetchers exist) and installs the follower
// side in b's replica fetchers.
func (b *Broker) newReplicationThrottles() *replicationThrottles {
	side := func(rateKey, replicasKey string) *replicationThrottle {
		return &replicationThrottle{meta: b.meta, cfg: b.cfg, nodeID: b.nodeID, rateKey: rateKey, replicasKey: replicasKey, limiter: newRateLimiter(time.Now), epoch: -1}
	}
	t := &replicationThrottles{
		leader:   side(leaderThrottledRateKey, leaderThrottledReplicasKey),
		follower: side(followerThrottledRateKey, followerThrottledReplicasKey),
	}
	if b.repl != nil {
		b.repl.SetQuota(t.follower)
	}
	return t
}

// replicationThrottles returns b's throttles.
func (b *Broker) replicationThrottles() *replicationThrottles { return b.throttles }

// leaderThrottleRead is the leader side's check before follower's read of
// local partition p: throttled reports whether p's leader replica is
// listed (the bytes read are then recorded with leaderThrottleRecord),
// hold whether the read must return no data now (Kafka's
// shouldLeaderThrottle: a follower out of the ISR while the quota is
// exceeded).
func (b *Broker) leaderThrottleRead(p *partition.Partition, follower int32) (throttled, hold bool) {
	t := b.replicationThrottles().leader
	im := b.meta.Image()
	t.refresh(im)
	if !t.throttled(im, p.Topic, p.Index, b.nodeID) {
		return false, false
	}
	return true, !slices.Contains(p.ISR(), follower) && t.limiter.exceeded()
}

// leaderThrottleRecord counts n bytes served to a follower for a
// throttled replica.
func (b *Broker) leaderThrottleRecord(n int64) { b.replicationThrottles().leader.limiter.record(n) }
