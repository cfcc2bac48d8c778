package live

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress keeps one status line up to date with the number of objects read, so a
// read of a large cluster visibly moves. It redraws at most a few times a second.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	n    int
	last time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) add(n int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last = now
		p.draw()
	}
}

func (p *progress) draw() {
	// \r and erase-line rewrite the same terminal line.
	fmt.Fprintf(p.w, "\r\033[Kreading cluster: %d objects", p.n)
}

// done prints the final count and ends the line.
func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	fmt.Fprintln(p.w)
}
