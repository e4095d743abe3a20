package quota

import (
	"math"
	"sync"
)

// window is the sampling configuration of a sensor: Kafka's MetricConfig
// samples and timeWindowMs.
type window struct {
	num int   // samples kept (quota.window.num)
	ms  int64 // span of one sample in milliseconds (quota.window.size.seconds)
}

// sample is one sample of Kafka's SampledStat.
type sample struct {
	value       float64
	eventCount  int64
	startMs     int64
	lastEventMs int64
}

func (s *sample) reset(nowMs int64) {
	*s = sample{startMs: nowMs, lastEventMs: nowMs}
}

// rate is Kafka's Rate over a WindowedSum (per second): a ring of up to
// num+1 samples (one extra for the sample that overlaps the start of the
// monitored window), the sum of the samples divided by the elapsed time,
// counted as at least num-1 whole windows plus the current one's elapsed
// part. Times are in milliseconds, as Kafka counts them, so rates and
// throttle times come out exactly as Kafka's. Not safe for concurrent
// use: the sensor's mutex guards it.
type rate struct {
	samples []sample // grows to num+1, then is reused as a ring
	current int
}

// record adds value to the current sample, starting a new one when the
// current one is complete (as old as one window).
func (r *rate) record(w window, value float64, nowMs int64) {
	s := r.currentSample(nowMs)
	if nowMs-s.startMs >= w.ms {
		r.current = (r.current + 1) % (w.num + 1)
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{startMs: nowMs, lastEventMs: nowMs})
		} else {
			r.samples[r.current].reset(nowMs)
		}
		s = &r.samples[r.current]
	}
	s.value += value
	s.eventCount++
	s.lastEventMs = nowMs
}

func (r *rate) currentSample(nowMs int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startMs: nowMs, lastEventMs: nowMs})
	}
	return &r.samples[r.current]
}

// purge resets the samples that had no event within the monitored window
// (num windows); a sample that overlaps its start is kept.
func (r *rate) purge(w window, nowMs int64) {
	expireAge := int64(w.num) * w.ms
	for i := range r.samples {
		if nowMs-r.samples[i].lastEventMs >= expireAge {
			r.samples[i].reset(nowMs)
		}
	}
}

// measure returns the rate per second at nowMs.
func (r *rate) measure(w window, nowMs int64) float64 {
	r.purge(w, nowMs)
	var total float64
	for i := range r.samples {
		total += r.samples[i].value
	}
	return total / (float64(r.windowSize(w, nowMs)) / 1000)
}

// windowSize returns the time, in milliseconds, the rate divides by: the
// time since the oldest sample started, but at least num-1 whole windows
// plus the elapsed part of the current one, and at least 1 ms.
func (r *rate) windowSize(w window, nowMs int64) int64 {
	r.purge(w, nowMs)
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startMs: nowMs, lastEventMs: nowMs})
	}
	oldest := r.samples[0].startMs
	for _, s := range r.samples[1:] {
		oldest = min(oldest, s.startMs)
	}
	elapsed := nowMs - oldest
	full := elapsed / w.ms
	if minFull := int64(w.num - 1); full < minFull {
		elapsed += (minFull - full) * w.ms
	}
	return max(elapsed, 1)
}

// bucket is Kafka's TokenBucket (KIP-599): it refills at limit tokens per
// second up to a burst of num × window × limit, and a record takes value
// tokens, possibly below zero. A new bucket is full. Not safe for
// concurrent use: the sensor's mutex guards it.
type bucket struct {
	tokens       float64
	lastUpdateMs int64
}

func (b *bucket) refill(w window, limit float64, nowMs int64) {
	burst := float64(w.num) * (float64(w.ms) / 1000) * limit
	b.tokens = min(burst, b.tokens+limit*(float64(nowMs-b.lastUpdateMs)/1000))
	b.lastUpdateMs = nowMs
}

// measure returns the tokens left at nowMs.
func (b *bucket) measure(w window, limit float64, nowMs int64) float64 {
	b.refill(w, limit, nowMs)
	return b.tokens
}

// record takes value tokens at nowMs.
func (b *bucket) record(w window, limit, value float64, nowMs int64) {
	b.refill(w, limit, nowMs)
	burst := float64(w.num) * (float64(w.ms) / 1000) * limit
	b.tokens = min(burst, b.tokens-value)
}

// sensor is the usage of one resolved quota entity for one Kind: Kafka's
// quota sensor. Rate kinds use rate, ControllerMutations uses bucket. The
// limit is not kept here: the caller passes the one it resolved, so a
// quota change applies to the next record. Safe for concurrent use under
// mu.
type sensor struct {
	mu           sync.Mutex
	rate         rate
	bucket       bucket
	lastRecordMs int64 // for expiry after inactivity
	expired      bool  // removed from the Manager; callers look it up again
}

// throttleMs is Kafka's QuotaUtils.throttleTime: the delay X that brings
// the observed rate O back to the limit T over the window W used to
// measure it, O×W/(W+X) = T, so X = (O−T)/T × W, rounded to a
// millisecond.
func throttleMs(observed, limit float64, windowMs int64) int64 {
	return roundMs((observed - limit) / limit * float64(windowMs))
}

// bucketThrottleMs is Kafka's ControllerMutationQuotaManager.throttleTimeMs:
// the time for a bucket at tokens < 0 to refill to zero.
func bucketThrottleMs(tokens, limit float64) int64 {
	return roundMs(-tokens / limit * 1000)
}

// roundMs rounds half up as Java's Math.round and clamps to the int32 a
// response's throttle_time_ms holds.
func roundMs(ms float64) int64 {
	r := math.Floor(ms + 0.5)
	if r >= math.MaxInt32 || math.IsNaN(r) {
		return math.MaxInt32
	}
	return max(int64(r), 0)
}
