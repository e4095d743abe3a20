package quota

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// sensorExpirationMs is how long a sensor lives without a record:
	// Kafka's ClientQuotaManager.InactiveSensorExpirationTimeSeconds.
	sensorExpirationMs = int64(time.Hour / time.Millisecond)
	// expiryIntervalMs is how often expired sensors are removed, as
	// Kafka's Metrics.ExpireSensorTask runs.
	expiryIntervalMs = int64(30 * time.Second / time.Millisecond)
	// nanosToPercentSeconds turns request handler nanoseconds into
	// percent-seconds, so their rate per second is a percentage of one
	// thread (Kafka's ClientRequestQuotaManager.NanosToPercentagePerSecond).
	nanosToPercentSeconds = 100.0 / 1e9
)

// Manager is the broker's client quota state: the quotas from the
// metadata image and, per resolved quota entity and Kind, a sensor of the
// client's usage. The broker calls Record on the produce, fetch and
// request paths and mutes the connection for the returned time, and
// SetQuotas when the metadata image changes.
//
// Safe for concurrent use. Record takes no lock and allocates nothing when
// no quota of its Kind is configured; otherwise it resolves the quota
// (a few map lookups), finds the sensor under a read lock and records
// under the sensor's mutex. Sensors are created on a client's first
// record and removed after an hour without one (Kafka's sensor
// expiration), checked at most every 30 s of the clock Record is given.
//
// Lock order: mu → sensor.mu.
type Manager struct {
	cfg        Config
	window     window // produce, fetch and request quotas
	ctrlWindow window // controller mutation quota

	quotas atomic.Pointer[quotaSet]

	nextExpiryMs atomic.Int64

	mu      sync.RWMutex
	sensors map[sensorKey]*sensor
}

// NewManager returns a Manager with no quotas; zero fields of cfg take
// Kafka's defaults.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	m := &Manager{
		cfg:        cfg,
		window:     window{num: cfg.WindowNum, ms: cfg.WindowSize.Milliseconds()},
		ctrlWindow: window{num: cfg.ControllerWindowNum, ms: cfg.ControllerWindowSize.Milliseconds()},
		sensors:    make(map[sensorKey]*sensor),
	}
	m.quotas.Store(&quotaSet{})
	return m
}

// Config returns the configuration in use, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

// The eight places a user/client-id quota can be configured, in Kafka's
// order of precedence (highest first).
const (
	levelUserClient               = iota // /users/<user>/clients/<client-id>
	levelUserDefaultClient               // /users/<user>/clients/<default>
	levelUser                            // /users/<user>
	levelDefaultUserClient               // /users/<default>/clients/<client-id>
	levelDefaultUserDefaultClient        // /users/<default>/clients/<default>
	levelDefaultUser                     // /users/<default>
	levelClient                          // /clients/<client-id>
	levelDefaultClient                   // /clients/<default>
)

// entityKey is a configured user/client-id entity: its level and the
// names the level has (empty for a default or absent part).
type entityKey struct {
	level          uint8
	user, clientID string
}

// kindQuotas is the quotas of one Kind: by entity, with a bit per level
// that has at least one, so a lookup skips empty levels.
type kindQuotas struct {
	levels uint8
	values map[entityKey]float64
}

func (q *kindQuotas) get(level uint8, user, clientID string) (float64, bool) {
	if q.levels&(1<<level) == 0 {
		return 0, false
	}
	v, ok := q.values[entityKey{level, user, clientID}]
	return v, ok
}

func (q *kindQuotas) has(level uint8, user, clientID string) bool {
	_, ok := q.get(level, user, clientID)
	return ok
}

// quotaSet is the configured quotas, built by SetQuotas and never
// modified afterwards.
type quotaSet struct {
	kinds [numKinds]kindQuotas
}

// sensorKey names a sensor: the Kind and Kafka's quota metric tags, the
// user and client-id of the resolved entity ("" where the quota is not
// per user or not per client id).
type sensorKey struct {
	kind           Kind
	user, clientID string
}

// resolve returns the sensor and the limit of (user, clientID) for kind,
// or ok false when no quota applies. It is Kafka's default quota
// callback: first the metric tags (which sensor, so which clients share
// usage), from the most specific level configured, then the limit from
// the levels those tags can match. Tags (user, client-id) look at the
// four user/client levels, (user, "") at /users/<user> and
// /users/<default>, ("", client-id) at /clients/<client-id> and
// /clients/<default>. As in Kafka, an empty client id is therefore never
// limited by a /clients/… or /users/…/clients/… quota.
func (s *quotaSet) resolve(kind Kind, user, clientID string) (key sensorKey, limit float64, ok bool) {
	q := &s.kinds[kind]
	if q.levels == 0 {
		return sensorKey{}, 0, false
	}
	tagUser, tagClient := user, clientID
	switch {
	case q.has(levelUserClient, user, clientID), q.has(levelUserDefaultClient, user, ""):
	case q.has(levelUser, user, ""):
		tagClient = ""
	case q.has(levelDefaultUserClient, "", clientID), q.has(levelDefaultUserDefaultClient, "", ""):
	case q.has(levelDefaultUser, "", ""):
		tagClient = ""
	default:
		tagUser = ""
	}
	switch {
	case tagUser != "" && tagClient != "":
		if limit, ok = q.get(levelUserClient, tagUser, tagClient); !ok {
			if limit, ok = q.get(levelUserDefaultClient, tagUser, ""); !ok {
				if limit, ok = q.get(levelDefaultUserClient, "", tagClient); !ok {
					limit, ok = q.get(levelDefaultUserDefaultClient, "", "")
				}
			}
		}
	case tagUser != "":
		if limit, ok = q.get(levelUser, tagUser, ""); !ok {
			limit, ok = q.get(levelDefaultUser, "", "")
		}
	case tagClient != "":
		if limit, ok = q.get(levelClient, "", tagClient); !ok {
			limit, ok = q.get(levelDefaultClient, "", "")
		}
	}
	return sensorKey{kind, tagUser, tagClient}, limit, ok
}

// levelOf returns where a canonical user/client-id entity sits.
func levelOf(e Entity) (k entityKey, ok bool) {
	u, hasUser := e.lookup(EntityUser)
	c, hasClient := e.lookup(EntityClientID)
	name := func(c Component) string {
		if c.Name == nil {
			return ""
		}
		return *c.Name
	}
	switch {
	case hasUser && hasClient:
		switch {
		case u.Name != nil && c.Name != nil:
			k.level = levelUserClient
		case u.Name != nil:
			k.level = levelUserDefaultClient
		case c.Name != nil:
			k.level = levelDefaultUserClient
		default:
			k.level = levelDefaultUserDefaultClient
		}
	case hasUser:
		k.level = levelUser
		if u.Name == nil {
			k.level = levelDefaultUser
		}
	case hasClient:
		k.level = levelClient
		if c.Name == nil {
			k.level = levelDefaultClient
		}
	default:
		return entityKey{}, false
	}
	k.user, k.clientID = name(u), name(c)
	return k, true
}

// SetQuotas replaces the configured quotas with entries, the client
// quotas of the metadata image. Entries for ip entities, keys other than
// the four user/client-id keys and invalid entities are ignored (the
// controller validated what it stored). Safe to call at any time, from
// the metadata apply goroutine; Record resolves every call against the
// quotas of the moment, so a client moves to its new quota (and, if its
// resolved entity changed, to that entity's sensor) on its next record.
// Sensors of a Kind that no longer has any quota are dropped.
func (m *Manager) SetQuotas(entries []Entry) {
	set := &quotaSet{}
	for _, e := range entries {
		ent, err := e.Entity.Canonical()
		if err != nil {
			continue
		}
		k, ok := levelOf(ent)
		if !ok {
			continue
		}
		k.user, k.clientID = strings.Clone(k.user), strings.Clone(k.clientID)
		for key, v := range e.Values {
			kind, ok := KindOf(key)
			if !ok {
				continue
			}
			q := &set.kinds[kind]
			if q.values == nil {
				q.values = make(map[entityKey]float64)
			}
			q.values[k] = v
			q.levels |= 1 << k.level
		}
	}
	m.quotas.Store(set)

	m.mu.Lock()
	defer m.mu.Unlock()
	for key, s := range m.sensors {
		if set.kinds[key.kind].levels == 0 {
			s.mu.Lock()
			s.expired = true
			s.mu.Unlock()
			delete(m.sensors, key)
		}
	}
}

// Enabled reports whether any quota of kind is configured; when not,
// Record returns 0 at once and the broker may skip measuring the usage.
func (m *Manager) Enabled(kind Kind) bool {
	return kind >= 0 && kind < numKinds && m.quotas.Load().kinds[kind].levels != 0
}

// Quota returns the limit that applies to (user, clientID) for kind:
// bytes per second, percent of one thread, or partition mutations per
// second; ok is false when the client has no quota of that kind. user is
// the principal's name (ANONYMOUS on PLAINTEXT).
func (m *Manager) Quota(kind Kind, user, clientID string) (limit float64, ok bool) {
	if kind < 0 || kind >= numKinds {
		return 0, false
	}
	_, limit, ok = m.quotas.Load().resolve(kind, user, clientID)
	return limit, ok
}

// MaxValueInQuotaWindow returns the most that can be recorded for
// (user, clientID) without a certain throttle, limit × (WindowNum−1) ×
// WindowSize, or math.MaxFloat64 without a quota (Kafka's
// getMaxValueInQuotaWindow). The fetch handler caps a consumer's fetch
// max bytes with it for FetchBytes.
func (m *Manager) MaxValueInQuotaWindow(kind Kind, user, clientID string) float64 {
	limit, ok := m.Quota(kind, user, clientID)
	if !ok {
		return math.MaxFloat64
	}
	w := m.windowOf(kind)
	return limit * float64(w.num-1) * (float64(w.ms) / 1000)
}

// Record adds value to the usage of (user, clientID) for kind at now and
// returns how long Kafka would throttle the client: 0 within quota. value
// is bytes for ProduceBytes (the request size) and FetchBytes (the
// response size), request handler nanoseconds for RequestTime, and
// partitions created or deleted for ControllerMutations.
//
// For the rate kinds the value is always recorded and the throttle time
// is Kafka's (observed − limit) / limit × window; RequestTime's is capped
// at WindowSize as Kafka caps it. ControllerMutations is strict, as
// Kafka's ControllerMutationQuotaManager: when the client's token bucket
// is already below zero nothing is recorded and the time until it refills
// to zero is returned (the caller refuses the mutation with
// THROTTLING_QUOTA_EXCEEDED); otherwise the value is recorded, even if it
// takes the bucket below zero, and 0 is returned. MutationQuota gives a
// handler Kafka's per-request view of the same bucket.
//
// Nothing is recorded for a client without a quota of kind (Kafka records
// it whenever the kind has any quota): if it later gets one, it starts
// with no usage. A throttle time never exceeds the int32 milliseconds of
// a response. Safe for concurrent use.
func (m *Manager) Record(kind Kind, user, clientID string, value float64, now time.Time) time.Duration {
	if kind < 0 || kind >= numKinds {
		return 0
	}
	set := m.quotas.Load()
	if set.kinds[kind].levels == 0 {
		return 0
	}
	key, limit, ok := set.resolve(kind, user, clientID)
	if !ok {
		return 0
	}
	nowMs := now.UnixMilli()
	m.maybeExpire(nowMs)
	w := m.windowOf(kind)
	s := m.lockedSensor(key, nowMs)
	defer s.mu.Unlock()
	if kind == ControllerMutations {
		if tokens := s.bucket.measure(w, limit, nowMs); tokens < 0 {
			return time.Duration(bucketThrottleMs(tokens, limit)) * time.Millisecond
		}
		s.bucket.record(w, limit, value, nowMs)
		s.lastRecordMs = nowMs
		return 0
	}
	if kind == RequestTime {
		value *= nanosToPercentSeconds
	}
	s.rate.record(w, value, nowMs)
	s.lastRecordMs = nowMs
	observed := s.rate.measure(w, nowMs)
	if observed <= limit {
		return 0
	}
	ms := throttleMs(observed, limit, s.rate.windowSize(w, nowMs))
	if kind == RequestTime {
		ms = min(ms, w.ms)
	}
	return time.Duration(ms) * time.Millisecond
}

// RecordNoThrottle adds value to the usage of (user, clientID) for kind
// without checking the quota; the next Record sees it. value is in
// Record's units (a negative one takes usage back). No-op when the client
// has no quota of kind.
func (m *Manager) RecordNoThrottle(kind Kind, user, clientID string, value float64, now time.Time) {
	if kind < 0 || kind >= numKinds {
		return
	}
	set := m.quotas.Load()
	if set.kinds[kind].levels == 0 {
		return
	}
	key, limit, ok := set.resolve(kind, user, clientID)
	if !ok {
		return
	}
	nowMs := now.UnixMilli()
	m.maybeExpire(nowMs)
	s := m.lockedSensor(key, nowMs)
	defer s.mu.Unlock()
	w := m.windowOf(kind)
	switch kind {
	case ControllerMutations:
		s.bucket.record(w, limit, value, nowMs)
	case RequestTime:
		s.rate.record(w, value*nanosToPercentSeconds, nowMs)
	default:
		s.rate.record(w, value, nowMs)
	}
	s.lastRecordMs = nowMs
}

// Unrecord takes back value recorded by Record: the fetch handler calls
// it for FetchBytes when it throttles a fetch and answers it empty, as
// Kafka does (unrecordQuotaSensor).
func (m *Manager) Unrecord(kind Kind, user, clientID string, value float64, now time.Time) {
	m.RecordNoThrottle(kind, user, clientID, -value, now)
}

func (m *Manager) windowOf(kind Kind) window {
	if kind == ControllerMutations {
		return m.ctrlWindow
	}
	return m.window
}

// lockedSensor returns the sensor of key, created if needed, with its
// mutex held.
func (m *Manager) lockedSensor(key sensorKey, nowMs int64) *sensor {
	for {
		m.mu.RLock()
		s := m.sensors[key]
		m.mu.RUnlock()
		if s == nil {
			s = m.createSensor(key, nowMs)
		}
		s.mu.Lock()
		if !s.expired {
			return s
		}
		s.mu.Unlock()
	}
}

func (m *Manager) createSensor(key sensorKey, nowMs int64) *sensor {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sensors[key]; s != nil {
		return s
	}
	s := &sensor{lastRecordMs: nowMs}
	if key.kind != ControllerMutations {
		s.rate.samples = make([]sample, 0, m.window.num+1)
	}
	key.user, key.clientID = strings.Clone(key.user), strings.Clone(key.clientID)
	m.sensors[key] = s
	return s
}

// maybeExpire removes the sensors without a record for an hour, at most
// once every 30 s of the callers' clock; one caller does the sweep.
func (m *Manager) maybeExpire(nowMs int64) {
	next := m.nextExpiryMs.Load()
	if nowMs < next || !m.nextExpiryMs.CompareAndSwap(next, nowMs+expiryIntervalMs) {
		return
	}
	m.expire(nowMs)
}

func (m *Manager) expire(nowMs int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, s := range m.sensors {
		s.mu.Lock()
		if nowMs-s.lastRecordMs > sensorExpirationMs {
			s.expired = true
			delete(m.sensors, key)
		}
		s.mu.Unlock()
	}
}
