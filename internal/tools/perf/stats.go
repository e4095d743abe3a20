package perf

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/silkworm/silkworm/internal/javafmt"
)

// reportingInterval is how often producer-perf-test prints a window line,
// Kafka's fixed 5 s.
const reportingInterval = 5 * time.Second

// maxTrackedLatency bounds the latency histogram; longer latencies are
// recorded as this value.
const maxTrackedLatency = time.Hour

// producerStats accumulates acknowledged records for producer-perf-test:
// totals, the current reporting window, and a latency histogram in
// microseconds. It prints a window line (Kafka's format) when a record
// completes at least reportingInterval after the window opened, as Kafka's
// ProducerPerformance does. Safe for concurrent use: kgo calls promises
// from its own goroutines while the send loop reads totals.
type producerStats struct {
	out    io.Writer
	steady bool // the warm-up-excluded copy: totals say "steady state"

	mu        sync.Mutex
	start     time.Time
	count     int64
	bytes     int64
	totalLat  time.Duration
	maxLat    time.Duration
	hist      *hdrhistogram.Histogram
	winStart  time.Time
	winCount  int64
	winBytes  int64
	winLat    time.Duration
	winMax    time.Duration
	suppress  bool // windows are printed by the steady-state stats instead
	announced bool // "In steady state." printed
}

func newProducerStats(out io.Writer, start time.Time, steady bool) *producerStats {
	return &producerStats{
		out:      out,
		steady:   steady,
		start:    start,
		winStart: start,
		hist:     hdrhistogram.New(1, maxTrackedLatency.Microseconds(), 3),
	}
}

// record adds one acknowledged record of n bytes whose latency was lat,
// completed at now, and prints the window line when the window is over.
func (s *producerStats) record(lat time.Duration, n int, now time.Time) {
	if lat < 0 {
		lat = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.bytes += int64(n)
	s.totalLat += lat
	s.maxLat = max(s.maxLat, lat)
	s.winCount++
	s.winBytes += int64(n)
	s.winLat += lat
	s.winMax = max(s.winMax, lat)
	us := min(max(lat.Microseconds(), 1), maxTrackedLatency.Microseconds())
	_ = s.hist.RecordValue(us) // cannot fail: us is within the histogram's range
	if now.Sub(s.winStart) >= reportingInterval {
		if s.steady && !s.announced {
			s.announced = true
			fmt.Fprintln(s.out, "In steady state.")
		}
		if !s.suppress {
			fmt.Fprintln(s.out, s.windowLineLocked(now))
		}
		s.winStart = now
		s.winCount, s.winBytes, s.winLat, s.winMax = 0, 0, 0, 0
	}
}

// suppressWindows stops window lines (once steady-state stats take over).
func (s *producerStats) suppressWindows() {
	s.mu.Lock()
	s.suppress = true
	s.mu.Unlock()
}

func (s *producerStats) counts() (records, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, s.bytes
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// windowLineLocked formats Kafka's periodic line:
// N records sent, X records/sec (Y MB/sec), Z ms avg latency, W ms max latency.
func (s *producerStats) windowLineLocked(now time.Time) string {
	elapsed := now.Sub(s.winStart).Seconds()
	return fmt.Sprintf("%d records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency.",
		s.winCount,
		javafmt.Fixed(float64(s.winCount)/elapsed, 1),
		javafmt.Fixed(float64(s.winBytes)/elapsed/(1024*1024), 2),
		javafmt.Fixed(ms(s.winLat)/float64(s.winCount), 1),
		javafmt.Fixed(ms(s.winMax), 1))
}

// totalLine formats Kafka's closing line with integer millisecond
// percentiles taken from the histogram.
func (s *producerStats) totalLine(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := now.Sub(s.start).Seconds()
	pct := func(q float64) int64 {
		if s.count == 0 {
			return 0
		}
		return s.hist.ValueAtQuantile(q) / 1000
	}
	steady := ""
	if s.steady {
		steady = " steady state"
	}
	return fmt.Sprintf("%d%s records sent, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		s.count, steady,
		javafmt.Fixed(float64(s.count)/elapsed, 6),
		javafmt.Fixed(float64(s.bytes)/elapsed/(1024*1024), 2),
		javafmt.Fixed(ms(s.totalLat)/float64(s.count), 2),
		javafmt.Fixed(ms(s.maxLat), 2),
		pct(50), pct(95), pct(99), pct(99.9))
}

// Consumer-perf-test lines.

const mib = 1024 * 1024

func consumerHeader(detailed bool) string {
	const extra = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	if detailed {
		return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + extra
	}
	return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + extra
}

// consumerTotalLine is the closing line without --show-detailed-stats. Times
// are whole milliseconds, as Kafka measures them.
func consumerTotalLine(dateFormat string, start, end time.Time, bytes, msgs, joinMs int64) string {
	elapsedMs := end.Sub(start).Milliseconds()
	elapsedSec := float64(elapsedMs) / 1000
	fetchMs := elapsedMs - joinMs
	mb := float64(bytes) / mib
	return fmt.Sprintf("%s, %s, %s, %s, %d, %s, %d, %d, %s, %s",
		javaDateFormat(dateFormat, start), javaDateFormat(dateFormat, end),
		javafmt.Fixed(mb, 4), javafmt.Fixed(mb/elapsedSec, 4),
		msgs, javafmt.Fixed(float64(msgs)/elapsedSec, 4),
		joinMs, fetchMs,
		javafmt.Fixed(mb/(float64(fetchMs)/1000), 4),
		javafmt.Fixed(float64(msgs)/(float64(fetchMs)/1000), 4))
}

// consumerProgressLine is one --show-detailed-stats line for the interval
// from last to now; thread id is always 0, as in Kafka's single consumer.
func consumerProgressLine(dateFormat string, last, now time.Time, bytes, lastBytes, msgs, lastMsgs, joinMs int64) string {
	elapsedMs := float64(now.Sub(last).Milliseconds())
	totalMB := float64(bytes) / mib
	intervalMB := float64(bytes-lastBytes) / mib
	fetchMs := now.Sub(last).Milliseconds() - joinMs
	fetchMBs, fetchMsgs := 0.0, 0.0
	if fetchMs > 0 {
		fetchMBs = 1000 * intervalMB / float64(fetchMs)
		fetchMsgs = 1000 * float64(msgs-lastMsgs) / float64(fetchMs)
	}
	return fmt.Sprintf("%s, %d, %s, %s, %d, %s, %d, %d, %s, %s",
		javaDateFormat(dateFormat, now), 0,
		javafmt.Fixed(totalMB, 4), javafmt.Fixed(1000*intervalMB/elapsedMs, 4),
		msgs, javafmt.Fixed(float64(msgs-lastMsgs)/elapsedMs*1000, 4),
		joinMs, fetchMs, javafmt.Fixed(fetchMBs, 4), javafmt.Fixed(fetchMsgs, 4))
}

func consumerTimeoutWarning(timeoutMs int64) string {
	return fmt.Sprintf("WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. "+
		"You can use the --timeout option to increase the timeout.", timeoutMs)
}

// End-to-end latency lines.

// e2eProgressLine is printed for every 1000th record: index, tab, latency
// in milliseconds as Java prints a double.
func e2eProgressLine(i int, elapsed time.Duration) string {
	return fmt.Sprintf("%d\t%s", i, javafmt.Double(float64(elapsed.Nanoseconds())/1000/1000))
}

// e2eResults formats the two closing lines from per-record latencies:
// average with 4 decimals, then 50th, 99th and 99.9th percentiles as whole
// milliseconds picked from the sorted list the way Kafka does.
func e2eResults(lat []time.Duration) string {
	if len(lat) == 0 {
		return "Avg latency: NaN ms\nPercentiles: 50th = 0, 99th = 0, 99.9th = 0\n"
	}
	var total time.Duration
	msList := make([]int64, len(lat))
	for i, l := range lat {
		total += l
		msList[i] = l.Milliseconds()
	}
	sortInt64s(msList)
	at := func(q float64) int64 { return msList[int(float64(len(msList))*q)] }
	return fmt.Sprintf("Avg latency: %s ms\nPercentiles: 50th = %d, 99th = %d, 99.9th = %d\n",
		javafmt.Fixed(float64(total.Nanoseconds())/float64(len(lat))/1000/1000, 4), at(0.5), at(0.99), at(0.999))
}
