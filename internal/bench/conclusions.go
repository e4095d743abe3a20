package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Conclusion is one seed conclusion and what this run's data says of it.
type Conclusion struct {
	Seed  string `json:"seed"`
	Claim string `json:"claim"`
	// Verdict is "yes", "no", "partly" or "not measured".
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

const notMeasured = "not measured"

// Seed studies, by file in /work/shared/seeds; their titles (English and
// original) are in bench/seeds.
const (
	seedJK    = "seed 000" // Kafka study (3): tests, the Jay Kreps style study
	seed09    = "seed 001" // Kafka 0.9.0.1 produce and consume performance test
	seedK8s   = "seed 002" // Kafka benchmark on Kubernetes with different storage
	seedTune  = "seed 003" // Kafka performance tuning explained (1): the broker
	seedARM   = "seed 004" // Kafka performance test on ARM servers
	tolerance = 15.0       // % within which "no effect" holds
)

// pctChange is (b/a - 1) in percent.
func pctChange(a, b float64) float64 { return (b/a - 1) * 100 }

func fmtPct(p float64) string {
	s := strconv.FormatFloat(math.Abs(p), 'f', 0, 64) + " %"
	if p < 0 {
		return "−" + s
	}
	return "+" + s
}

// sweepValues are the measured (value, median) pairs of a series in sweep
// order.
func (r *Results) sweepValues(scenario, series, metric string) (values []string, meds []float64) {
	for _, p := range r.PointsOf(scenario) {
		if p.Series != series {
			continue
		}
		if v, ok := p.Median(metric); ok {
			values = append(values, p.Value)
			meds = append(meds, v)
		}
	}
	return values, meds
}

func (r *Results) median(scenario, series, value, metric string) (float64, bool) {
	return r.Find(scenario, series, value).Median(metric)
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// withinTolerance is the "has no real effect" check: every measured value
// within ±tolerance % of the first.
func (r *Results) noEffect(seed, claim, scenario, series, metric, param string) Conclusion {
	c := Conclusion{Seed: seed, Claim: claim}
	vals, meds := r.sweepValues(scenario, series, metric)
	if len(meds) < 2 {
		c.Verdict = notMeasured
		if len(meds) == 1 {
			c.Detail = "only " + param + " " + vals[0] + " ran"
		}
		return c
	}
	worst, at := 0.0, ""
	for i := 1; i < len(meds); i++ {
		if d := pctChange(meds[0], meds[i]); math.Abs(d) > math.Abs(worst) {
			worst, at = d, vals[i]
		}
	}
	c.Verdict = verdict(math.Abs(worst) <= tolerance)
	c.Detail = fmt.Sprintf("largest change %s at %s %s vs %s (tolerance ±%.0f %%)", fmtPct(worst), param, at, vals[0], tolerance)
	return c
}

// Conclusions evaluates every seed conclusion against the results.
func Conclusions(r *Results) []Conclusion {
	var out []Conclusion
	add := func(c Conclusion) { out = append(out, c) }

	// 000 §2.1(1): a lone producer.
	{
		c := Conclusion{Seed: seedJK + " §2.1(1)", Claim: "A lone producer (1 partition, RF 1, 100 B) sends about 500,000–800,000 records/s"}
		if v, ok := r.median("producer-throughput", "", "", MProduceRecs); ok {
			c.Verdict = verdict(v >= 500000)
			c.Detail = fmt.Sprintf("%.0f records/s (%.1f MB/s)", v, v*100/mb)
		} else {
			c.Verdict = notMeasured
		}
		add(c)
	}
	// 000 §2.1(2): stored data.
	{
		c := Conclusion{Seed: seedJK + " §2.1(2)", Claim: "Producer throughput does not depend on the data already stored"}
		var changes []float64
		for _, p := range r.PointsOf("producer-stored-data") {
			if v, ok := p.Median(MStoredFlat); ok {
				changes = append(changes, v)
			}
		}
		if len(changes) == 0 {
			c.Verdict = notMeasured
		} else {
			ch := changes[0]
			c.Verdict = verdict(math.Abs(ch) <= 20)
			c.Detail = fmt.Sprintf("last quarter of the writes %s vs the first (±20 %% allowed)", fmtPct(ch))
		}
		add(c)
	}
	// 000 §2.1(3): partitions on one disk.
	add(r.noEffect(seedJK+" §2.1(3)", "On one disk, more partitions barely change producer throughput",
		"producer-partitions", "", MProduceRecs, "partitions"))
	// 004: partitions about 5x the brokers perform best.
	{
		c := Conclusion{Seed: seedARM, Claim: "Producer throughput is best with about 5 partitions per broker"}
		vals, meds := r.sweepValues("producer-partitions-record-size", "1024", MProduceRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
		} else {
			best := 0
			for i := range meds {
				if meds[i] > meds[best] {
					best = i
				}
			}
			brokers := max(r.Find("producer-partitions-record-size", "1024", vals[best]).Brokers, 1)
			n, _ := strconv.Atoi(vals[best])
			per := float64(n) / float64(brokers)
			c.Verdict = verdict(per >= 3 && per <= 8)
			c.Detail = fmt.Sprintf("best at %d partitions on %d broker(s) (%.0f per broker), 1 KiB records", n, brokers, per)
		}
		add(c)
	}
	// 000 §2.1(4): producer count.
	{
		c := Conclusion{Seed: seedJK + " §2.1(4)", Claim: "More producers: each producer slows down, the total rises almost linearly"}
		vals, per := r.sweepValues("producer-count", "", MProducePerClient)
		_, tot := r.sweepValues("producer-count", "", MProduceRecs)
		if len(per) < 2 || len(tot) != len(per) {
			c.Verdict = notMeasured
		} else {
			last := len(per) - 1
			dPer, dTot := pctChange(per[0], per[last]), pctChange(tot[0], tot[last])
			n0, _ := strconv.Atoi(vals[0])
			n1, _ := strconv.Atoi(vals[last])
			linear := pctChange(float64(n0), float64(n1))
			switch {
			case dPer < 0 && dTot >= linear/2:
				c.Verdict = "yes"
			case dPer < 0 && dTot > 5:
				c.Verdict = "partly"
			default:
				c.Verdict = "no"
			}
			c.Detail = fmt.Sprintf("from %s to %s producers: per producer %s, total %s (linear would be %s)", vals[0], vals[last], fmtPct(dPer), fmtPct(dTot), fmtPct(linear))
		}
		add(c)
	}
	// 000 §2.1(5): replication.
	add(r.noEffect(seedJK+" §2.1(5)", "Async replication (acks=1) hardly affects producer throughput",
		"producer-replicas", "1", MProduceRecs, "RF"))
	{
		c := Conclusion{Seed: seedJK + " §2.1(5)", Claim: "Sync replication (acks=all) lowers producer throughput"}
		vals, sync := r.sweepValues("producer-replicas", "all", MProduceRecs)
		found := false
		for i := len(vals) - 1; i >= 0 && !found; i-- {
			if vals[i] == "1" {
				continue
			}
			if async, ok := r.median("producer-replicas", "1", vals[i], MProduceRecs); ok {
				d := pctChange(async, sync[i])
				c.Verdict = verdict(d <= -10)
				c.Detail = fmt.Sprintf("%s at RF %s (acks=all vs acks=1)", fmtPct(d), vals[i])
				found = true
			}
		}
		if !found {
			c.Verdict = notMeasured
			c.Detail = "needs RF > 1"
		}
		add(c)
	}
	{
		c := Conclusion{Seed: seedARM, Claim: "More replicas lower producer throughput markedly (acks=all)"}
		vals, meds := r.sweepValues("producer-replicas", "all", MProduceRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
			c.Detail = "needs RF > 1"
		} else {
			d := pctChange(meds[0], meds[len(meds)-1])
			c.Verdict = verdict(d <= -10)
			c.Detail = fmt.Sprintf("%s at RF %s vs RF %s", fmtPct(d), vals[len(vals)-1], vals[0])
		}
		add(c)
	}
	// 000 §2.2(1): consumers beyond partitions are idle.
	{
		c := Conclusion{Seed: seedJK + " §2.2(1)", Claim: "Consumers beyond the partition count get nothing (idle)"}
		checked, ok := 0, true
		var parts []string
		for _, p := range r.PointsOf("consumer-count") {
			idle, measured := p.Median(MConsumeIdle)
			if !measured {
				continue
			}
			want := max(p.Spec.Consumers-p.Spec.Topic.Partitions, 0)
			checked++
			if int(idle) != want {
				ok = false
			}
			parts = append(parts, fmt.Sprintf("%d consumers: %d idle", p.Spec.Consumers, int(idle)))
		}
		if checked == 0 {
			c.Verdict = notMeasured
		} else {
			c.Verdict = verdict(ok)
			c.Detail = strings.Join(parts, "; ")
			if pts := r.PointsOf("consumer-count"); len(pts) > 0 {
				c.Detail = fmt.Sprintf("%d partitions; %s", pts[0].Spec.Topic.Partitions, c.Detail)
			}
		}
		add(c)
	}
	add(r.noEffect(seedJK+" §2.2(2)", "The replica count does not affect consumer throughput",
		"consumer-replicas", "1", MConsumeRecs, "RF"))
	{
		c := Conclusion{Seed: seedJK + " §2.2(3)", Claim: "Consumer throughput does not depend on sync or async replication"}
		vals, sync := r.sweepValues("consumer-replicas", "all", MConsumeRecs)
		found := false
		for i := len(vals) - 1; i >= 0 && !found; i-- {
			if vals[i] == "1" {
				continue
			}
			if async, ok := r.median("consumer-replicas", "1", vals[i], MConsumeRecs); ok {
				d := pctChange(async, sync[i])
				c.Verdict = verdict(math.Abs(d) <= tolerance)
				c.Detail = fmt.Sprintf("%s at RF %s (written with acks=all vs acks=1)", fmtPct(d), vals[i])
				found = true
			}
		}
		if !found {
			c.Verdict = notMeasured
			c.Detail = "needs RF > 1"
		}
		add(c)
	}
	// 000 §2.3: producers and consumers together.
	consumerAlone, caOK := r.median("consumer-replicas", "1", "1", MConsumeRecs)
	producerAlone, paOK := r.median("producer-throughput", "", "", MProduceRecs)
	{
		c := Conclusion{Seed: seedJK + " §2.3(1)", Claim: "With a producer running, a consumer is slower than alone"}
		if cw, ok := r.median("produce-consume-producers", "", "1", MConsumeRecs); ok && caOK {
			d := pctChange(consumerAlone, cw)
			c.Verdict = verdict(d < 0)
			c.Detail = fmt.Sprintf("%s (%.0f vs %.0f records/s alone)", fmtPct(d), cw, consumerAlone)
		} else {
			c.Verdict = notMeasured
		}
		add(c)
	}
	{
		c := Conclusion{Seed: seedJK + " §2.3(1)", Claim: "With more producers, consumer throughput rises, then levels off"}
		vals, meds := r.sweepValues("produce-consume-producers", "", MConsumeRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
		} else {
			d := pctChange(meds[0], meds[len(meds)-1])
			c.Verdict = verdict(d > 0)
			c.Detail = fmt.Sprintf("%s from %s to %s producers", fmtPct(d), vals[0], vals[len(vals)-1])
		}
		add(c)
	}
	{
		c := Conclusion{Seed: seedJK + " §2.3(2)", Claim: "Producer and consumer together are both slower than each alone"}
		pw, ok1 := r.median("produce-consume-consumers", "", "1", MProduceRecs)
		cw, ok2 := r.median("produce-consume-consumers", "", "1", MConsumeRecs)
		if ok1 && ok2 && paOK && caOK {
			dp, dc := pctChange(producerAlone, pw), pctChange(consumerAlone, cw)
			switch {
			case dp < 0 && dc < 0:
				c.Verdict = "yes"
			case dp < 0 || dc < 0:
				c.Verdict = "partly"
			default:
				c.Verdict = "no"
			}
			c.Detail = fmt.Sprintf("producer %s, consumer %s", fmtPct(dp), fmtPct(dc))
		} else {
			c.Verdict = notMeasured
		}
		add(c)
	}
	{
		c := Conclusion{Seed: seedJK + " §2.3(2)", Claim: "Producer throughput falls as consumers are added"}
		vals, meds := r.sweepValues("produce-consume-consumers", "", MProduceRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
		} else {
			d := pctChange(meds[0], meds[len(meds)-1])
			c.Verdict = verdict(d < 0)
			c.Detail = fmt.Sprintf("%s from %s to %s consumers", fmtPct(d), vals[0], vals[len(vals)-1])
		}
		add(c)
	}
	// 000 §2.4 and the K8s study: record size.
	{
		c := Conclusion{Seed: seedJK + " §2.4, " + seedK8s, Claim: "Larger records: fewer records/s"}
		vals, meds := r.sweepValues("record-size", "", MProduceRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
		} else {
			d := pctChange(meds[0], meds[len(meds)-1])
			c.Verdict = verdict(d < 0)
			c.Detail = fmt.Sprintf("%.0f records/s at %s B, %.0f at %s B", meds[0], vals[0], meds[len(meds)-1], vals[len(vals)-1])
		}
		add(c)
	}
	{
		c := Conclusion{Seed: seedJK + " §2.4", Claim: "MB/s grows with record size and levels off from about 10 KB"}
		vals, meds := r.sweepValues("record-size", "", MProduceMB)
		idx := func(v string) int {
			for i := range vals {
				if vals[i] == v {
					return i
				}
			}
			return -1
		}
		i100, i10k, ilast := idx("100"), idx("10240"), len(vals)-1
		if i100 < 0 || i10k < 0 || ilast <= i10k {
			c.Verdict = notMeasured
		} else {
			grows := meds[i10k] > meds[i100]
			flat := meds[ilast] <= meds[i10k]*1.3
			c.Verdict = verdict(grows && flat)
			c.Detail = fmt.Sprintf("%.1f MB/s at 100 B, %.1f at 10 KiB, %.1f at %s B", meds[i100], meds[i10k], meds[ilast], vals[ilast])
		}
		add(c)
	}
	// 000 §2.5: compression.
	{
		c := Conclusion{Seed: seedJK + " §2.5", Claim: "snappy shrinks the data to about 10 %"}
		if v, ok := r.median("compression", "", "snappy", MDiskRatio); ok {
			c.Verdict = verdict(v <= 0.15)
			c.Detail = fmt.Sprintf("snappy log is %.0f %% of the values sent (this run's text payload)", v*100)
			if g, ok := r.median("compression", "", "none", MDiskRatio); ok {
				c.Detail += fmt.Sprintf("; uncompressed log is %.0f %% (batch overhead)", g*100)
			}
		} else {
			c.Verdict = notMeasured
		}
		add(c)
	}
	add(r.noEffect(seedJK+" §2.5", "Compression barely affects producer throughput",
		"compression", "", MProduceRecs, "compression"))
	// 000 §2.6: retention.
	{
		c := Conclusion{Seed: seedJK + " §2.6", Claim: "Time-based retention deletes expired data promptly"}
		p := r.Find("retention-time", "", "")
		if p == nil || len(p.Runs) == 0 {
			c.Verdict = notMeasured
		} else {
			ms := func(k string) float64 {
				v, _ := strconv.ParseFloat(p.Spec.Topic.Configs[k], 64)
				return v
			}
			check, _ := strconv.ParseFloat(p.Spec.Broker["log.retention.check.interval.ms"], 64)
			limit := (ms("retention.ms") + ms("segment.ms") + check) / 1000 * 2
			if v, ok := p.Median(MRetentionDeleted); ok {
				c.Verdict = verdict(v <= limit)
				c.Detail = fmt.Sprintf("half the log gone %.1f s after the last write (retention.ms %.0f, segment.ms %.0f, check every %.0f ms)", v, ms("retention.ms"), ms("segment.ms"), check)
			} else {
				c.Verdict = "no"
				c.Detail = "the log did not shrink to half its peak while watched"
			}
		}
		add(c)
	}
	// Broker tuning study.
	{
		c := Conclusion{Seed: seedTune, Claim: "queued.max.requests 1 → 1000 raises throughput a little (≈6–10 %)"}
		vals, meds := r.sweepValues("broker-queued-max-requests", "", MProduceRecs)
		if len(meds) < 2 {
			c.Verdict = notMeasured
		} else {
			d := pctChange(meds[0], meds[len(meds)-1])
			c.Verdict = verdict(d >= 3)
			c.Detail = fmt.Sprintf("producer %s from %s to %s", fmtPct(d), vals[0], vals[len(vals)-1])
		}
		add(c)
	}
	add(r.noEffect(seedTune, "num.io.threads has little effect at this load", "broker-io-threads", "", MProduceRecs, "num.io.threads"))
	add(r.noEffect(seedTune, "num.network.threads has little effect at this load", "broker-network-threads", "", MProduceRecs, "num.network.threads"))
	add(r.noEffect(seedTune, "num.replica.fetchers: the default 1 is enough", "broker-replica-fetchers", "", MProduceRecs, "num.replica.fetchers"))
	add(r.noEffect(seedTune, "replica.fetch.max.bytes changes little", "broker-replica-fetch-max-bytes", "", MProduceRecs, "replica.fetch.max.bytes"))
	add(r.noEffect(seedTune, "replica.socket.receive.buffer.bytes changes little", "broker-replica-socket-buffer", "", MProduceRecs, "replica.socket.receive.buffer.bytes"))
	// 0.9.0.1 study: the producer is the bottleneck, consumers are faster.
	{
		c := Conclusion{Seed: seed09, Claim: "Consumers read faster than producers write (1 KiB records)"}
		pw, ok1 := r.median("record-size", "", "1024", MProduceMB)
		cw, ok2 := r.median("record-size", "", "1024", MConsumeMB)
		if ok1 && ok2 {
			c.Verdict = verdict(cw > pw)
			c.Detail = fmt.Sprintf("consumer %.1f MB/s vs producer %.1f MB/s", cw, pw)
		} else {
			c.Verdict = notMeasured
		}
		add(c)
	}
	return out
}
