package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestFullProfileFitsHost: the full profile keeps the seeds' sizes when
// the host has room and time, and scales them down, saying so, when not.
func TestFullProfileFitsHost(t *testing.T) {
	opts := DefaultOptions()
	opts.Profile = ProfileFull
	opts.Scenarios = loadShipped(t)

	opts.Limits = HostLimits{FreeDisk: 1 << 50}
	roomy, err := EstimateRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(roomy.Scaling) != 0 {
		t.Errorf("scaled with a petabyte free and no time budget: %v", roomy.Scaling)
	}
	for _, p := range roomy.Points {
		if p.Scenario == "producer-throughput" && p.Records != 50_000_000 {
			t.Errorf("producer-throughput at the seed's size has %d records", p.Records)
		}
	}
	if roomy.Time < 10*time.Hour {
		t.Errorf("the seeds' sizes estimated at %v; 50 million records × 10 repetitions alone take longer", roomy.Time)
	}

	opts.Limits = HostLimits{FreeDisk: 4 << 30, TimeBudget: 2 * time.Hour}
	tight, err := EstimateRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(tight.Scaling, "\n")
	if !strings.Contains(joined, "record-size record_size=102400") || !strings.Contains(joined, "time budget of 2h0m0s") {
		t.Errorf("scaling notes:\n%s", joined)
	}
	if tight.PeakDisk > 2<<30 {
		t.Errorf("largest run %s with 4 GiB free; at most half may be used", fmtBytes(tight.PeakDisk))
	}
	if tight.Time >= roomy.Time/2 {
		t.Errorf("scaled estimate %v vs %v unscaled", tight.Time, roomy.Time)
	}
	var out bytes.Buffer
	if err := tight.Write(&out); err != nil || !strings.Contains(out.String(), "estimate (full profile): about") || !strings.Contains(out.String(), "scaled down:") {
		t.Errorf("estimate text (%v):\n%s", err, out.String())
	}

	// The quick profile is never scaled.
	opts.Profile = ProfileQuick
	quick, err := EstimateRun(opts)
	if err != nil || len(quick.Scaling) != 0 {
		t.Errorf("quick profile scaled (%v): %v", err, quick.Scaling)
	}
}
