package broker

import (
	"fmt"
	"sort"
	"sync"
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
	handled   chan struct{} // closed once answered (or known to need no answer)
	once      sync.Once
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
		r.answered(resp)
		r.c.send(resp)
		close(r.handled)
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
		r.answered(enc)
		r.c.closeAfter = true
		r.c.send(enc)
		r.c.send(nil)
		close(r.handled)
	})
}

// respondNone finishes a request that gets no response (acks=0 produce).
func (r *request) respondNone() {
	r.once.Do(func() {
		r.answeredNone()
		close(r.handled)
	})
}

// closeConn finishes a request by closing its connection, as Kafka does
// for an acks=0 produce that failed.
func (r *request) closeConn() {
	r.once.Do(func() {
		r.answeredNone()
		r.c.shutdown() // before readLoop may read another frame
		close(r.handled)
	})
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
