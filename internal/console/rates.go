package console

// Live rates for the overview's charts: the broker's Prometheus counters
// sampled every few seconds into a ring buffer.

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// rateSeries are the counters charted, by the name the chart shows.
var rateSeries = []struct{ name, metric string }{
	{"messages in/s", "kafka_server_brokertopicmetrics_messagesin_total"},
	{"bytes in/s", "kafka_server_brokertopicmetrics_bytesin_total"},
	{"bytes out/s", "kafka_server_brokertopicmetrics_bytesout_total"},
	{"produce requests/s", "kafka_server_brokertopicmetrics_totalproducerequests_total"},
	{"fetch requests/s", "kafka_server_brokertopicmetrics_totalfetchrequests_total"},
}

// rateSamples is how many samples the ring keeps (30 minutes at 5 s).
const rateSamples = 360

// sample is one reading of every counter in rateSeries; ok[i] is false
// when the registry has no such series (yet).
type sample struct {
	t      time.Time
	values []float64
	ok     []bool
}

// rateSampler reads the registry's counters into a ring buffer. Safe for
// concurrent use.
type rateSampler struct {
	g prometheus.Gatherer

	mu   sync.Mutex
	ring []sample // oldest first, at most rateSamples
}

func newRateSampler(g prometheus.Gatherer) *rateSampler { return &rateSampler{g: g} }

// run samples every interval until stop closes. A registry that is slow
// to gather (per-partition series of a broker with many partitions) is
// sampled less often: at most 1% of the time goes to sampling.
func (rs *rateSampler) run(stop <-chan struct{}, interval time.Duration) {
	if rs.g == nil {
		return
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			rs.sample(now)
			t.Reset(max(interval, 100*time.Since(now)))
		}
	}
}

// sample reads the counters once. A counter is the sum of its series
// that carry no topic label (the broker-wide total) or, when only
// per-topic series exist, of those.
func (rs *rateSampler) sample(now time.Time) {
	mfs, err := rs.g.Gather()
	if err != nil && len(mfs) == 0 {
		return
	}
	s := sample{t: now, values: make([]float64, len(rateSeries)), ok: make([]bool, len(rateSeries))}
	for _, mf := range mfs {
		for i, rsd := range rateSeries {
			if mf.GetName() != rsd.metric {
				continue
			}
			var total, perTopic float64
			var haveTotal bool
			for _, m := range mf.GetMetric() {
				v := m.GetCounter().GetValue()
				if m.GetUntyped() != nil {
					v = m.GetUntyped().GetValue()
				}
				topic := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "topic" && lp.GetValue() != "" {
						topic = true
					}
				}
				if topic {
					perTopic += v
				} else {
					total += v
					haveTotal = true
				}
			}
			if haveTotal {
				s.values[i] = total
			} else {
				s.values[i] = perTopic
			}
			s.ok[i] = len(mf.GetMetric()) > 0
		}
	}
	rs.mu.Lock()
	rs.ring = append(rs.ring, s)
	if len(rs.ring) > rateSamples {
		rs.ring = append(rs.ring[:0:0], rs.ring[len(rs.ring)-rateSamples:]...)
	}
	rs.mu.Unlock()
}

// ratePoint is [unix millis, per second].
type ratePoint [2]float64

type rateJSON struct {
	Name   string      `json:"name"`
	Metric string      `json:"metric"`
	Points []ratePoint `json:"points"`
}

// rates turns the ring's counter readings into per-second rates. A series
// the registry does not have yet has no points; a counter that went down
// (a restart) gives no point for that interval.
func (rs *rateSampler) rates() []rateJSON {
	rs.mu.Lock()
	ring := append([]sample(nil), rs.ring...)
	rs.mu.Unlock()
	out := make([]rateJSON, len(rateSeries))
	for i, rsd := range rateSeries {
		out[i] = rateJSON{Name: rsd.name, Metric: rsd.metric, Points: []ratePoint{}}
		for j := 1; j < len(ring); j++ {
			a, b := ring[j-1], ring[j]
			if !a.ok[i] || !b.ok[i] || b.values[i] < a.values[i] {
				continue
			}
			dt := b.t.Sub(a.t).Seconds()
			if dt <= 0 {
				continue
			}
			out[i].Points = append(out[i].Points, ratePoint{float64(b.t.UnixMilli()), (b.values[i] - a.values[i]) / dt})
		}
	}
	return out
}

func init() {
	handle("GET /api/rates", func(s *Server, w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"series": s.rates.rates()})
	})
}
