package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"time"
)

// planned is a scenario and its points for a run.
type planned struct {
	s      *Scenario
	points []Point
}

// planRun expands the selected scenarios into their points.
func planRun(opts Options) ([]planned, error) {
	var plan []planned
	for _, s := range opts.Scenarios {
		if len(opts.Only) > 0 && !slices.Contains(opts.Only, s.Name) {
			continue
		}
		pts, err := s.Points(opts.Profile)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		plan = append(plan, planned{s, pts})
	}
	return plan, nil
}

// HostLimits are what `--profile full` is fitted to: a run that would
// fill more than half the free disk, or a plan longer than the time
// budget, is scaled down (fewer records), and the report says so.
type HostLimits struct {
	// FreeDisk is the free space where the embedded brokers write, in
	// bytes; 0 when unknown (a remote cluster), which scales nothing.
	FreeDisk int64
	// TimeBudget bounds the estimated run time; 0 is no bound.
	TimeBudget time.Duration
}

// FreeDiskAt is the space free for an unprivileged user at dir.
func FreeDiskAt(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free disk at %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// The estimate's throughput assumptions: what one producer or consumer
// of the embedded cluster sustains on a small host (the quick profile on
// two cores measured 0.2–2.3 million records/s and 180–800 MB/s); the
// slower bound of the two applies. Each run adds a fixed overhead
// (topic, clients, broker restarts).
const (
	estRecordsPerSec = 400_000
	estMBPerSec      = 150
	estRunOverhead   = 4 * time.Second
)

// PointEstimate is the estimated cost of one point, all repetitions.
type PointEstimate struct {
	Scenario string
	Label    string
	Records  int64
	Disk     int64 // bytes on disk at the end of one run, all replicas
	Time     time.Duration
}

// Estimate is the estimated time and disk of a run.
type Estimate struct {
	Profile  string
	Points   []PointEstimate
	Time     time.Duration
	PeakDisk int64 // largest single run (topics are deleted after each)
	Limits   HostLimits
	Scaling  []string
}

// estimatePoint is the time and disk of one point.
func estimatePoint(pt Point) PointEstimate {
	sp := pt.Spec
	e := PointEstimate{Scenario: pt.Scenario.Name, Label: pt.Label(), Records: sp.Records}
	size := float64(sp.RecordSize)
	perSec := math.Min(estRecordsPerSec, estMBPerSec*mb/size)
	one := time.Duration(float64(sp.Records) / perSec * float64(time.Second))
	records := sp.Records
	switch sp.Kind {
	case KindConsume, KindProduceThenConsume:
		one *= 2
	case KindProduceConsume:
		one = one * 6 / 5
	case KindEndToEnd:
		if sp.Rate > 0 {
			one = time.Duration(float64(sp.Records) / sp.Rate * float64(time.Second))
		}
	case KindRetention:
		one = time.Duration(sp.Duration + sp.Observe)
		records = int64(sp.Rate * time.Duration(sp.Duration).Seconds())
	}
	if sp.Rate > 0 && sp.Kind != KindRetention && sp.Kind != KindEndToEnd {
		one = max(one, time.Duration(float64(sp.Records)/sp.Rate*float64(time.Second)))
	}
	e.Disk = int64(float64(records) * (size + 70) * float64(sp.Topic.ReplicationFactor)) // + record and batch overhead
	e.Time = time.Duration(sp.Repetitions) * (one + estRunOverhead)
	return e
}

func estimatePlan(plan []planned) *Estimate {
	e := &Estimate{}
	for _, pl := range plan {
		for _, pt := range pl.points {
			pe := estimatePoint(pt)
			e.Points = append(e.Points, pe)
			e.Time += pe.Time
			e.PeakDisk = max(e.PeakDisk, pe.Disk)
		}
	}
	return e
}

// fitToHost scales the plan's record counts down where one run would
// fill more than half of the free disk, then all of them by one factor
// when the whole plan is estimated to take longer than the time budget,
// and says what it did.
func fitToHost(plan []planned, lim HostLimits) []string {
	var notes []string
	if lim.FreeDisk > 0 {
		room := lim.FreeDisk / 2
		for _, pl := range plan {
			for i := range pl.points {
				pt := &pl.points[i]
				pe := estimatePoint(*pt)
				if pe.Disk <= room {
					continue
				}
				f := float64(room) / float64(pe.Disk)
				if pt.Spec.Kind == KindRetention {
					// Retention is about time: keep the durations and
					// retention.ms, write slower.
					before := pt.Spec.Rate
					pt.Spec.Rate = max(before*f, 1)
					notes = append(notes, fmt.Sprintf("%s %s: %.0f → %.0f records/s (the run writes about %s, %s is free; runs use at most half)",
						pt.Scenario.Name, pt.Label(), before, pt.Spec.Rate, fmtBytes(pe.Disk), fmtBytes(lim.FreeDisk)))
					continue
				}
				before := pt.Spec.Records
				pt.Spec.Records = max(int64(float64(before)*f), int64(pt.Spec.Producers), 1000)
				notes = append(notes, fmt.Sprintf("%s %s: %d → %d records (a run needs about %s on disk, %s is free; runs use at most half)",
					pt.Scenario.Name, pt.Label(), before, pt.Spec.Records, fmtBytes(pe.Disk), fmtBytes(lim.FreeDisk)))
			}
		}
	}
	if lim.TimeBudget > 0 {
		est := estimatePlan(plan)
		if est.Time > lim.TimeBudget {
			// Runs have parts that do not shrink with the record count
			// (retention's durations, per-run overhead): shrink the rest
			// until the whole fits, a few rounds.
			orig := map[*Point]int64{}
			for _, pl := range plan {
				for i := range pl.points {
					orig[&pl.points[i]] = pl.points[i].Spec.Records
				}
			}
			f := 1.0
			for range 6 {
				now := estimatePlan(plan).Time
				if now <= lim.TimeBudget {
					break
				}
				f *= float64(lim.TimeBudget) / float64(now)
				for pt, n := range orig {
					if pt.Spec.Kind != KindRetention {
						pt.Spec.Records = max(int64(float64(n)*f), int64(pt.Spec.Producers), 1000)
					}
				}
			}
			notes = append(notes, fmt.Sprintf("every record count × %.3f (retention runs keep their durations): the seeds' sizes were estimated at %s, over the time budget of %s",
				f, est.Time.Round(time.Minute), lim.TimeBudget))
		}
	}
	return notes
}

// EstimateRun is the estimate of what Run would do with opts, after the
// full profile is fitted to opts.Limits. Nothing is started.
func EstimateRun(opts Options) (*Estimate, error) {
	plan, err := planRun(opts)
	if err != nil {
		return nil, err
	}
	var scaling []string
	if opts.Profile.Name == ProfileFull.Name {
		scaling = fitToHost(plan, opts.Limits)
	}
	e := estimatePlan(plan)
	e.Profile, e.Limits, e.Scaling = opts.Profile.Name, opts.Limits, scaling
	return e, nil
}

// Write writes the estimate for a person about to start the run.
func (e *Estimate) Write(w io.Writer) error {
	free := "unknown"
	if e.Limits.FreeDisk > 0 {
		free = fmtBytes(e.Limits.FreeDisk)
	}
	fmt.Fprintf(w, "estimate (%s profile): about %s, largest run %s on disk (%s free); %d points\n",
		e.Profile, e.Time.Round(time.Second), fmtBytes(e.PeakDisk), free, len(e.Points))
	byScenario := map[string]time.Duration{}
	var order []string
	for _, p := range e.Points {
		if _, ok := byScenario[p.Scenario]; !ok {
			order = append(order, p.Scenario)
		}
		byScenario[p.Scenario] += p.Time
	}
	for _, s := range order {
		fmt.Fprintf(w, "  %-34s %s\n", s, byScenario[s].Round(time.Second))
	}
	for _, s := range e.Scaling {
		fmt.Fprintf(w, "  scaled down: %s\n", s)
	}
	_, err := fmt.Fprintln(w, "  (assumes 400,000 records/s or 150 MB/s per client, whichever is lower; the report states any scaling)")
	return err
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(n)/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
