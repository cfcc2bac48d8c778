package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestActionManifest: action.yml is a composite action whose every input
// reaches the step that runs action/run.sh, under the name run.sh reads, and
// whose expressions name only inputs and steps it defines.
func TestActionManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Inputs      map[string]struct {
			Description string `json:"description"`
			Default     string `json:"default"`
		} `json:"inputs"`
		Outputs map[string]struct {
			Value string `json:"value"`
		} `json:"outputs"`
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				ID   string            `json:"id"`
				Uses string            `json:"uses"`
				Run  string            `json:"run"`
				If   string            `json:"if"`
				Env  map[string]string `json:"env"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	if action.Name == "" || action.Description == "" || action.Runs.Using != "composite" {
		t.Fatalf("not a composite action: %+v", action)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "action", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var runEnv map[string]string
	for _, s := range action.Runs.Steps {
		ids[s.ID] = true
		if strings.Contains(s.Run, "action/run.sh") {
			runEnv = s.Env
		}
		if s.Uses != "" && !regexp.MustCompile(`^[\w-]+/[\w-]+(/[\w-]+)?@v\d+$`).MatchString(s.Uses) {
			t.Errorf("step uses %q: not pinned to a major version", s.Uses)
		}
	}
	if runEnv == nil {
		t.Fatal("no step runs action/run.sh")
	}
	for name := range action.Inputs {
		if name == "upload-sarif" {
			continue // read by the upload step
		}
		v := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if runEnv[v] != "${{ inputs."+name+" }}" {
			t.Errorf("input %s does not reach run.sh as %s (env %v)", name, v, runEnv)
		}
		if !strings.Contains(string(script), v) {
			t.Errorf("run.sh never reads %s", v)
		}
	}
	expr := regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	ref := regexp.MustCompile(`\b(inputs|steps)\.([\w-]+)`)
	for _, m := range expr.FindAllStringSubmatch(string(raw), -1) {
		for _, r := range ref.FindAllStringSubmatch(m[1], -1) {
			if r[1] == "inputs" && !hasInput(action.Inputs, r[2]) || r[1] == "steps" && !ids[r[2]] {
				t.Errorf("expression %q names %s.%s, which the action does not define", m[0], r[1], r[2])
			}
		}
	}
	for name, o := range action.Outputs {
		if !strings.Contains(o.Value, "steps.run.outputs."+name) || !strings.Contains(string(script), name+"=") {
			t.Errorf("output %s is not written by run.sh: %q", name, o.Value)
		}
	}
}

func hasInput[V any](inputs map[string]V, name string) bool {
	_, ok := inputs[name]
	return ok
}

// TestPreCommitHook: .pre-commit-hooks.yaml declares a hook pre-commit can
// install (a language it knows, an entry the repository builds) that runs on
// the files eksdoctor reads and not on others.
func TestPreCommitHook(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		Entry         string `json:"entry"`
		Language      string `json:"language"`
		Files         string `json:"files"`
		PassFilenames *bool  `json:"pass_filenames"`
	}
	if err := yaml.UnmarshalStrict(raw, &hooks); err != nil {
		// pre-commit knows more keys than these; the ones used must decode.
		if err := yaml.Unmarshal(raw, &hooks); err != nil {
			t.Fatal(err)
		}
	}
	if len(hooks) != 1 {
		t.Fatalf("%d hooks, want 1", len(hooks))
	}
	h := hooks[0]
	if h.ID != "eksdoctor" || h.Name == "" || h.Language != "golang" {
		t.Errorf("hook %+v", h)
	}
	// language golang: pre-commit runs `go install ./...` in the repository,
	// which installs cmd/eksdoctor as "eksdoctor".
	if fields := strings.Fields(h.Entry); len(fields) < 2 || fields[0] != "eksdoctor" || fields[1] != "check" {
		t.Errorf("entry %q does not run eksdoctor check", h.Entry)
	}
	if _, err := os.Stat(filepath.Join("..", "eksdoctor", "main.go")); err != nil {
		t.Errorf("the entry's binary is not built from cmd/eksdoctor: %v", err)
	}
	if h.PassFilenames == nil || *h.PassFilenames {
		t.Error("eksdoctor analyses whole configurations: pass_filenames must be false")
	}
	files := regexp.MustCompile(h.Files)
	for _, f := range []string{"main.tf", "prod.tfvars", "x.tf.json", "values.yaml", "k8s/app.yml", "plan.json", "templates/np.yaml.tpl"} {
		if !files.MatchString(f) {
			t.Errorf("files %q does not match %s", h.Files, f)
		}
	}
	for _, f := range []string{"README.md", "main.go", "Makefile"} {
		if files.MatchString(f) {
			t.Errorf("files %q matches %s", h.Files, f)
		}
	}
}
