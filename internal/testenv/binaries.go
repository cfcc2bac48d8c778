package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// modulePath identifies the repository root while walking up from the test's
// working directory (go test runs each package in its own directory).
const modulePath = "github.com/eksdoctor/eksdoctor"

// binaries are the programs envtest runs; kubectl is not needed.
var binaries = []string{"kube-apiserver", "etcd"}

// AssetsDir returns the directory holding kube-apiserver and etcd. KUBEBUILDER_ASSETS
// wins when set; otherwise hack/testbin.sh builds the binaries (or finds them in its
// cache) and prints the directory. Build output goes to log.
func AssetsDir(log io.Writer) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if err := checkBinaries(dir, binaries...); err != nil {
			return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s: %w", dir, err)
		}
		return dir, nil
	}
	dir, err := buildBinaries(log)
	if err != nil {
		return "", err
	}
	if err := checkBinaries(dir, binaries...); err != nil {
		return "", fmt.Errorf("build test binaries: %w", err)
	}
	return dir, nil
}

// SchedulerPath returns the kube-scheduler the placement tests compare
// eksdoctor with: the one in KUBEBUILDER_ASSETS when that directory holds one
// (envtest's downloads do not), otherwise the one hack/testbin.sh builds into
// its cache beside kube-apiserver and etcd.
func SchedulerPath(log io.Writer) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" && checkBinaries(dir, "kube-scheduler") == nil {
		return filepath.Join(dir, "kube-scheduler"), nil
	}
	dir, err := buildBinaries(log)
	if err != nil {
		return "", err
	}
	if err := checkBinaries(dir, "kube-scheduler"); err != nil {
		return "", fmt.Errorf("build test binaries: %w", err)
	}
	return filepath.Join(dir, "kube-scheduler"), nil
}

// buildBinaries runs hack/testbin.sh (with args: "controllers" prepares the
// cluster with controllers), which builds what its cache lacks, and returns the
// directory it prints.
func buildBinaries(log io.Writer, args ...string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "testbin.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("find test binary builder: %w", err)
	}

	// go test runs packages in parallel; two of them building into the same cache
	// directory at once would overwrite each other's temporary files. The lock makes
	// the second wait for the first and then find the cache filled.
	unlock, err := lockCache(log)
	if err != nil {
		return "", err
	}
	defer unlock()

	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build test binaries with %s: %w", script, err)
	}
	dir := lastLine(out.String())
	if dir == "" {
		return "", fmt.Errorf("build test binaries: %s printed no directory", script)
	}
	return dir, nil
}

// binariesCached reports whether the script would find its cache filled, so Main
// can warn that a cold build is coming.
func binariesCached() bool {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return true
	}
	dir, err := defaultCacheDir()
	if err != nil {
		return false
	}
	return checkBinaries(dir, append([]string{"kube-scheduler"}, binaries...)...) == nil
}

// defaultCacheDir mirrors the cache location hack/testbin.sh uses with its default
// versions.
func defaultCacheDir() (string, error) {
	if d := os.Getenv("EKSDOCTOR_TESTBIN"); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	k8s, etcd := os.Getenv("K8S_VERSION"), os.Getenv("ETCD_VERSION")
	if k8s == "" {
		k8s = "1.37.1"
	}
	if etcd == "" {
		etcd = "3.7.3"
	}
	return filepath.Join(base, "eksdoctor", "testbin", "k8s-"+k8s+"-etcd-"+etcd), nil
}

func checkBinaries(dir string, names ...string) error {
	for _, b := range names {
		p := filepath.Join(dir, b)
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("missing %s: %w", b, err)
		}
		if st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not executable", p)
		}
	}
	return nil
}

// repoRoot walks up from the working directory to the go.mod of this module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(data, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod for " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" {
			return f[1] == path
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// lockPath is the file whose lock serialises builds of the test binaries.
func lockPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("lock test binary cache: %w", err)
	}
	dir = filepath.Join(dir, "eksdoctor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("lock test binary cache: %w", err)
	}
	return filepath.Join(dir, "testbin.lock"), nil
}
