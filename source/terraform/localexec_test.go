package terraform

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// files is an execReader over a map of paths.
func files(m map[string]string) execReader {
	return func(p string, recursive bool) ([]execFile, error) {
		if t, ok := m[p]; ok {
			return []execFile{{path: p, text: t}}, nil
		}
		var out []execFile
		for k, t := range m {
			if strings.HasPrefix(k, p+"/") && (recursive || !strings.Contains(k[len(p)+1:], "/")) {
				out = append(out, execFile{path: k, text: t})
			}
		}
		if len(out) == 0 {
			return nil, errors.New("no such file")
		}
		// In path order, as the loader's reader gives them.
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
		return out, nil
	}
}

const poolDoc = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\n"

func TestShellWords(t *testing.T) {
	t.Parallel()
	sc := parseShell(`FOO=bar kubectl apply -f "$FOO" -n 'k s' \
  --context=x; echo $UNSET "a\"b" $'c d' ${X.y} && ls # comment | kubectl`, map[string]string{"FOO": "file.yaml"})
	if len(sc.pipelines) != 3 {
		t.Fatalf("pipelines = %d, want 3", len(sc.pipelines))
	}
	var got []string
	for _, w := range sc.pipelines[0].cmds[0].words {
		got = append(got, w.text)
	}
	want := []string{"kubectl", "apply", "-f", "file.yaml", "-n", "k s", "--context=x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("words = %q, want %q", got, want)
	}
	echo := sc.pipelines[1].cmds[0].words
	if !echo[1].dyn || echo[2].text != `a"b` || echo[3].text != "c d" || echo[4].text != "${X.y}" || echo[4].dyn {
		t.Errorf("echo words = %+v", echo)
	}
	if len(sc.pipelines[2].cmds[0].words) != 1 {
		t.Errorf("the comment was read as words: %+v", sc.pipelines[2].cmds[0].words)
	}
}

func TestShellHeredocAndLines(t *testing.T) {
	t.Parallel()
	sc := parseShell("aws eks update-kubeconfig\ncat <<EOF | kubectl apply -f -\n"+poolDoc+"EOF\nkubectl apply -k x\n", nil)
	if len(sc.pipelines) != 3 {
		t.Fatalf("pipelines = %d, want 3", len(sc.pipelines))
	}
	cat := sc.pipelines[1].cmds[0]
	if cat.stdin == nil || *cat.stdin != poolDoc || cat.line != 1 {
		t.Errorf("heredoc = %v (line %d)", cat.stdin, cat.line)
	}
	if l := sc.pipelines[2].cmds[0].line; l != 7 {
		t.Errorf("line after the heredoc = %d, want 7", l)
	}
}

func TestInterpretApplies(t *testing.T) {
	t.Parallel()
	read := files(map[string]string{
		"/m/np.yaml":       poolDoc,
		"/m/dir/a.yaml":    strings.Replace(poolDoc, "default", "a", 1),
		"/m/dir/sub/b.yml": strings.Replace(poolDoc, "default", "b", 1),
	})
	cases := []struct {
		name  string
		cmd   string
		env   map[string]string
		files []string // files applied, "" for text of the command
		texts int
	}{
		{"file", "kubectl apply -f /m/np.yaml", nil, []string{"/m/np.yaml"}, 0},
		{"several -f", "kubectl --kubeconfig /tmp/k apply -f /m/np.yaml --filename=/m/dir", nil, []string{"/m/np.yaml", "/m/dir/a.yaml"}, 0},
		{"recursive", "kubectl apply -R -f /m/dir", nil, []string{"/m/dir/a.yaml", "/m/dir/sub/b.yml"}, 0},
		{"heredoc stdin", "kubectl apply -f - <<'EOF'\n" + poolDoc + "EOF\n", nil, []string{""}, 1},
		{"cat pipe", "cat <<EOF | kubectl apply -f -\n" + poolDoc + "EOF", nil, []string{""}, 1},
		{"echo env", `echo "$MANIFEST" | kubectl apply -f -`, map[string]string{"MANIFEST": poolDoc}, []string{""}, 1},
		{"echo single quotes", "echo '" + poolDoc + "' | kubectl create -f -", nil, []string{""}, 1},
		{"stdin file", "kubectl apply -f - < /m/np.yaml", nil, []string{""}, 1},
		{"bash -c", `bash -c "kubectl apply -f /m/np.yaml"`, nil, []string{"/m/np.yaml"}, 0},
		{"dry run", "kubectl apply --dry-run=client -f /m/np.yaml", nil, nil, 0},
		{"after &&", "aws eks update-kubeconfig --name x && kubectl apply -f /m/np.yaml", nil, []string{"/m/np.yaml"}, 0},
	}
	for _, c := range cases {
		res := interpretCommand(c.cmd, c.env, false, read)
		var got []string
		for _, a := range res.applies {
			got = append(got, a.file)
			if a.file == "" && !strings.Contains(a.text, "kind: NodePool") {
				t.Errorf("%s: text %q", c.name, a.text)
			}
		}
		if !reflect.DeepEqual(got, c.files) || len(res.unread) > 0 {
			t.Errorf("%s: applied %q, unread %q; want %q", c.name, got, res.unread, c.files)
		}
	}
}

func TestInterpretUnread(t *testing.T) {
	t.Parallel()
	read := files(map[string]string{"/m/np.yaml": poolDoc})
	for _, cmd := range []string{
		"kubectl apply -k ./overlay",
		`kubectl apply -f "$FILE"`,
		"for f in a b; do kubectl apply -f $f; done",
		"if true; then kubectl apply -f /m/np.yaml; fi",
		"./install.sh",
		"bash scripts/apply.sh",
		"envsubst < /m/np.yaml | kubectl apply -f -",
		"kubectl apply -f https://example.com/x.yaml",
		"ls | xargs kubectl apply -f",
		"helm install karpenter $CHART",
		"$KUBECTL apply -f /m/np.yaml",
	} {
		res := interpretCommand(cmd, nil, false, read)
		if len(res.unread) == 0 || len(res.applies) > 0 || len(res.releases) > 0 {
			t.Errorf("%q: unread %q, applies %d, releases %d; want it unread and nothing applied", cmd, res.unread, len(res.applies), len(res.releases))
		}
	}
	// Commands that apply nothing are not reported.
	for _, cmd := range []string{"sleep 10", "aws eks update-kubeconfig --name x", "kubectl patch installation default -p '{}'", "kubectl get pods | xargs echo"} {
		if res := interpretCommand(cmd, nil, false, read); len(res.unread) > 0 || len(res.applies) > 0 {
			t.Errorf("%q: unread %q, applies %d; want nothing", cmd, res.unread, len(res.applies))
		}
	}
}

func TestInterpretHelm(t *testing.T) {
	t.Parallel()
	read := files(map[string]string{"/m/values.yaml": "replicas: 1\n"})
	res := interpretCommand(`helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.1.1 -n kube-system --create-namespace --set settings.clusterName=demo,replicas=2 --set-string a=1 -f /m/values.yaml --wait`, nil, false, read)
	if len(res.releases) != 1 {
		t.Fatalf("releases = %+v, unread %q", res.releases, res.unread)
	}
	r := res.releases[0]
	if r.name != "karpenter" || r.chart != "karpenter" || r.repo != "oci://public.ecr.aws/karpenter" || r.version != "1.1.1" || r.namespace != "kube-system" {
		t.Errorf("release = %+v", r)
	}
	if len(r.sets) != 3 || r.sets[1].name != "replicas" || r.sets[1].value != "2" || !r.sets[2].str || len(r.values) != 1 {
		t.Errorf("values = %+v %+v", r.sets, r.values)
	}
	res = interpretCommand("helm install lbc eks/aws-load-balancer-controller -n kube-system", nil, false, nil)
	if len(res.releases) != 1 || res.releases[0].chart != "aws-load-balancer-controller" || res.releases[0].repo != "eks" {
		t.Errorf("repo/chart: %+v", res.releases)
	}
	// At destroy time, install does nothing and uninstall is read.
	res = interpretCommand("helm uninstall karpenter -n kube-system; helm install x y", nil, true, nil)
	if !reflect.DeepEqual(res.destroy.Uninstalls, []string{"karpenter"}) || len(res.releases) > 0 {
		t.Errorf("destroy: %+v", res)
	}
}

func TestInterpretDeletes(t *testing.T) {
	t.Parallel()
	read := files(map[string]string{"/m/np.yaml": poolDoc + "---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: c\n"})
	cases := []struct {
		cmd   string
		want  []cluster.CommandDelete
		waits []string
	}{
		{"kubectl delete nodepool default", []cluster.CommandDelete{{Kind: "NodePool", Names: []string{"default"}, Wait: true}}, nil},
		{"kubectl delete nodepools.karpenter.sh --all --wait=false", []cluster.CommandDelete{{Kind: "NodePool", All: true}}, nil},
		{"kubectl delete nodepool/a ec2nodeclass/b --cascade=foreground", []cluster.CommandDelete{{Kind: "NodePool", Names: []string{"a"}, Wait: true, Foreground: true}, {Kind: "EC2NodeClass", Names: []string{"b"}, Wait: true, Foreground: true}}, nil},
		{"kubectl delete -f /m/np.yaml --timeout=5m", []cluster.CommandDelete{{Kind: "NodePool", Names: []string{"default"}, Wait: true}, {Kind: "EC2NodeClass", Names: []string{"c"}, Wait: true}}, nil},
		{"kubectl delete nodepools,ec2nodeclasses -l team=a && kubectl wait --for=delete nodeclaims --all", []cluster.CommandDelete{{Kind: "NodePool", All: true, Wait: true}, {Kind: "EC2NodeClass", All: true, Wait: true}}, []string{"NodeClaim"}},
		{`kubectl delete nodepool "$NAME"`, []cluster.CommandDelete{{Kind: "NodePool", All: true, Wait: true}}, nil},
	}
	for _, c := range cases {
		res := interpretCommand(c.cmd, nil, true, read)
		if !reflect.DeepEqual(res.destroy.Deletes, c.want) || !reflect.DeepEqual(res.destroy.WaitsFor, c.waits) {
			t.Errorf("%q:\n got %+v waits %v\nwant %+v waits %v", c.cmd, res.destroy.Deletes, res.destroy.WaitsFor, c.want, c.waits)
		}
	}
	// At create time, deletes are not what the command applies.
	if res := interpretCommand("kubectl delete nodepool default", nil, false, read); len(res.destroy.Deletes) > 0 {
		t.Errorf("create-time delete read as a destroy: %+v", res.destroy)
	}
}

func TestInterpretHostile(t *testing.T) {
	t.Parallel()
	huge := "cat <<EOF | kubectl apply -f -\n" + strings.Repeat("a: b\n", 250_000) + "EOF\n"
	start := time.Now()
	res := interpretCommand(huge, nil, false, nil)
	if len(res.unread) == 0 {
		t.Errorf("a command over the size budget was read")
	}
	deep := strings.Repeat("$(", 100_000) + strings.Repeat(")", 100_000)
	interpretCommand(deep+" | kubectl apply -f -", nil, false, nil)
	interpretCommand(strings.Repeat("`", 10_001)+strings.Repeat("'\"${", 5000), nil, true, nil)
	interpretCommand("cat <<A <<B | kubectl apply -f -\nx\nA", nil, false, nil)
	if time.Since(start) > 5*time.Second {
		t.Errorf("hostile commands took %s", time.Since(start))
	}
	// Metacharacters inside names are data, never run.
	res = interpretCommand(`kubectl delete nodepool 'a;rm -rf ~' "b$(touch x)"`, nil, true, nil)
	if len(res.destroy.Deletes) != 1 || res.destroy.Deletes[0].Names[0] != "a;rm -rf ~" || !res.destroy.Deletes[0].All {
		t.Errorf("deletes = %+v", res.destroy.Deletes)
	}
}

// TestLocalExecLoad reads provisioners from HCL: self, path.module,
// environment, the manifest file and the destroy-time commands on the graph.
func TestLocalExecLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("np.yaml", poolDoc)
	write("main.tf", `
resource "null_resource" "apply" {
  triggers = { name = "np" }
  provisioner "local-exec" {
    command = "kubectl apply -f ${path.module}/${self.triggers.name}.yaml"
  }
  provisioner "local-exec" {
    environment = { MANIFEST = yamlencode({ apiVersion = "apps/v1", kind = "Deployment", metadata = { name = "web", namespace = "x" } }) }
    command     = "echo \"$MANIFEST\" | kubectl apply -f -"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "kubectl delete nodepool default && kubectl wait --for=delete nodeclaims --all"
  }
}

resource "terraform_data" "other" {
  provisioner "local-exec" {
    interpreter = ["python3", "-c"]
    command     = "import os; os.system('kubectl apply -f x.yaml')"
  }
}

resource "aws_iam_role" "not_read" {
  name = "x"
  provisioner "local-exec" {
    command = "kubectl apply -f np.yaml"
  }
}
`)
	m, err := Load(dir, Options{FS: inputfs.New(dir)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range m.Objects {
		got = append(got, o.Ref().String()+" "+o.Manager+" "+o.Via+" "+filepath.Base(o.Origin.File))
	}
	want := []string{"Deployment/x/web local-exec null_resource.apply main.tf", "NodePool/default local-exec null_resource.apply np.yaml"}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %q, want %q", got, want)
	}
	n := m.Terraform.Nodes["null_resource.apply"]
	if n == nil || len(n.Commands) != 1 || len(n.Commands[0].Deletes) != 1 || n.Commands[0].WaitsFor[0] != "NodeClaim" {
		t.Errorf("destroy commands = %+v", n)
	}
	unread := 0
	for _, p := range m.Problems {
		if p.Unresolved && strings.Contains(p.Message, "terraform_data.other") && strings.Contains(p.Message, "python3") {
			unread++
		}
	}
	if unread != 1 {
		t.Errorf("the python interpreter's command is not said unread: %+v", m.Problems)
	}
}

func FuzzLocalExecCommand(f *testing.F) {
	for _, s := range []string{
		"cat <<EOF | kubectl apply -f -\n" + poolDoc + "EOF\n",
		`echo "$M" | kubectl apply -f - && helm upgrade --install k oci://r/k --version 1 -n ns --set a=b,c={d,e}`,
		"kubectl delete nodepool a --wait=false; kubectl wait --for=delete nodeclaims --all",
		"for x in $(ls); do kubectl apply -f $x; done",
		"bash -c 'sh -c \"kubectl apply -f -\" <<< \"kind: NodePool\"'",
		"kubectl apply -f - <<-'E'\n\tkind: Pod\n\tE\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	read := files(map[string]string{"x": poolDoc})
	f.Fuzz(func(t *testing.T, cmd string, destroy bool) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			res := interpretCommand(cmd, map[string]string{"M": poolDoc}, destroy, read)
			if destroy && len(res.applies)+len(res.releases) > 0 {
				t.Errorf("a destroy-time command applied something")
			}
			if !destroy && len(res.destroy.Deletes)+len(res.destroy.Uninstalls) > 0 {
				t.Errorf("a create-time command deleted something")
			}
		}()
		select {
		case <-done:
		case <-time.After(hang):
			t.Fatalf("interpreting %q hangs", cmd)
		}
	})
}
