package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// reaperScript waits for a line on stdin. "done" means the servers were stopped
// normally; end of input means the test binary died without stopping them (a
// panicking test, the -timeout panic, SIGKILL), and the script kills them. It
// ignores the signals a terminal or go test sends to the test binary's group.
//
// Arguments: the process ids, "--", then the servers' temporary directories, which
// are removed once the processes are gone.
const reaperScript = `trap '' INT TERM HUP
if IFS= read -r line && [ "$line" = done ]; then exit 0; fi
pids=()
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do pids+=("$1"); shift; done
shift
for g in "${pids[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
sleep 5
for g in "${pids[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
rm -rf -- "$@"
exit 0`

// startReaper starts a process that outlives the test binary and kills the
// etcd and kube-apiserver processes it started (by their process ids, which envtest
// makes process-group leaders) if the binary dies without stopping them. The
// returned function tells it they were stopped and waits for it to exit.
func startReaper(assetsDir string, dirs []string, log io.Writer) (func(), error) {
	pids, err := childrenRunning(assetsDir)
	if err != nil {
		return nil, err
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("start reaper: found no etcd or kube-apiserver child process")
	}
	args := []string{"-c", reaperScript, "testenv-reaper"}
	var ids []string
	for _, p := range pids {
		ids = append(ids, strconv.Itoa(p))
	}
	args = append(args, ids...)
	args = append(args, "--")
	var removable []string
	for _, d := range dirs {
		// Only envtest's own temporary directories, never anything else.
		if d != "" && filepath.Dir(d) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(d), "k8s_test_framework_") {
			removable = append(removable, d)
		}
	}
	args = append(args, removable...)
	cmd := exec.Command("bash", args...)
	// Its own process group: a Ctrl-C aimed at go test must not kill it first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	fmt.Fprintf(log, "testenv: reaper %d watches server processes %s and directories %s\n", cmd.Process.Pid, strings.Join(ids, " "), strings.Join(removable, " "))
	return func() {
		_, _ = io.WriteString(in, "done\n")
		_ = in.Close()
		_ = cmd.Wait()
	}, nil
}

// childrenRunning returns the ids of this process's children whose executable is
// one of the test binaries in assetsDir.
func childrenRunning(assetsDir string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	want := map[string]bool{}
	for _, b := range binaries {
		p, err := filepath.EvalSymlinks(filepath.Join(assetsDir, b))
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", b, err)
		}
		want[p] = true
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) != self {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !want[exe] {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// parentOf reads the parent process id from /proc/<pid>/stat; -1 when unknown.
func parentOf(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// "pid (comm) state ppid ...": comm may contain spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}
