package broker

// Kafka's RequestMetrics (kafka.network:type=RequestMetrics,request=X):
// requests and errors per API, and the time of each phase of a request
// in Silkworm's pipeline, as histograms in milliseconds:
//
//	received ─ queue ─ dequeued ─ local ─ handler returned ─ remote ─ responded
//	  ─ response queue ─ writeLoop took it ─ send ─ written
//
//   - RequestQueueTimeMs: from the request being decoded (request.received)
//     to an io goroutine taking it from the request queue;
//   - LocalTimeMs: the handler on the io goroutine, until it returned or
//     answered, whichever came first;
//   - RemoteTimeMs: from there to the answer: what a parked request waited
//     for (acks=all followers, a long-poll fetch, a join, a transaction
//     verification); 0 for requests answered inline;
//   - ResponseQueueTimeMs: from the answer to writeLoop taking it (the
//     connection's earlier responses being written);
//   - ResponseSendTimeMs: writing it to the socket;
//   - TotalTimeMs: from request.received to the last byte written.
//
// A request answered with no response (acks=0 produce, a closed
// connection) ends at its answer: response queue and send time are 0.

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/wire"
)

// msBuckets are the histogram buckets of every time in milliseconds.
var msBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000}

// maxAPIKey bounds the API keys with cached metrics; maxErrorCode the
// error codes (higher ones go through the vector each time).
const (
	maxAPIKey    = 128
	maxErrorCode = 160
	maxVersion   = 32
)

// requestMetrics are the vectors and the per-API children resolved once.
type requestMetrics struct {
	requests, errors *prometheus.CounterVec
	totalTime, queueTime, localTime, remoteTime,
	responseQueueTime, responseSendTime *prometheus.HistogramVec

	mu   sync.Mutex // serialises creating apis entries
	apis [maxAPIKey]atomic.Pointer[apiMetrics]
}

// apiMetrics are one API's children, created on its first request.
type apiMetrics struct {
	name                                  string
	versions                              [maxVersion]atomic.Pointer[prometheus.Counter]
	errors                                [maxErrorCode + 1]atomic.Pointer[prometheus.Counter] // by code+1
	total, queue, local, remote, rq, send prometheus.Observer
}

func (rm *requestMetrics) init() {
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kafka_network_requestmetrics_" + name, Help: help, Buckets: msBuckets,
		}, []string{"request"})
	}
	rm.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafka_network_requestmetrics_requests_total",
		Help: "Requests answered, per API and version (RequestsPerSec).",
	}, []string{"request", "version"})
	rm.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafka_network_requestmetrics_errors_total",
		Help: "Error codes in responses, per API and Kafka error name, NONE included (ErrorsPerSec).",
	}, []string{"request", "error"})
	rm.totalTime = hist("totaltimems", "Time from a request decoded to its response written, ms (TotalTimeMs).")
	rm.queueTime = hist("requestqueuetimems", "Time in the request queue before an io thread took it, ms (RequestQueueTimeMs).")
	rm.localTime = hist("localtimems", "Time in the handler on the io thread, ms (LocalTimeMs).")
	rm.remoteTime = hist("remotetimems", "Time parked after the handler, waiting for followers, data or a group, ms (RemoteTimeMs).")
	rm.responseQueueTime = hist("responsequeuetimems", "Time an answer waited behind earlier responses of its connection, ms (ResponseQueueTimeMs).")
	rm.responseSendTime = hist("responsesendtimems", "Time writing the response to the socket, ms (ResponseSendTimeMs).")
}

// api returns the metrics of an API key, creating its children on first
// use (the key has passed the dispatch table, so it is known).
func (rm *requestMetrics) api(key int16) *apiMetrics {
	if key < 0 || int(key) >= maxAPIKey {
		key = maxAPIKey - 1 // never registered; keeps callers simple
	}
	if a := rm.apis[key].Load(); a != nil {
		return a
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if a := rm.apis[key].Load(); a != nil {
		return a
	}
	name := requestName(key)
	a := &apiMetrics{name: name,
		total: rm.totalTime.WithLabelValues(name), queue: rm.queueTime.WithLabelValues(name),
		local: rm.localTime.WithLabelValues(name), remote: rm.remoteTime.WithLabelValues(name),
		rq: rm.responseQueueTime.WithLabelValues(name), send: rm.responseSendTime.WithLabelValues(name)}
	rm.apis[key].Store(a)
	return a
}

// countVersion counts one answered request of version v.
func (a *apiMetrics) countVersion(rm *requestMetrics, v int16) {
	if v < 0 || int(v) >= maxVersion {
		rm.requests.WithLabelValues(a.name, itoa(int(v))).Inc()
		return
	}
	c := a.versions[v].Load()
	if c == nil {
		cc := rm.requests.WithLabelValues(a.name, itoa(int(v)))
		c = &cc
		a.versions[v].Store(c)
	}
	(*c).Inc()
}

// countError adds n to the count of an error code in this API's
// responses.
func (a *apiMetrics) countError(rm *requestMetrics, code int16, n int) {
	i := int(code) + 1
	if i < 0 || i > maxErrorCode {
		rm.errors.WithLabelValues(a.name, errorName(code)).Add(float64(n))
		return
	}
	c := a.errors[i].Load()
	if c == nil {
		cc := rm.errors.WithLabelValues(a.name, errorName(code))
		c = &cc
		a.errors[i].Store(c)
	}
	(*c).Add(float64(n))
}

// requestTimes are one request's phase timestamps, nanoseconds since
// metricsEpoch (0: not reached). They are atomics because a handler that
// parks a request answers it from another goroutine while the io
// goroutine records the handler's return.
type requestTimes struct {
	m                              *brokerMetrics // nil: not measured
	dequeued, localDone, responded atomic.Int64
	errs                           errorCounter // countErrors' scratch
}

// metricsEpoch is the origin of requestTimes (monotonic clock).
var metricsEpoch = time.Now()

func nanotime() int64 { return int64(time.Since(metricsEpoch)) }

// dequeued records that an io goroutine took r from the queue (handle).
func (m *brokerMetrics) dequeued(r *request) {
	if !m.on() {
		return
	}
	r.times.m = m
	r.times.dequeued.Store(nanotime())
}

// handlerReturned records that r's handler returned on the io goroutine
// (handle defers it): the end of its local time, unless it answered
// earlier, and busy time for RequestHandlerAvgIdlePercent.
func (m *brokerMetrics) handlerReturned(r *request) {
	t := &r.times
	if t.m == nil {
		return
	}
	now := nanotime()
	t.localDone.CompareAndSwap(0, now)
	m.handlerBusy.Add(now - t.dequeued.Load())
}

// responded records that r was answered with resp (request.respondRaw,
// before the response is queued), and queues its timing behind the
// connection's earlier answers so writeLoop can finish it. Without a
// writeLoop (a bare conn in benchmarks) the request is finished here.
func (r *request) answered(resp *wire.Response) {
	t := &r.times
	if t.m == nil {
		return
	}
	now := nanotime()
	t.localDone.CompareAndSwap(0, now)
	t.responded.Store(now)
	if r.c == nil || r.c.s == nil || resp == nil {
		t.m.finish(r, now, now)
		return
	}
	r.c.timing.push(resp, r)
}

// answeredNone finishes a request that gets no response (acks=0 produce,
// or its connection closed first).
func (r *request) answeredNone() {
	t := &r.times
	if t.m == nil {
		return
	}
	now := nanotime()
	t.localDone.CompareAndSwap(0, now)
	t.responded.Store(now)
	t.m.finish(r, now, now)
}

// countErrors counts the error codes of a kmsg response (request.respond).
func (r *request) countErrors(resp kmsg.Response) {
	m := r.times.m
	if m == nil {
		return
	}
	// The counter lives in the request, which is on the heap already:
	// handing a local one to the walker would allocate.
	ec := &r.times.errs
	*ec = errorCounter{rm: &m.req, a: m.req.api(r.hdr.APIKey)}
	walkErrorCodes(resp, ec)
	if ec.n == 0 {
		ec.add(0) // no error field: the response is a success
	}
}

// errorCounter counts a response's error codes into its API's counters.
type errorCounter struct {
	rm *requestMetrics
	a  *apiMetrics
	n  int
}

func (ec *errorCounter) add(code int16) {
	ec.a.countError(ec.rm, code, 1)
	ec.n++
}

// codeSink receives error codes from walkErrorCodes.
type codeSink interface{ add(code int16) }

// finish records r's phases once its response was written at written,
// having left the connection's queue at dequeued.
func (m *brokerMetrics) finish(r *request, dequeued, written int64) {
	t := &r.times
	a := m.req.api(r.hdr.APIKey)
	a.countVersion(&m.req, r.hdr.APIVersion)
	received := int64(r.received.Sub(metricsEpoch))
	taken, local, responded := t.dequeued.Load(), t.localDone.Load(), t.responded.Load()
	a.queue.Observe(ms(taken - received))
	a.local.Observe(ms(local - taken))
	a.remote.Observe(ms(responded - local))
	a.rq.Observe(ms(dequeued - responded))
	a.send.Observe(ms(written - dequeued))
	a.total.Observe(ms(written - received))
}

// ms converts nanoseconds to milliseconds, never below 0.
func ms(ns int64) float64 { return float64(max(ns, 0)) / 1e6 }

// timingQueue pairs a connection's queued responses with their requests,
// in the order writeLoop takes them. Responses sent without a request
// (ApiVersions fallback, raw SASL tokens) are simply not found.
type timingQueue struct {
	mu sync.Mutex
	q  []timedResponse
}

type timedResponse struct {
	resp *wire.Response
	r    *request
}

func (tq *timingQueue) push(resp *wire.Response, r *request) {
	tq.mu.Lock()
	tq.q = append(tq.q, timedResponse{resp, r})
	tq.mu.Unlock()
}

// sentResponse is a response writeLoop took, with when.
type sentResponse struct {
	r        *request
	dequeued int64
}

// responseDequeued is called by writeLoop when it takes resp from the
// queue; written (after the write) finishes the request's metrics.
func (c *conn) responseDequeued(resp *wire.Response) sentResponse {
	tq := &c.timing
	tq.mu.Lock()
	var r *request
	if n := len(tq.q); n > 0 && tq.q[0].resp == resp {
		// A handful of entries at most: shift, keeping the backing array.
		r = tq.q[0].r
		copy(tq.q, tq.q[1:])
		tq.q[n-1] = timedResponse{}
		tq.q = tq.q[:n-1]
	}
	tq.mu.Unlock()
	if r == nil {
		return sentResponse{}
	}
	return sentResponse{r: r, dequeued: nanotime()}
}

func (s sentResponse) written() {
	if s.r != nil {
		s.r.times.m.finish(s.r, s.dequeued, nanotime())
	}
}

// networkBusySince adds the time since start (unix ns from nanotime) to
// the decode-slot busy time; conn.decode defers it.
func (m *brokerMetrics) networkBusySince(start int64) {
	if m.on() {
		m.networkBusy.Add(nanotime() - start)
	}
}

// requestName is Kafka's name of an API (ApiKeys' name, as the request
// label of RequestMetrics has it): franz-go's names with Kafka's casing.
func requestName(key int16) string {
	if n, ok := kafkaRequestNames[key]; ok {
		return n
	}
	return kmsg.NameForKey(key)
}

var kafkaRequestNames = map[int16]string{
	4: "LeaderAndIsr", 17: "SaslHandshake", 22: "InitProducerId", 29: "DescribeAcls", 30: "CreateAcls",
	31: "DeleteAcls", 36: "SaslAuthenticate", 45: "AlterPartitionReassignments", 50: "DescribeUserScramCredentials",
	51: "AlterUserScramCredentials", 67: "AllocateProducerIds",
}

// errorName is Kafka's name of an error code (Errors' enum name).
func errorName(code int16) string {
	switch code {
	case 0:
		return "NONE"
	case kerr.NotLeaderForPartition.Code:
		return "NOT_LEADER_OR_FOLLOWER"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return "UNKNOWN_SERVER_ERROR"
}

func itoa(n int) string { return strconv.Itoa(n) }

// walkErrorCodes calls fn with every error code of a response: each int16
// field named ErrorCode, at any depth of its structs and slices, as
// Kafka's AbstractResponse.errorCounts. The hot responses are walked
// directly; others by reflection over a plan cached per type.
func walkErrorCodes(resp kmsg.Response, fn codeSink) {
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				fn.add(r.Topics[i].Partitions[j].ErrorCode)
			}
		}
		return
	case *kmsg.HeartbeatResponse:
		fn.add(r.ErrorCode)
		return
	case *kmsg.MetadataResponse:
		for i := range r.Topics {
			fn.add(r.Topics[i].ErrorCode)
			for j := range r.Topics[i].Partitions {
				fn.add(r.Topics[i].Partitions[j].ErrorCode)
			}
		}
		return
	case *kmsg.OffsetCommitResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				fn.add(r.Topics[i].Partitions[j].ErrorCode)
			}
		}
		return
	case *kmsg.ApiVersionsResponse:
		fn.add(r.ErrorCode)
		return
	}
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	planFor(v.Type()).walk(v, fn)
}

// errPlan is where a struct type keeps error codes: its ErrorCode fields
// and the fields (structs, pointers to structs, slices of structs) that
// hold some.
type errPlan struct {
	codes  []int
	nested []nestedPlan
}

type nestedPlan struct {
	field int
	kind  reflect.Kind // Struct, Pointer or Slice
	plan  *errPlan
}

var errPlans sync.Map // reflect.Type -> *errPlan

func planFor(t reflect.Type) *errPlan {
	if p, ok := errPlans.Load(t); ok {
		return p.(*errPlan)
	}
	p := buildPlan(t, map[reflect.Type]bool{})
	errPlans.Store(t, p)
	return p
}

func buildPlan(t reflect.Type, seen map[reflect.Type]bool) *errPlan {
	p := &errPlan{}
	if seen[t] {
		return p
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		ft := f.Type
		switch {
		case f.Name == "ErrorCode" && ft.Kind() == reflect.Int16:
			p.codes = append(p.codes, i)
		case ft.Kind() == reflect.Struct:
			if sub := buildPlan(ft, seen); !sub.empty() {
				p.nested = append(p.nested, nestedPlan{i, reflect.Struct, sub})
			}
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			if sub := buildPlan(ft.Elem(), seen); !sub.empty() {
				p.nested = append(p.nested, nestedPlan{i, reflect.Pointer, sub})
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			if sub := buildPlan(ft.Elem(), seen); !sub.empty() {
				p.nested = append(p.nested, nestedPlan{i, reflect.Slice, sub})
			}
		}
	}
	delete(seen, t)
	return p
}

func (p *errPlan) empty() bool { return len(p.codes) == 0 && len(p.nested) == 0 }

func (p *errPlan) walk(v reflect.Value, fn codeSink) {
	for _, i := range p.codes {
		fn.add(int16(v.Field(i).Int()))
	}
	for _, n := range p.nested {
		f := v.Field(n.field)
		switch n.kind {
		case reflect.Struct:
			n.plan.walk(f, fn)
		case reflect.Pointer:
			if !f.IsNil() {
				n.plan.walk(f.Elem(), fn)
			}
		case reflect.Slice:
			for j := 0; j < f.Len(); j++ {
				n.plan.walk(f.Index(j), fn)
			}
		}
	}
}
