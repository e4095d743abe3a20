package broker

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/wire"
)

// request is one decoded request on its way through the handlers.
type request struct {
	c         *conn
	hdr       wire.RequestHeader
	kreq      kmsg.Request
	size      int                // frame bytes, for quotas
	principal security.Principal // who sent it (the connection's, when it was read)
	received  time.Time
	times     requestTimes  // phases for the request metrics (metrics_request.go)
	handled   chan struct{} // when not nil, closed once answered (or known to need no answer)
	once      sync.Once

	// The connection's response sequencer (conn.deliver): a request
	// read by readLoop is ordered behind the connection's earlier
	// requests, and its answer waits there until they are answered.
	ordered  bool           // registered in its connection's sequencer
	ready    bool           // answered (guarded by the sequencer's lock)
	resp     *wire.Response // the answer; nil: none (guarded likewise)
	last     bool           // the connection closes after resp (guarded likewise)
	released atomic.Bool    // readLoop was let go to read the next request
	// writeInline: deliver may write the answer to the socket itself
	// rather than hand it to writeLoop (a produce or fetch handled on its
	// reader).
	// Set before the request is handled, never changed.
	writeInline bool
}

// respond encodes resp for this request and queues it on the connection.
// It must be called exactly once per request (or respondNone).
func (r *request) respond(resp kmsg.Response) {
	resp.SetVersion(r.hdr.APIVersion)
	flexible := resp.IsFlexible() && r.hdr.APIKey != kmsg.ApiVersions.Int16()
	r.countErrors(resp)
	r.respondRaw(wire.EncodeResponse(r.hdr.CorrelationID, flexible, resp))
}

// respondRaw queues an already encoded response.
func (r *request) respondRaw(resp *wire.Response) {
	r.once.Do(func() {
		r.c.deliver(r, resp, false)
		r.finished()
	})
}

// respondAndClose queues resp as the connection's last response: the
// connection closes once it is written (a failed authentication, as Kafka
// closes after telling the client why).
func (r *request) respondAndClose(resp kmsg.Response) {
	resp.SetVersion(r.hdr.APIVersion)
	flexible := resp.IsFlexible() && r.hdr.APIKey != kmsg.ApiVersions.Int16()
	enc := wire.EncodeResponse(r.hdr.CorrelationID, flexible, resp)
	r.countErrors(resp)
	r.once.Do(func() {
		r.c.closeAfter = true
		r.c.deliver(r, enc, true)
		r.finished()
	})
}

// respondNone finishes a request that gets no response (acks=0 produce).
func (r *request) respondNone() {
	r.once.Do(func() {
		r.answeredNone()
		r.c.deliver(r, nil, false)
		r.finished()
	})
}

// closeConn finishes a request by closing its connection, as Kafka does
// for an acks=0 produce that failed.
func (r *request) closeConn() {
	r.once.Do(func() {
		r.answeredNone()
		r.c.shutdown() // before readLoop may read another frame
		r.c.deliver(r, nil, false)
		r.finished()
	})
}

// finished marks r answered for whoever waits on it: handled is closed
// and readLoop, unless released earlier, may read the next request.
func (r *request) finished() {
	if r.handled != nil {
		close(r.handled)
	}
	r.release()
}

// release lets the connection's readLoop read the next request while r is
// still unanswered: a produce whose records are appended and that only
// waits for the ISR (pipelining). Its answer still leaves in request
// order. Once released, r must no longer read its request's bytes: the
// reader reuses them for the next frame. Idempotent; every request is
// released when it is answered.
func (r *request) release() {
	if r.released.CompareAndSwap(false, true) && r.c != nil {
		select {
		case r.c.next <- struct{}{}:
		default:
		}
	}
}

// api is one entry of the dispatch table.
type api struct {
	key      int16
	min, max int16
	handle   func(b *Broker, r *request)
}

var apis = map[int16]*api{}

// register adds a handler to the dispatch table; each API's file calls it
// from init with the versions it implements.
func register(key kmsg.Key, min, max int16, fn func(b *Broker, r *request)) {
	apis[key.Int16()] = &api{key: key.Int16(), min: min, max: max, handle: fn}
}

func apiFor(key int16) *api { return apis[key] }

// supportedAPIs lists the dispatch table in key order for ApiVersions.
func supportedAPIs() []*api {
	out := make([]*api, 0, len(apis))
	for _, a := range apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

type errUnknownAPI int16

func (e errUnknownAPI) Error() string { return fmt.Sprintf("unknown api key %d", int16(e)) }

func errUnsupportedVersion(h wire.RequestHeader) error {
	return fmt.Errorf("unsupported version %d of %s (key %d)", h.APIVersion, kmsg.NameForKey(h.APIKey), h.APIKey)
}

// handle runs the handler of a request on an io goroutine.
func (b *Broker) handle(r *request) {
	b.metrics.dequeued(r)
	defer b.metrics.handlerReturned(r)
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("handler panic; closing connection", "api", kmsg.NameForKey(r.hdr.APIKey), "panic", p)
			r.closeConn()
		}
	}()
	if !b.authz.quotas.Enabled(quota.RequestTime) {
		apis[r.hdr.APIKey].handle(b, r)
		return
	}
	start := time.Now()
	apis[r.hdr.APIKey].handle(b, r)
	b.recordRequestTime(r, time.Since(start))
}
