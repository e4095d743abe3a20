package broker

import (
	"fmt"
	"reflect"
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
	waits    bool // runs on its own goroutine (waitingAPIs)
}

var apis = map[int16]*api{}

// waitingAPIs are the requests whose handlers may wait on other brokers:
// for a write to an internal topic (__consumer_offsets,
// __transaction_state, __share_group_state) to reach its ISR, for another
// broker's answer (transaction markers), for the controller, or for a
// group or transaction lock that such a wait holds. They run on a
// goroutine of their own, not on an io one. Kafka's handler threads never
// wait: they hand such requests to purgatories and coordinator queues. An
// io goroutine that waited could wait for ever, since the replica fetches
// that end the wait would queue behind the io goroutines all waiting
// alike (found by franz-go's TestTxnEtl and TestGroupETL on three
// nodes). The connection still reads its next request only once this one
// is answered, as for any other request.
var waitingAPIs = map[kmsg.Key]bool{
	// group coordinators
	kmsg.JoinGroup: true, kmsg.SyncGroup: true, kmsg.Heartbeat: true, kmsg.LeaveGroup: true,
	kmsg.OffsetCommit: true, kmsg.TxnOffsetCommit: true, kmsg.OffsetFetch: true,
	kmsg.OffsetDelete: true, kmsg.DeleteGroups: true, kmsg.DescribeGroups: true, kmsg.ListGroups: true,
	kmsg.ConsumerGroupHeartbeat: true, kmsg.ConsumerGroupDescribe: true,
	kmsg.ShareGroupHeartbeat: true, kmsg.ShareGroupDescribe: true, kmsg.ShareFetch: true,
	kmsg.ShareAcknowledge: true, kmsg.AlterShareGroupOffsets: true, kmsg.DeleteShareGroupOffsets: true,
	kmsg.DescribeShareGroupOffsets: true, kmsg.InitializeShareGroupState: true,
	kmsg.ReadShareGroupState: true, kmsg.ReadShareGroupStateSummary: true,
	kmsg.WriteShareGroupState: true, kmsg.DeleteShareGroupState: true,
	// transaction coordinator and markers
	kmsg.InitProducerID: true, kmsg.AddPartitionsToTxn: true, kmsg.AddOffsetsToTxn: true,
	kmsg.EndTxn: true, kmsg.WriteTxnMarkers: true, kmsg.DescribeTransactions: true,
	kmsg.ListTransactions: true,
	// the controller
	kmsg.CreateTopics: true, kmsg.DeleteTopics: true, kmsg.CreatePartitions: true,
	kmsg.AlterConfigs: true, kmsg.IncrementalAlterConfigs: true, kmsg.ElectLeaders: true,
	kmsg.AlterPartitionAssignments: true, kmsg.CreateACLs: true, kmsg.DeleteACLs: true,
	kmsg.AlterClientQuotas: true, kmsg.AlterUserSCRAMCredentials: true, kmsg.DeleteRecords: true,
	kmsg.UnregisterBroker: true, kmsg.UpdateFeatures: true,
}

// register adds a handler to the dispatch table; each API's file calls it
// from init with the versions it implements.
func register(key kmsg.Key, min, max int16, fn func(b *Broker, r *request)) {
	apis[key.Int16()] = &api{key: key.Int16(), min: min, max: max, handle: fn, waits: waitingAPIs[key]}
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

// handle runs the handler of a request on an io goroutine, or hands it to
// a goroutine of its own when it may wait (waitingAPIs). Close waits for
// those goroutines as for the io goroutines, so none of them still writes
// to a log being closed; their waits end on stopWatch.
func (b *Broker) handle(r *request) {
	b.metrics.dequeued(r)
	if apis[r.hdr.APIKey].waits {
		if b.srv != nil {
			b.srv.goTracked(func() { b.run(r) })
		} else {
			go b.run(r)
		}
		return
	}
	b.run(r)
}

func (b *Broker) run(r *request) {
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

// errorResponse is Kafka's AbstractRequest.getErrorResponse for a request
// refused before any handler ran: Metadata names each requested topic with
// the error (no partitions); other responses carry it in their top-level
// ErrorCode when they have one, and are otherwise empty.
func errorResponse(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	if q, ok := req.(*kmsg.MetadataRequest); ok {
		m := resp.(*kmsg.MetadataResponse)
		for _, t := range q.Topics {
			mt := kmsg.NewMetadataResponseTopic()
			name := ""
			if t.Topic != nil {
				name = *t.Topic
			}
			mt.Topic, mt.TopicID, mt.ErrorCode = &name, t.TopicID, code
			m.Topics = append(m.Topics, mt)
		}
		return resp
	}
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(code))
	}
	return resp
}
