package perf

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// progressInterval is how often the terminal progress line is redrawn.
const progressInterval = time.Second

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// startProgress redraws render() on one line of w every progressInterval
// while w is a terminal, so long runs show they are alive; in a pipe or a
// file it does nothing. The returned stop erases the line and waits for the
// drawing goroutine to end.
func startProgress(w io.Writer, render func() string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\033[K%s", render())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
