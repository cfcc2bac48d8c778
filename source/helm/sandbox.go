package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A local chart is a program: its templates can loop for as long as they like
// (`range until 2000000000`) and Go's template engine cannot be interrupted. So a
// local chart is rendered in a child process (this same executable, started with
// renderEnv set) that runs with a memory limit, a CPU limit and an empty
// environment, and is killed when its time is up. The parent gets the rendered
// documents, or an error that says which budget the chart exceeded.
//
// The knowledge base's own charts are trusted and rendered in process.

// Budgets of one local chart render.
const (
	renderTimeout   = 3 * time.Second
	renderMemory    = 256 << 20 // bytes of heap the child may map
	renderCPU       = 10        // seconds of CPU, a second guard behind the timeout
	maxRenderOutput = 32 << 20
	// maxRenderTotal bounds the time all local charts of one run may take.
	maxRenderTotal = 15 * time.Second
	// maxMessage bounds an error message taken from a template engine: recursion
	// errors repeat the include chain and run to hundreds of kilobytes.
	maxMessage = 400
)

const renderEnv = "EKSDOCTOR_HELM_RENDER_CHILD"

// renderChild serves one render request when this process was started as the
// render child; it never returns then. It runs from init so that every binary
// holding this package (the CLI, a test binary, a program using eksdoctor as a
// library) can render, without a main of its own knowing about it.
func init() {
	if os.Getenv(renderEnv) != "1" {
		return
	}
	os.Exit(serveRender(os.Stdin, os.Stdout))
}

type renderRequest struct {
	Files       []cluster.File `json:"files"`
	Values      map[string]any `json:"values"`
	Release     string         `json:"release"`
	Namespace   string         `json:"namespace"`
	KubeVersion string         `json:"kubeVersion"`
}

type renderResponse struct {
	Chart   string        `json:"chart"`
	Version string        `json:"version"`
	Docs    []renderedDoc `json:"docs"`
	Err     string        `json:"err,omitempty"`
	// Missing are the dependencies Chart.yaml declares that charts/ does not
	// hold ("karpenter 0.22.1 from https://charts.karpenter.sh").
	Missing []string `json:"missing,omitempty"`
}

func serveRender(in io.Reader, out io.Writer) int {
	limit(syscall.RLIMIT_DATA, renderMemory)
	limit(syscall.RLIMIT_CPU, renderCPU)
	var req renderRequest
	if err := json.NewDecoder(io.LimitReader(in, maxChartTotal*2)).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "render request:", err)
		return 3
	}
	resp := renderFiles(req)
	size := 0
	for _, d := range resp.Docs {
		size += len(d.Text)
	}
	if size > maxRenderOutput {
		resp = renderResponse{Chart: resp.Chart, Version: resp.Version, Err: fmt.Sprintf("the chart renders more than %d MiB", maxRenderOutput>>20)}
	}
	if err := json.NewEncoder(out).Encode(resp); err != nil {
		return 3
	}
	return 0
}

func limit(resource int, n uint64) {
	_ = syscall.Setrlimit(resource, &syscall.Rlimit{Cur: n, Max: n})
}

// renderFiles loads and renders a chart from its files, in the child.
func renderFiles(req renderRequest) (resp renderResponse) {
	bfs := make([]*loader.BufferedFile, len(req.Files))
	for i, f := range req.Files {
		bfs[i] = &loader.BufferedFile{Name: f.Name, Data: f.Data}
	}
	ch, err := loadFiles(bfs)
	if err != nil {
		return renderResponse{Err: "the chart could not be loaded: " + err.Error()}
	}
	resp.Chart, resp.Version = ch.Name(), ch.Metadata.Version
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if d != nil && !have[d.Name] {
			resp.Missing = append(resp.Missing, strings.TrimSpace(fmt.Sprintf("%s %s from %s", d.Name, d.Version, d.Repository)))
		}
	}
	r := &cluster.HelmRelease{Name: req.Release, Namespace: req.Namespace, Values: req.Values}
	docs, err := renderChart(ch, r, req.KubeVersion)
	if err != nil {
		resp.Err = err.Error()
		return resp
	}
	resp.Docs = docs
	return resp
}

func loadFiles(bfs []*loader.BufferedFile) (c *chartType, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = fmt.Errorf("loading chart failed: %v", rec)
		}
	}()
	c, err = loader.LoadFiles(bfs)
	if err == nil && (c.Metadata == nil || c.Metadata.Name == "") {
		err = errors.New("Chart.yaml is missing or names no chart")
	}
	return c, err
}

// errRender is a chart that could not be rendered within its budgets.
type errRender struct{ msg string }

func (e *errRender) Error() string { return e.msg }

// renderBudget is the time the local charts of one Expand may still take.
type renderBudget struct{ left time.Duration }

// renderIsolated renders a chart's files in the child process.
func renderIsolated(b *renderBudget, req renderRequest) (renderResponse, error) {
	if b.left <= 0 {
		return renderResponse{}, &errRender{fmt.Sprintf("not rendered: the local charts of this run have used their %s", maxRenderTotal)}
	}
	exe, err := os.Executable()
	if err != nil {
		return renderResponse{}, &errRender{"cannot start the renderer: " + err.Error()}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return renderResponse{}, &errRender{"cannot pass the chart to the renderer: " + err.Error()}
	}
	timeout := min(renderTimeout, b.left)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{renderEnv + "=1"}
	cmd.Stdin = bytes.NewReader(body)
	stdout := &capped{max: maxRenderOutput * 2}
	stderr := &capped{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	b.left -= time.Since(start)
	switch {
	case ctx.Err() != nil:
		return renderResponse{}, &errRender{fmt.Sprintf("not rendered within %s (a template loops too long)", timeout)}
	case err != nil:
		if strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "cannot allocate memory") {
			return renderResponse{}, &errRender{fmt.Sprintf("not rendered: it needs more than %d MiB of memory", renderMemory>>20)}
		}
		if stdout.over || stderr.over && stdout.Len() == 0 {
			return renderResponse{}, &errRender{fmt.Sprintf("not rendered: it renders more than %d MiB", maxRenderOutput>>20)}
		}
		return renderResponse{}, &errRender{"not rendered: the renderer stopped: " + clip(strings.TrimSpace(stderr.String()))}
	}
	var resp renderResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return renderResponse{}, &errRender{"not rendered: the renderer's answer is unreadable"}
	}
	return resp, nil
}

// capped is a buffer that keeps at most max bytes and remembers it overflowed.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// clip shortens an engine message to maxMessage bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d more bytes)", len(s)-cut)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
