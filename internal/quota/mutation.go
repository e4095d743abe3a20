package quota

import "time"

// MutationQuota is Kafka's ControllerMutationQuota for one CreateTopics,
// CreatePartitions or DeleteTopics request: the handler records the
// partitions of each topic as it goes. Strict (the request version is at
// least the one in StrictSince…) refuses a topic with a *ThrottlingError
// once the client's bucket is below zero and refuses every later topic of
// the request (Exceeded); permissive (older versions, whose clients do
// not know THROTTLING_QUOTA_EXCEEDED) accepts everything and only
// throttles. A client without a controller_mutation_rate quota is never
// refused nor throttled. After the request, ThrottleTime is the response's
// throttle time and how long to mute the connection.
//
// Not safe for concurrent use: one per request. The bucket it uses is
// shared with the client's other requests, safely.
type MutationQuota struct {
	m       *Manager
	key     sensorKey
	limit   float64
	bounded bool
	strict  bool

	lastThrottleMs int64
	lastRecordedMs int64
}

// The request versions from which Kafka enforces the controller mutation
// quota strictly (newQuotaFor's strictSinceVersion).
const (
	StrictSinceCreateTopics     = 6
	StrictSinceCreatePartitions = 3
	StrictSinceDeleteTopics     = 5
)

// MutationQuota returns the controller mutation quota of a request from
// (user, clientID), strict or permissive, with the limit that applies now.
func (m *Manager) MutationQuota(user, clientID string, strict bool) *MutationQuota {
	key, limit, ok := m.quotas.Load().resolve(ControllerMutations, user, clientID)
	return &MutationQuota{m: m, key: key, limit: limit, bounded: ok, strict: strict}
}

// Exceeded reports whether a strict quota has refused a mutation of this
// request; the handler refuses the request's remaining topics without
// recording them. Always false for a permissive quota.
func (q *MutationQuota) Exceeded() bool {
	return q.strict && q.lastThrottleMs > 0
}

// Record takes partitions from the client's bucket at now. Strict: if the
// bucket is already below zero nothing is taken and a *ThrottlingError
// (errors.Is ErrThrottlingQuotaExceeded) is returned; otherwise the
// partitions are taken, even if that leaves the bucket below zero.
// Permissive: the partitions are always taken and nil is returned; the
// throttle time is set when the bucket ends up below zero.
func (q *MutationQuota) Record(partitions int, now time.Time) error {
	if !q.bounded {
		return nil
	}
	nowMs := now.UnixMilli()
	q.m.maybeExpire(nowMs)
	w := q.m.ctrlWindow
	s := q.m.lockedSensor(q.key, nowMs)
	defer s.mu.Unlock()
	if q.strict {
		if tokens := s.bucket.measure(w, q.limit, nowMs); tokens < 0 {
			q.lastThrottleMs = bucketThrottleMs(tokens, q.limit)
			q.lastRecordedMs = nowMs
			return &ThrottlingError{ThrottleTime: time.Duration(q.lastThrottleMs) * time.Millisecond}
		}
		s.bucket.record(w, q.limit, float64(partitions), nowMs)
		s.lastRecordMs = nowMs
		return nil
	}
	s.bucket.record(w, q.limit, float64(partitions), nowMs)
	s.lastRecordMs = nowMs
	if tokens := s.bucket.measure(w, q.limit, nowMs); tokens < 0 {
		q.lastThrottleMs = bucketThrottleMs(tokens, q.limit)
		q.lastRecordedMs = nowMs
	}
	return nil
}

// ThrottleTime returns the throttle time for the response sent at now:
// the last throttle time found, less the time elapsed since (a request
// may wait before it is answered), or 0.
func (q *MutationQuota) ThrottleTime(now time.Time) time.Duration {
	ms := q.lastThrottleMs - (now.UnixMilli() - q.lastRecordedMs)
	return time.Duration(max(ms, 0)) * time.Millisecond
}
