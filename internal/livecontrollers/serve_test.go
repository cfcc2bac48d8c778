//go:build livecontrollers

package livecontrollers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/internal/cli"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// server is `eksdoctor serve` against a cluster, as a user bound to the
// chart's RBAC only, its metrics sampled every 250 ms.
type server struct {
	addr   string
	cancel context.CancelFunc
	done   chan int
	stderr *lockedBuffer

	mu      sync.Mutex
	samples []sample
}

type sample struct {
	at      time.Time
	metrics string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs serve in-process with the real clock, analysing every
// minute and on change.
func startServe(c *testenv.Cluster) (*server, error) {
	const user = "eksdoctor-serve"
	cfg, err := c.AddUser(user)
	if err != nil {
		return nil, err
	}
	rbac, err := testenv.ChartRBAC()
	if err != nil {
		return nil, err
	}
	if err := c.Grant(context.Background(), user, rbac); err != nil {
		return nil, err
	}
	kc, err := testenv.Kubeconfig(cfg, "serve")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "eksdoctor-serve-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{addr: addr, done: make(chan int, 1), stderr: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	env := cli.Env{Stdout: io.Discard, Stderr: s.stderr, Getenv: func(string) string { return "" },
		Getwd: func() (string, error) { return dir, nil }, IsTerminal: func(io.Writer) bool { return false }, Now: time.Now}
	go func() {
		s.done <- cli.Run(ctx, "eksdoctor", []string{"serve", "--kubeconfig", kubeconfig, "--listen", addr, "--interval", "1m"}, env)
		os.RemoveAll(dir)
	}()
	go s.sample(ctx)
	return s, nil
}

func (s *server) sample(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		resp, err := http.Get("http://" + s.addr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) == last {
			continue
		}
		last = string(b)
		s.mu.Lock()
		s.samples = append(s.samples, sample{at: time.Now(), metrics: last})
		s.mu.Unlock()
	}
}

// first returns when serve's metrics first held a line containing every
// part, at or after since; false when they have not yet.
func (s *server) first(since time.Time, parts ...string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sm := range s.samples {
		if sm.at.Before(since) {
			continue
		}
		for _, line := range strings.Split(sm.metrics, "\n") {
			all := true
			for _, p := range parts {
				if !strings.Contains(line, p) {
					all = false
					break
				}
			}
			if all {
				return sm.at, true
			}
		}
	}
	return time.Time{}, false
}

// latest returns the newest metrics.
func (s *server) latest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return ""
	}
	return s.samples[len(s.samples)-1].metrics
}

// stop ends serve and returns its exit code and what it wrote.
func (s *server) stop() (int, string) {
	s.cancel()
	select {
	case code := <-s.done:
		return code, s.stderr.String()
	case <-time.After(30 * time.Second):
		return -1, s.stderr.String() + "\n(serve did not stop within 30s)"
	}
}

func (s *server) String() string { return fmt.Sprintf("serve on %s", s.addr) }

// serveDelay is the longest serve may take to show a change the controllers
// made in its metrics.
const serveDelay = 5 * time.Second

// followed fails unless serve's metrics held a line with every part within
// serveDelay of the change (a fact the observer saw), and logs how long it took.
func (s *server) followed(t *testing.T, change fact, parts ...string) {
	t.Helper()
	deadline := change.Seen.Add(serveDelay + 5*time.Second)
	for time.Now().Before(deadline) {
		if _, ok := s.first(change.Seen, parts...); ok {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	at, ok := s.first(change.Seen, parts...)
	if !ok {
		t.Errorf("serve's metrics never showed %q after %s", strings.Join(parts, " "), change)
		return
	}
	took := at.Sub(change.Seen)
	t.Logf("serve showed %q %s after the controllers' change: %s", strings.Join(parts, " "), took.Round(10*time.Millisecond), change)
	if took > serveDelay {
		t.Errorf("serve took %s (more than %s) to show %q after %s", took.Round(10*time.Millisecond), serveDelay, strings.Join(parts, " "), change)
	}
}
