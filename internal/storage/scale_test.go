package storage

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStoredData measures what stored data costs the broker (issue
// #15 item 6): it fills partitions on the real file system with batches
// (16 KiB by default) up to each level of stored bytes and, at each level,
// measures 1 KiB appends round-robin over the partitions (CPU ns/op from
// getrusage, allocs/op) and the
// process's Go heap after a GC, RSS and open descriptors; at the end it
// closes the Manager cleanly and times OpenManager (start-up) on the full
// dirs. It uses only the exported API, so the file can be dropped into an
// older tree for an A/B run.
//
// By default it is a small run (100 partitions, 0 and 256 MB). The large
// run is opt-in:
//
//	SILKWORM_STORAGE_SCALE=1 go test -run '^$' -bench StoredData -benchtime 1x -timeout 60m -v ./internal/storage
//
// with SILKWORM_STORAGE_GB (levels, default "0,5,10,20"),
// SILKWORM_STORAGE_PARTITIONS (default 1000), SILKWORM_STORAGE_SEGMENT_MB
// (segment.bytes, default 1024), SILKWORM_STORAGE_FILL_KB (size of the
// fill batches, default 16) and SILKWORM_STORAGE_DIR (parent of the
// temporary dir, default the system's). Everything written is removed.
func BenchmarkStoredData(b *testing.B) {
	levels, parts, segMB := []float64{0, 0.25}, 100, 1024
	if os.Getenv("SILKWORM_STORAGE_SCALE") == "1" {
		levels, parts = []float64{0, 5, 10, 20}, 1000
	}
	if s := os.Getenv("SILKWORM_STORAGE_GB"); s != "" {
		levels = levels[:0]
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				b.Fatalf("SILKWORM_STORAGE_GB: %v", err)
			}
			levels = append(levels, v)
		}
	}
	if v, err := strconv.Atoi(os.Getenv("SILKWORM_STORAGE_PARTITIONS")); err == nil && v > 0 {
		parts = v
	}
	if v, err := strconv.Atoi(os.Getenv("SILKWORM_STORAGE_SEGMENT_MB")); err == nil && v > 0 {
		segMB = v
	}
	fillKB := 16
	if v, err := strconv.Atoi(os.Getenv("SILKWORM_STORAGE_FILL_KB")); err == nil && v > 0 {
		fillKB = v
	}
	dir, err := os.MkdirTemp(os.Getenv("SILKWORM_STORAGE_DIR"), "silkworm-stored-data-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := DefaultConfig()
	cfg.SegmentBytes = int64(segMB) << 20
	mcfg := DefaultManagerConfig(dir)
	mcfg.RetentionCheckIntervalMs, mcfg.CleanerEnable = 0, false
	configFor := func(string) Config { return cfg }
	m, err := OpenManager(mcfg, configFor)
	if err != nil {
		b.Fatal(err)
	}
	logs := make([]*Log, parts)
	for i := range logs {
		if logs[i], err = m.GetOrCreate("stored", int32(i), [16]byte{1}, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("partitions=%d segment.bytes=%dMiB fill batches %d KiB, appends 1 KiB; at start %s", parts, segMB, fillKB, procStats())
	var stored int64
	for _, gb := range levels {
		target := int64(gb * (1 << 30))
		start := time.Now()
		stored = fillLogs(b, logs, stored, target, fillKB)
		fill := time.Since(start)
		ns, allocs := measureAppends(b, logs, 20*parts)
		b.Logf("level=%gGB stored=%.2fGB fill=%.1fs append=%.0f CPU-ns/op allocs=%.1f/op %s",
			gb, float64(stored)/(1<<30), fill.Seconds(), ns, allocs, procStats())
		b.ReportMetric(ns, "append-cpu-ns/op")
		b.ReportMetric(allocs, "append-allocs/op")
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	closed := time.Since(start)
	runtime.GC()
	start = time.Now()
	m, err = OpenManager(mcfg, configFor)
	if err != nil {
		b.Fatal(err)
	}
	open := time.Since(start)
	b.Logf("clean close=%.2fs start-up (OpenManager, %d partitions, %.2fGB)=%.2fs after open: %s",
		closed.Seconds(), parts, float64(stored)/(1<<30), open.Seconds(), procStats())
	b.ReportMetric(open.Seconds(), "startup-s")
	ns, allocs := measureAppends(b, m.Logs(), 20*parts)
	b.Logf("after start-up: append=%.0f CPU-ns/op allocs=%.1f/op %s", ns, allocs, procStats())
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
}

// fillLogs appends batches of about batchKB KiB round-robin (two goroutines) until the
// logs hold target bytes; it returns the bytes stored.
func fillLogs(b *testing.B, logs []*Log, stored, target int64, batchKB int) int64 {
	b.Helper()
	if stored >= target {
		return stored
	}
	per := (target - stored) / int64(len(logs))
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := makeBatch(batchSpec{records: batchKB, valueSize: 1000})
			for i := w; i < len(logs); i += 2 {
				goal := logs[i].Size() + per
				for logs[i].Size() < goal {
					if _, err := logs[i].Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	var n int64
	for _, l := range logs {
		n += l.Size()
	}
	return n
}

// measureAppends appends n 1 KiB batches round-robin and returns the
// time and heap allocations per append.
func measureAppends(b *testing.B, logs []*Log, n int) (nsPerOp, allocsPerOp float64) {
	b.Helper()
	batch := makeBatch(batchSpec{records: 10, valueSize: 90})
	for _, l := range logs { // warm-up: the first append writes the leader epoch checkpoint
		if _, err := l.Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	start := time.Now()
	for i := range n {
		if _, err := logs[i%len(logs)].Append(batch, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	b.Logf("  %d appends: %.0f wall ns/op, %.0f CPU ns/op (user+sys of the process)", n,
		float64(d.Nanoseconds())/float64(n), float64(cpu.Nanoseconds())/float64(n))
	return float64(cpu.Nanoseconds()) / float64(n), float64(ms1.Mallocs-ms0.Mallocs) / float64(n)
}

// cpuTime is the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStats is the Go heap in use after a GC, the RSS and the open
// descriptors of this process.
func procStats() string {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := "?"
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range bytes.Split(st, []byte("\n")) {
			if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "VmRSS:" {
				if kb, err := strconv.Atoi(f[1]); err == nil {
					rss = fmt.Sprintf("%.0fMB", float64(kb)/1024)
				}
			}
		}
	}
	fds := "?"
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		fds = strconv.Itoa(len(ents))
	}
	return fmt.Sprintf("heap=%.1fMB rss=%s fds=%s", float64(ms.HeapInuse)/(1<<20), rss, fds)
}
