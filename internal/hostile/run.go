package hostile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Result is one run of eksdoctor on a case.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
	// Signaled is set when the run was killed (by the hang guard or a crash).
	Signaled bool
	Wall     time.Duration
	// MaxRSS is the peak resident memory of the run and everything it started,
	// in bytes.
	MaxRSS int64
}

// maxOutput bounds what a run may print before it is cut off.
const maxOutput = 16 << 20

// Run runs the eksdoctor binary with args in dir, with Canary in its environment,
// as the user nobody when unprivileged is set (through setpriv), and kills it after
// guard.
//
// Linux keeps, in a process's peak memory, the memory of the process it was forked
// from until it calls exec: eksdoctor started straight from a large test process
// would report that process's size. So eksdoctor is started by a small launcher,
// this same executable started afresh (see Launch), which measures it.
func Run(bin, dir string, args []string, unprivileged bool, guard time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	argv := append([]string{bin}, args...)
	if unprivileged && os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			return Result{}, fmt.Errorf("running as root, an unprivileged run needs setpriv: %w", err)
		}
		argv = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
	}
	self, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	usage, err := os.CreateTemp("", "rusage")
	if err != nil {
		return Result{}, err
	}
	usage.Close()
	defer os.Remove(usage.Name())
	cmd := exec.CommandContext(ctx, self, argv...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "NO_COLOR=1", CanaryEnv + "=" + Canary, launchEnv + "=" + usage.Name()}
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signaled = true
		}
		r.ExitCode = ps.ExitCode()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return r, err
	}
	data, _ := os.ReadFile(usage.Name())
	var signaled int
	fmt.Sscanf(string(data), "%d %d", &r.MaxRSS, &signaled)
	if signaled != 0 {
		r.Signaled = true
	}
	return r, nil
}

// launchEnv names the file a launcher writes its command's peak memory to.
const launchEnv = "EKSDOCTOR_HOSTILE_LAUNCH"

// Launch runs the command in os.Args[1:] when this process is a launcher started
// by Run, writes its peak memory (bytes) and whether a signal ended it to the file
// launchEnv names, and exits with its exit code. Otherwise it returns at once. A
// test binary or command that uses Run calls it first thing in main or TestMain.
func Launch() {
	out := os.Getenv(launchEnv)
	if out == "" {
		return
	}
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, launchEnv+"=") {
			env = append(env, e)
		}
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var maxrss int64
	signaled := 0
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			maxrss = ru.Maxrss << 10
		}
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signaled = 1
		}
	}
	os.WriteFile(out, []byte(fmt.Sprintf("%d %d\n", maxrss, signaled)), 0o644)
	if err != nil && cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(127)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

type capped struct{ strings.Builder }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); len(p) > room {
		if room > 0 {
			c.Builder.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Builder.Write(p)
}

// Prepare writes a case into a new directory anyone may read (an unprivileged run
// must reach it) and returns it.
func Prepare(c Case) (string, error) {
	dir, err := os.MkdirTemp("", "hostile-"+c.Name+"-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return dir, err
	}
	return dir, c.Write(dir)
}

// Cleanup removes a prepared case, restoring permissions taken away.
func Cleanup(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// Listing describes every entry under dir (name, type, size, modification time),
// to tell whether a run wrote anything.
func Listing(dir string) string {
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d == nil {
			return nil
		}
		info, ierr := d.Info()
		if ierr != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		size := info.Size()
		if info.Mode()&fs.ModeNamedPipe != 0 {
			size = 0
		}
		lines = append(lines, fmt.Sprintf("%s %v %d %d", rel, info.Mode().Type(), size, info.ModTime().UnixNano()))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
