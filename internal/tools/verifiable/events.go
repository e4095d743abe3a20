package verifiable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// header opens every event: Kafka's tools order "timestamp" and "name"
// first (@JsonPropertyOrder), then the event's own fields.
type header struct {
	Timestamp int64  `json:"timestamp"`
	Name      string `json:"name"`
}

func (h *header) stamp(ms int64) { h.Timestamp = ms }

// event is one JSON line; the printer stamps its timestamp when it prints.
type event interface{ stamp(ms int64) }

func named(name string) header { return header{Name: name} }

// printer writes events to the tool's standard output, one JSON object a
// line, each stamped with the clock's time when printed. It is safe for
// concurrent use: produce callbacks and the send loop print from different
// goroutines, and a line is never interleaved with another.
type printer struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

func newPrinter(w io.Writer, now func() time.Time) *printer {
	if now == nil {
		now = time.Now
	}
	return &printer{w: w, now: now}
}

func (p *printer) print(ev event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev.stamp(p.now().UnixMilli())
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Jackson leaves <, > and & alone
	if err := enc.Encode(ev); err != nil {
		// Kafka's tools print this line when Jackson fails.
		fmt.Fprintf(p.w, "Bad data can't be written as json: %v\n", err)
		return
	}
	p.w.Write(b.Bytes())
}

// javaDouble is a double printed as Jackson prints it: Java's
// Double.toString, NaN and the infinities as strings.
type javaDouble float64

func (d javaDouble) MarshalJSON() ([]byte, error) {
	v := float64(d)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte(`"` + javafmt.Double(v) + `"`), nil
	}
	return []byte(javafmt.Double(v)), nil
}

// Producer events (VerifiableProducer).

type startupComplete struct{ header }

type shutdownComplete struct{ header }

type sendSuccess struct {
	header
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
}

type sendError struct {
	header
	Topic     string  `json:"topic"`
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	Exception string  `json:"exception"`
	Message   string  `json:"message"`
}

type toolData struct {
	header
	Sent             int64      `json:"sent"`
	Acked            int64      `json:"acked"`
	TargetThroughput int64      `json:"target_throughput"`
	AvgThroughput    javaDouble `json:"avg_throughput"`
}

// Consumer events (VerifiableConsumer).

type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type partitionsEvent struct {
	header
	Partitions []topicPartition `json:"partitions"`
}

type recordSetSummary struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Count     int64  `json:"count"`
	MinOffset int64  `json:"minOffset"`
	MaxOffset int64  `json:"maxOffset"`
}

type recordsConsumed struct {
	header
	Count      int64              `json:"count"`
	Partitions []recordSetSummary `json:"partitions"`
}

type recordData struct {
	header
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
}

type commitData struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

type offsetsCommitted struct {
	header
	Offsets []commitData `json:"offsets"`
	Error   *string      `json:"error,omitempty"`
	Success bool         `json:"success"`
}

// javaException names the Java exception Kafka's clients raise for err and
// its message, as VerifiableProducer prints them in producer_send_error:
// "class org.apache.kafka.common.errors.XxxException" and the message.
func javaException(err error) (class, message string) {
	const pkg = "class org.apache.kafka.common.errors."
	switch {
	case err == kgo.ErrRecordTimeout:
		return pkg + "TimeoutException", err.Error()
	case err == kgo.ErrRecordRetries:
		return pkg + "TimeoutException", err.Error()
	case err == kgo.ErrAborting, err == kgo.ErrClientClosed:
		return "class java.lang.IllegalStateException", "Cannot perform operation after producer has been closed"
	}
	var ke *kerr.Error
	if e, ok := err.(*kerr.Error); ok {
		ke = e
	} else if u, ok := err.(interface{ Unwrap() error }); ok {
		if e, ok := u.Unwrap().(*kerr.Error); ok {
			ke = e
		}
	}
	if ke == nil {
		return pkg + "KafkaException", err.Error()
	}
	return pkg + cli.JavaErrorClass(ke.Code), ke.Description
}
