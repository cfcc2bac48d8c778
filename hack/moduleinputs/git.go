package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// repo reads a bare git directory through one git cat-file --batch process.
type repo struct {
	dir string
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
}

func openRepo(dir string) (*repo, error) {
	cmd := exec.Command("git", "--git-dir", dir, "cat-file", "--batch")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &repo{dir: dir, in: in, out: bufio.NewReader(out), cmd: cmd}, nil
}

func (r *repo) close() {
	r.in.Close()
	r.cmd.Wait()
}

// show returns the contents of REV:PATH; ok is false when it does not exist.
func (r *repo) show(rev, path string) ([]byte, bool, error) {
	if _, err := fmt.Fprintf(r.in, "%s:%s\n", rev, path); err != nil {
		return nil, false, err
	}
	head, err := r.out.ReadString('\n')
	if err != nil {
		return nil, false, err
	}
	f := strings.Fields(head)
	if len(f) == 2 && f[1] == "missing" {
		return nil, false, nil
	}
	if len(f) != 3 {
		return nil, false, fmt.Errorf("git cat-file: %q", head)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, false, err
	}
	buf := make([]byte, n+1)
	if _, err := io.ReadFull(r.out, buf); err != nil {
		return nil, false, err
	}
	return buf[:n], true, nil
}

func (r *repo) git(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", r.dir}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	return string(out), err
}

// tags returns the release tags vX.Y.Z with the commit each names.
func (r *repo) tags() (map[string]string, error) {
	out, err := r.git("for-each-ref", "--format=%(refname:short) %(objectname) %(*objectname)", "refs/tags")
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !releaseTag.MatchString(f[0]) {
			continue
		}
		commit := f[1]
		if len(f) == 3 {
			commit = f[2]
		}
		tags[f[0]] = commit
	}
	return tags, nil
}

// files lists the files of a tree.
func (r *repo) files(rev string) ([]string, error) {
	out, err := r.git("ls-tree", "-r", "--name-only", rev)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSpace(out), "\n"), nil
}
