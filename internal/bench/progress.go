package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// progress draws "[=====>    ] 12/80 runs  scenario label  ETA 3m20s" on
// one terminal line, redrawn every half second. On anything but a terminal
// it stays quiet. Safe for concurrent use: clients report records from
// their own goroutines.
type progress struct {
	w     io.Writer
	total int
	start time.Time
	stopc chan struct{}
	done  chan struct{}

	mu       sync.Mutex // guards the fields below
	finished int
	label    string
	units    int64 // records done in the current run
	expected int64 // records expected in the current run
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if w == nil || !isTerminal(w) {
		return p
	}
	p.stopc, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\033[K%s", p.line())
			}
		}
	}()
	return p
}

func (p *progress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	frac := float64(p.finished)
	if p.expected > 0 {
		frac += min(float64(p.units)/float64(p.expected), 1)
	}
	if p.total > 0 {
		frac /= float64(p.total)
	}
	const width = 24
	filled := int(frac * width)
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	elapsed := time.Since(p.start)
	eta := "?"
	if frac > 0.001 {
		eta = (time.Duration(float64(elapsed)/frac) - elapsed).Round(time.Second).String()
	}
	label := p.label
	if len(label) > 60 {
		label = label[:60]
	}
	return fmt.Sprintf("[%s] %d/%d runs  %s  elapsed %s  ETA %s", bar, p.finished, p.total, label, elapsed.Round(time.Second), eta)
}

func (p *progress) begin(label string) {
	p.mu.Lock()
	p.label, p.units, p.expected = label, 0, 0
	p.mu.Unlock()
}

// add counts k records of the current run, which expects expected.
func (p *progress) add(k, expected int64) {
	p.mu.Lock()
	p.units += k
	if expected > 0 {
		p.expected = expected
	}
	p.mu.Unlock()
}

func (p *progress) end() {
	p.mu.Lock()
	p.finished++
	p.units, p.expected = 0, 0
	p.mu.Unlock()
}

func (p *progress) skip(n int) {
	p.mu.Lock()
	p.finished += n
	p.mu.Unlock()
}

func (p *progress) stop() {
	if p.stopc == nil {
		return
	}
	close(p.stopc)
	<-p.done
	p.stopc = nil
}
