// Package hostile generates the inputs a stranger's pull request could hold to
// make a CI scanner leak the runner's files or take it down: reads outside the
// scanned paths, symbolic links out of charts, YAML alias bombs, compression bombs,
// files that never end, templates that never stop, values that explode, sensitive
// values, and names full of control characters. Each case is written by a
// generator, not kept as a fixture; the test suite runs eksdoctor on every case and
// checks its budgets, and `eksdoctor-bench hostile` measures them.
//
// Every case is laid out as
//
//	DIR/repo/...     the paths eksdoctor is given (Case.Args names them)
//	DIR/outside/...  the runner's files: they hold Canary, which must never be printed
package hostile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Canary is what the files outside the scanned paths, sensitive values and the
// environment of the run hold: no output may contain it.
const Canary = "EKSDOCTOR-CANARY-5f2c9e"

// CanaryEnv is set to Canary in the environment of the scanned run, as a CI job's
// tokens are (filebase64("/proc/self/environ") reads them).
const CanaryEnv = "EKSDOCTOR_HOSTILE_TOKEN"

// Case is one hostile input.
type Case struct {
	Name string
	// What the case tries, for people reading the results.
	What string
	// Write lays the case out under dir (dir/repo and dir/outside).
	Write func(dir string) error
	// Args are the eksdoctor arguments, relative to dir (the run's working
	// directory).
	Args []string
	// Want are strings the text output must contain: the findings that say what
	// was refused and why.
	Want []string
	// Unprivileged runs the case as an unprivileged user (a directory without
	// read permission means nothing to root).
	Unprivileged bool
	// Exit is the exit code the run must end with; 0 means 0 or 1 (findings
	// or none), 2 a refusal (a usage or input error).
	Exit int
	// Formats are the output formats each run is made in (-o); text, json and
	// sarif when nil.
	Formats []string
}

// AllFormats are the findings report's formats.
var AllFormats = []string{"text", "compact", "json", "sarif", "junit", "github", "markdown", "html"}

// Outputs are the formats c is run in.
func (c Case) Outputs() []string {
	if c.Formats != nil {
		return c.Formats
	}
	return []string{"text", "json", "sarif"}
}

// Cases returns every case, in order.
func Cases() []Case {
	return []Case{
		fileFunctions(),
		chartSymlinks(),
		yamlAliasBombs(),
		valuesAliasBomb(),
		gzipBomb(),
		endlessFiles(),
		hugeManifest(),
		manyDocuments(),
		helmLoops(),
		helmNestedLoops(),
		helmRecursion(),
		hclExpansion(),
		hclStringGrowth(),
		sensitiveValues(),
		sensitivePlan(),
		controlCharacters(),
		unreadableDirectory(),
		reportLinks(),
		fixThroughLinks(),
		configEndless(),
		baselineEndless(),
		configOutside(),
		kustomizeFanOut(),
		deepDirectories(),
		snapshotPendingFlood(),
		snapshotPendingPlain(),
		printedCommands(),
	}
}

// files writes name → content under dir; a content starting with "->" makes a
// symbolic link to the rest.
func files(dir string, fs map[string]string) error {
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// outside writes the runner's files that hold the canary.
func outside(dir string) error {
	return files(dir, map[string]string{
		"outside/secret.txt":         Canary + "\n",
		"outside/vals.yaml":          Canary + ": true\nnested:\n  " + Canary + "key: 1\n",
		"outside/manifests/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + strings.ToLower(Canary) + "\nspec:\n  containers: [{name: c, image: x}]\n",
		"outside/mod/main.tf":        "resource \"kubectl_manifest\" \"x\" {\n  yaml_body = \"apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: " + strings.ToLower(Canary) + "\\n\"\n}\n",
		"outside/chart/Chart.yaml":   "apiVersion: v2\nname: " + strings.ToLower(Canary) + "\nversion: 1.0.0\n",
	})
}

func layout(fs map[string]string) func(dir string) error {
	return func(dir string) error {
		if err := outside(dir); err != nil {
			return err
		}
		return files(dir, fs)
	}
}

// manifest wraps a name into a Deployment in a kubectl_manifest, where a leaked
// value would be printed with every finding about the Deployment.
func deploymentNamed(resource, nameExpr string) string {
	return fmt.Sprintf(`resource "kubectl_manifest" %q {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: ${%s}
      namespace: default
    spec:
      selector: {matchLabels: {app: x}}
      template:
        metadata: {labels: {app: x}}
        spec:
          nodeSelector: {pool: none}
          containers: [{name: c, image: x}]
  YAML
}
`, resource, nameExpr)
}

func fileFunctions() Case {
	main := deploymentNamed("passwd", `file("/etc/passwd")`) +
		deploymentNamed("environ", `filebase64("/proc/self/environ")`) +
		deploymentNamed("hostname", `templatefile("../../../../../../../../etc/hostname", {})`) +
		deploymentNamed("secret", `file("${path.module}/../outside/secret.txt")`) +
		deploymentNamed("template", `templatefile("../outside/secret.txt", {})`) +
		deploymentNamed("fileset", `join(",", fileset("/", "etc/*"))`) +
		deploymentNamed("filesetout", `join(",", [for f in fileset("../outside", "*") : file("../outside/${f}")])`) +
		deploymentNamed("exists", `fileexists("../outside/secret.txt") ? "yes-${file("../outside/secret.txt")}" : "no"`) +
		deploymentNamed("link", `file("secret-link.txt")`) + `
data "kubectl_path_documents" "out" {
  pattern = "../outside/manifests/*.yaml"
}

resource "kubectl_manifest" "docs" {
  for_each  = toset(data.kubectl_path_documents.out.documents)
  yaml_body = each.value
}

resource "helm_release" "values" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = "1.0.0"
  values     = [file("../outside/vals.yaml")]
}

resource "helm_release" "chart" {
  name  = "outside-chart"
  chart = "../outside/chart"
}

module "outside" {
  source = "../outside/mod"
}
`
	return Case{
		Name: "file-functions",
		What: "Terraform file functions, kubectl_path_documents, values files, a local chart and a module read files outside the scanned directory",
		Write: layout(map[string]string{
			"repo/main.tf":          main,
			"repo/secret-link.txt":  "->../outside/secret.txt",
			"repo/values-link.yaml": "->../outside/vals.yaml",
		}),
		Args: []string{"check", "repo"},
		Want: []string{"input-unresolved", "lies outside the inputs", `file("/etc/passwd")`, `filebase64("/proc/self/environ")`},
	}
}

func chartSymlinks() Case {
	return Case{
		Name: "chart-symlinks",
		What: "a local chart whose template prints a file that is a link out of the chart, and a linked templates directory",
		Write: layout(map[string]string{
			"repo/charts/leak/Chart.yaml":            "apiVersion: v2\nname: leak\nversion: 1.0.0\n",
			"repo/charts/leak/files/secret.txt":      "->../../../../outside/secret.txt",
			"repo/charts/leak/files/abs.txt":         "->/etc/passwd",
			"repo/charts/leak/more":                  "->../../../outside",
			"repo/charts/leak/templates/leak.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  secret: {{ .Files.Get \"files/secret.txt\" | quote }}\n  passwd: {{ .Files.Get \"files/abs.txt\" | quote }}\n  more: {{ .Files.Get \"more/secret.txt\" | quote }}\n",
			"repo/charts/leak/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Files.Get \"files/secret.txt\" | trim | lower | default \"leak\" }}\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {pool: none}\n      containers: [{name: c, image: x}]\n",
			"repo/main.tf":                           "resource \"helm_release\" \"leak\" {\n  name  = \"leak\"\n  chart = \"./charts/leak\"\n}\n",
		}),
		Args: []string{"check", "repo"},
		Want: []string{"links outside the inputs"},
	}
}

// aliasBomb is a YAML document of a few hundred bytes whose aliases expand to
// 10^levels nodes.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func yamlAliasBombs() Case {
	bomb := aliasBomb(9)
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n" + strings.ReplaceAll("data:\n"+indent(bomb), "\n", "\n") + "\n"
	return Case{
		Name: "yaml-alias-bombs",
		What: "YAML alias bombs (10^9 nodes in about 450 bytes) as a manifest, through yamldecode and as helm_release values",
		Write: layout(map[string]string{
			"repo/bomb.yaml":        manifest,
			"repo/values/bomb.yaml": bomb,
			"repo/main.tf": `locals {
  decoded = yamldecode(file("${path.module}/values/bomb.yaml"))
}

resource "kubernetes_manifest" "cm" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "decoded", namespace = "default" }
    data       = { count = length(local.decoded) }
  }
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = "1.0.0"
  values     = [file("${path.module}/values/bomb.yaml")]
}
`,
		}),
		Args: []string{"check", "repo"},
		Want: []string{"YAML aliases expand the document beyond"},
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func valuesAliasBomb() Case {
	return Case{
		Name: "values-alias-bomb",
		What: "a YAML alias bomb given as a values file (-f) for a local chart",
		Write: layout(map[string]string{
			"repo/chart/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 1.0.0\n",
			"repo/chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  n: {{ len .Values | quote }}\n",
			"repo/bomb-values.yaml":        aliasBomb(9),
		}),
		Args: []string{"check", "--chart", "repo/chart", "-f", "repo/bomb-values.yaml"},
		Want: []string{"YAML aliases expand the document beyond"},
	}
}

func gzipBomb() Case {
	return Case{
		Name: "gzip-bomb",
		What: "a 2 MB gzip snapshot that expands to 4.6 GB",
		Write: func(dir string) error {
			if err := outside(dir); err != nil {
				return err
			}
			p := filepath.Join(dir, "repo", "snapshot.json.gz")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write([]byte(`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [`))
			chunk := bytes.Repeat([]byte(" "), 1<<20)
			for i := 0; i < 4600; i++ {
				zw.Write(chunk)
			}
			zw.Write([]byte("]}"))
			zw.Close()
			return os.WriteFile(p, buf.Bytes(), 0o644)
		},
		Args: []string{"check", "repo"},
		Want: []string{"expands beyond"},
	}
}

func endlessFiles() Case {
	return Case{
		Name: "endless-files",
		What: "a manifest that is a link to /dev/zero, a FIFO named like a manifest, and a link to a device inside the tree",
		Write: func(dir string) error {
			if err := layout(map[string]string{
				"repo/x.yaml":    "->/dev/zero",
				"repo/ok.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
				"repo/rand.yaml": "->/dev/urandom",
			})(dir); err != nil {
				return err
			}
			return syscall.Mkfifo(filepath.Join(dir, "repo", "f.yaml"), 0o644)
		},
		Args: []string{"check", "repo"},
		Want: []string{"f.yaml", "not a regular file", "x.yaml"},
	}
}

func hugeManifest() Case {
	return Case{
		Name: "huge-manifest",
		What: "a 200 MB manifest",
		Write: func(dir string) error {
			if err := outside(dir); err != nil {
				return err
			}
			p := filepath.Join(dir, "repo", "huge.yaml")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			doc := []byte("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: " + strings.Repeat("v", 1000) + "\n")
			for n := 0; n < 200<<20; n += len(doc) {
				if _, err := f.Write(doc); err != nil {
					return err
				}
			}
			return nil
		},
		Args: []string{"check", "repo"},
		Want: []string{"huge.yaml is larger than"},
	}
}

// bigFile writes a file of about size bytes: head, then unit repeated, then tail.
func bigFile(p string, size int, head, unit, tail string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	n := (size - len(head) - len(tail)) / len(unit)
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(head)
	for i := 0; i < n; i++ {
		b.WriteString(unit)
	}
	b.WriteString(tail)
	return os.WriteFile(p, b.Bytes(), 0o644)
}

func manyDocuments() Case {
	const size = 31 << 20 // just under the size limit
	return Case{
		Name: "many-documents",
		What: "files just under the size limit that hold a million tiny documents, only separators, a List of half a million items, and nesting 100,000 deep",
		Write: func(dir string) error {
			if err := outside(dir); err != nil {
				return err
			}
			repo := filepath.Join(dir, "repo")
			for _, f := range []struct{ name, head, unit, tail string }{
				{"tiny.yaml", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n", ""},
				{"separators.yaml", "", "---\n", ""},
				{"list.json", `{"apiVersion": "v1", "kind": "List", "items": [`, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},`, `{}]}`},
			} {
				if err := bigFile(filepath.Join(repo, f.name), size, f.head, f.unit, f.tail); err != nil {
					return err
				}
			}
			deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
			return files(dir, map[string]string{
				"repo/deep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: " + deep + "\n",
				"repo/deep.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}, "data": ` + deep + "}\n",
				"repo/ok.yaml":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: still-analysed\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {pool: none}\n      containers: [{name: c, image: x}]\n",
			})
		},
		Args: []string{"check", "repo"},
		Want: []string{"more than 20000 documents", "more than about 2000000 values", "still-analysed", "deep.yaml", "deep.json"},
	}
}

func chartCase(name, what, template string, want ...string) Case {
	return Case{
		Name: name,
		What: what,
		Write: layout(map[string]string{
			"repo/chart/Chart.yaml":        "apiVersion: v2\nname: loop\nversion: 1.0.0\n",
			"repo/chart/templates/cm.yaml": template,
			"repo/chart/templates/ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
			"repo/main.tf":                 "resource \"helm_release\" \"loop\" {\n  name  = \"loop\"\n  chart = \"./chart\"\n}\n",
			"repo/workloads/deploy.yaml":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: still-analysed\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {pool: none}\n      containers: [{name: c, image: x}]\n",
		}),
		Args: []string{"check", "repo"},
		Want: append([]string{"still-analysed"}, want...),
	}
}

func helmLoops() Case {
	return chartCase("helm-until", "a template ranging over until 2000000000 (Helm runs out of memory)",
		"{{- range $i := until 2000000000 }}\n{{ $i }}\n{{- end }}\n", "not rendered")
}

func helmNestedLoops() Case {
	return chartCase("helm-nested-loops", "nested loops that never end",
		"{{- range $a := until 100000 }}{{- range $b := until 100000 }}{{- range $c := until 100000 }}{{ end }}{{ end }}{{ end }}\n", "not rendered within")
}

func helmRecursion() Case {
	return chartCase("helm-recursion", "include and tpl recursion, whose errors repeat the include chain",
		"{{- define \"r\" }}{{ include \"r\" . }}{{ end }}\n{{- define \"t\" }}{{ tpl \"{{ include \\\"t\\\" . }}\" . }}{{ end }}\n{{ include \"r\" . }}\n", "does not render")
}

func hclExpansion() Case {
	var b strings.Builder
	b.WriteString("locals {\n  l0 = [\"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  l%d = [local.l%d, local.l%d, local.l%d, local.l%d, local.l%d, local.l%d, local.l%d, local.l%d, local.l%d, local.l%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("}\n\n")
	b.WriteString(deploymentNamed("json", `substr(jsonencode(local.l9), 0, 10)`))
	b.WriteString(deploymentNamed("flat", `length(flatten(local.l9))`))
	return Case{
		Name:  "hcl-expansion",
		What:  "jsonencode and flatten of a nested list with 10^10 leaves built from ten locals",
		Write: layout(map[string]string{"repo/main.tf": b.String()}),
		Args:  []string{"check", "repo"},
		Want:  []string{"is larger than"},
	}
}

func hclStringGrowth() Case {
	main := `locals {
  s0 = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
  s1 = join(local.s0, [for i in range(1000) : local.s0])
  s2 = join(local.s1, [for i in range(1000) : local.s1])
  s3 = indent(100000000, join("\n", [for i in range(1000) : "x"]))
  s4 = replace(local.s1, "x", local.s1)
  s5 = format("%0999999999d", 1)
  s6 = formatlist(local.s1, range(50000))
}
` + deploymentNamed("grow", `substr(join(",", [local.s2, local.s3, local.s4, local.s5, join("", local.s6)]), 0, 5)`)
	return Case{
		Name:  "hcl-string-growth",
		What:  "strings that grow beyond any file: join, indent, replace, format and formatlist multiplying their inputs",
		Write: layout(map[string]string{"repo/main.tf": main}),
		Args:  []string{"check", "repo"},
		Want:  []string{"larger than"},
	}
}

func sensitiveValues() Case {
	main := `variable "token" {
  type      = string
  sensitive = true
  default   = "` + Canary + `"
}

output "token" {
  value     = var.token
  sensitive = true
}

resource "kubectl_manifest" "pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: ${var.token}
    spec:
      template:
        metadata:
          labels:
            secret: ${sensitive("` + Canary + `")}
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: ${var.token}}
          requirements:
          - {key: team, operator: In, values: ["${var.token}"]}
  YAML
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = "1.0.0"
  set_sensitive {
    name  = "settings.interruptionQueue"
    value = "` + Canary + `"
  }
  set {
    name  = "settings.clusterName"
    value = var.token
  }
}
`
	return Case{
		Name:  "sensitive-values",
		What:  "sensitive variables, outputs, sensitive() and set_sensitive placed where findings print them",
		Write: layout(map[string]string{"repo/main.tf": main, "repo/terraform.tfvars": "token = \"" + Canary + "\"\n"}),
		Args:  []string{"check", "repo"},
		Want:  []string{"(sensitive)"},
	}
}

func sensitivePlan() Case {
	plan := `{
  "format_version": "1.2",
  "terraform_version": "1.9.0",
  "planned_values": {"root_module": {"resources": [
    {"address": "kubernetes_manifest.pool", "mode": "managed", "type": "kubernetes_manifest", "name": "pool",
     "values": {"manifest": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "pool"},
        "spec": {"template": {"metadata": {"labels": {"secret": "` + Canary + `"}},
          "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "` + Canary + `"},
                   "requirements": [{"key": "team", "operator": "In", "values": ["` + Canary + `"]}]}}}}},
     "sensitive_values": {"manifest": {"spec": {"template": {"metadata": {"labels": {"secret": true}},
        "spec": {"nodeClassRef": {"name": true}, "requirements": [{"values": [true]}]}}}}}}
  ]}},
  "configuration": {"root_module": {"resources": [
    {"address": "kubernetes_manifest.pool", "mode": "managed", "type": "kubernetes_manifest", "name": "pool", "expressions": {}}
  ]}}
}
`
	return Case{
		Name:  "sensitive-plan",
		What:  "plan JSON whose sensitive_values mark values deep inside a manifest",
		Write: layout(map[string]string{"repo/plan.json": plan}),
		Args:  []string{"check", "repo/plan.json"},
		Want:  []string{"NodePool/pool"},
	}
}

func controlCharacters() Case {
	evil := `\n::error file=main.tf,line=1::pwned\n::add-mask::x\u001b[2J\u001b]0;title\u0007\u202eevil\u2066ad\u200bm\u200di\u2060n\ufeff\u2069`
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: "web` + evil + `"
  namespace: "ns` + evil + `"
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      nodeSelector: {"pool` + evil + `": "none` + evil + `"}
      tolerations: [{key: "k` + evil + `", operator: Exists}]
      containers: [{name: c, image: x}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: "pool` + evil + `"
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: "x` + evil + `"}
      requirements: [{key: "team", operator: In, values: ["a` + evil + `"]}]
      kubelet: {maxPods: 1}
`
	main := `resource "kubectl_manifest" "evil" {
  yaml_body = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"p\\n::error::x\"\nspec:\n  nodeSelector: {a: b}\n  containers: [{name: c, image: x}]\n"
}
`
	return Case{
		Name: "control-characters",
		What: "names, labels and values with newlines, GitHub workflow commands, ANSI escapes, bidirectional overrides and isolates, and zero-width characters, in every format",
		Write: layout(map[string]string{
			"repo/evil.yaml":                 manifest,
			"repo/main.tf":                   main,
			"repo/::error file=x::name.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  nodeSelector: {a: b}\n  containers: [{name: c, image: x}]\n",
		}),
		Args:    []string{"check", "repo"},
		Want:    []string{`\n`, `\x1b`, `\u202e`, `\u200b`, `\u2066`},
		Formats: AllFormats,
	}
}

func unreadableDirectory() Case {
	return Case{
		Name: "unreadable-directory",
		What: "a subdirectory without read permission beside a readable one, and a file() of a file that does not exist",
		Write: func(dir string) error {
			if err := layout(map[string]string{
				"repo/locked/secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: locked}\n",
				"repo/open/deploy.yaml":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: still-analysed\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {pool: none}\n      containers: [{name: c, image: x}]\n",
				"repo/tf/main.tf":         deploymentNamed("missing", `file("${path.module}/not-there.txt")`),
			})(dir); err != nil {
				return err
			}
			return os.Chmod(filepath.Join(dir, "repo", "locked"), 0)
		},
		Args:         []string{"check", "repo"},
		Want:         []string{"locked", "directory cannot be read", "still-analysed", "not-there.txt does not exist", `Deployment/default/${file(`},
		Unprivileged: true,
	}
}

// deployment is a Deployment no capacity takes, named name.
func deployment(name string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  namespace: default\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      nodeSelector: {pool: none}\n      containers: [{name: c, image: x}]\n"
}

func reportLinks() Case {
	return Case{
		Name: "report-links",
		What: "report names committed as links: to a file outside the checkout, dangling (to a file it would create), and through a linked directory",
		Write: layout(map[string]string{
			"repo/app.yaml":        deployment("still-analysed"),
			"repo/eksdoctor.sarif": "->../outside/secret.txt",
			"repo/report.json":     "->../outside/created.json",
			"repo/out":             "->../outside",
		}),
		Args: []string{"check", "repo", "--write", "sarif=repo/eksdoctor.sarif", "--write", "json=repo/report.json", "--write", "markdown=repo/out/summary.md"},
		Want: []string{"is a symbolic link", "does not write"},
		Exit: 2,
	}
}

func fixThroughLinks() Case {
	pool := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n      kubelet: {maxPods: 20}\n  disruption: {consolidateAfter: 1m}\n"
	return Case{
		Name: "fix-through-links",
		What: "eksdoctor fix of a NodePool whose file is a link (to a file inside the tree): nothing is written through it",
		Write: layout(map[string]string{
			"repo/real/pool.yaml": pool,
			"repo/pool.yaml":      "->real/pool.yaml",
		}),
		Args:    []string{"fix", "repo"},
		Formats: []string{"text"},
		Want:    []string{"is a symbolic link", "nothing was written"},
		Exit:    2,
	}
}

// endless is a case where a file eksdoctor reads for itself (its
// configuration, a baseline) is a link to /dev/zero, and one is a FIFO.
func configEndless() Case {
	return Case{
		Name: "config-endless",
		What: "a .eksdoctor.yaml found upward from the working directory that is a link to /dev/zero",
		Write: layout(map[string]string{
			".eksdoctor.yaml": "->/dev/zero",
			"repo/app.yaml":   deployment("x"),
		}),
		Args: []string{"check", "repo"},
		Want: []string{"configuration", ".eksdoctor.yaml"},
		Exit: 2,
	}
}

func baselineEndless() Case {
	return Case{
		Name: "baseline-endless",
		What: "a --baseline that is a link to /dev/zero, and a --config that is a FIFO",
		Write: func(dir string) error {
			if err := layout(map[string]string{
				"repo/base.json": "->/dev/zero",
				"repo/app.yaml":  deployment("x"),
			})(dir); err != nil {
				return err
			}
			return syscall.Mkfifo(filepath.Join(dir, "repo", "config.yaml"), 0o644)
		},
		Args: []string{"check", "repo", "--baseline", "repo/base.json"},
		Want: []string{"--baseline", "base.json"},
		Exit: 2,
	}
}

func configOutside() Case {
	return Case{
		Name: "config-outside",
		What: "a configuration and a baseline that are links out of the working directory, to the runner's files",
		Write: layout(map[string]string{
			"repo/.eksdoctor.yaml": "->../../outside/vals.yaml",
			"repo/app.yaml":        deployment("x"),
		}),
		Args: []string{"check", "repo/app.yaml", "--config", "repo/.eksdoctor.yaml"},
		Want: []string{"leads outside"},
		Exit: 2,
	}
}

func kustomizeFanOut() Case {
	fs := map[string]string{}
	const n = 18
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("../k%02d", i+1)
		fs[fmt.Sprintf("repo/k%02d/kustomization.yaml", i)] = fmt.Sprintf("resources: [%s, %s, %s]\nnamePrefix: p%d-\n", next, next, next, i)
	}
	fs[fmt.Sprintf("repo/k%02d/kustomization.yaml", n)] = "resources: [app.yaml, ../loop-a]\n"
	fs[fmt.Sprintf("repo/k%02d/app.yaml", n)] = deployment("still-analysed")
	fs["repo/loop-a/kustomization.yaml"] = "resources: [../loop-b]\n"
	fs["repo/loop-b/kustomization.yaml"] = "resources: [../loop-a]\nnamespace: x\n"
	return Case{
		Name:  "kustomize-fan-out",
		What:  "eighteen kustomizations (about 1 KB), each listing the next three times (3^18 expansions without a memo), ending in a cycle",
		Write: layout(fs),
		Args:  []string{"check", "repo"},
		Want:  []string{"still-analysed", "kustomization cycle"},
	}
}

func deepDirectories() Case {
	return Case{
		Name: "deep-directories",
		What: "2,000 nested directories (a path git checks out), a manifest at the top and one at the bottom",
		Write: func(dir string) error {
			if err := layout(map[string]string{"repo/top.yaml": deployment("still-analysed")})(dir); err != nil {
				return err
			}
			p := filepath.Join(dir, "repo")
			for i := 0; i < 2000; i++ {
				p = filepath.Join(p, "d")
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "deep.yaml"), []byte(deployment("too-deep")), 0o644)
		},
		Args: []string{"check", "repo"},
		Want: []string{"still-analysed", "directories below the path given"},
	}
}

// pendingPods writes a snapshot of n unscheduled pods with names of their own,
// owned by nothing: n workloads.
func pendingPods(w io.Writer, n int) {
	fmt.Fprint(w, `{"kind":"EKSDoctorSnapshot","version":1,"context":"x","server":"https://x","now":"2026-01-02T03:04:05Z","skipped":[],"objects":[`+"\n")
	x := uint32(2463534242)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		sep := ","
		if i == n-1 {
			sep = ""
		}
		fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%08x","namespace":"default"},"spec":{"nodeSelector":{"pool":"none"},"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Pending"}}%s`+"\n", x, sep)
	}
	fmt.Fprint(w, "]}\n")
}

func snapshotPendingFlood() Case {
	return Case{
		Name: "snapshot-pending-flood",
		What: "a 3 MB gzip snapshot, within the decompression limit, of 545,000 unscheduled pods",
		Write: func(dir string) error {
			if err := outside(dir); err != nil {
				return err
			}
			p := filepath.Join(dir, "repo", "snapshot.json.gz")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			pendingPods(zw, 545000)
			zw.Close()
			return os.WriteFile(p, buf.Bytes(), 0o644)
		},
		Args: []string{"check", "repo"},
		Want: []string{"out of proportion"},
	}
}

func snapshotPendingPlain() Case {
	return Case{
		Name: "snapshot-pending-plain",
		What: "a 60 MB snapshot of 300,000 unscheduled pods owned by nothing: 300,000 workloads",
		Write: func(dir string) error {
			if err := outside(dir); err != nil {
				return err
			}
			p := filepath.Join(dir, "repo", "snapshot.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			bw := bufio.NewWriter(f)
			pendingPods(bw, 300000)
			if err := bw.Flush(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		},
		Args: []string{"check", "repo"},
		Want: []string{"left out and not analysed", "--max-pending"},
	}
}

// Substituted is the file a printed command creates if running it runs
// what a name holds.
const Substituted = "PWNED"

func printedCommands() Case {
	evil := "$(touch " + Substituted + ")`touch " + Substituted + "`;touch " + Substituted
	pool := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: \"default" + evil + "\"\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: \"x" + evil + "\"}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: \"x" + evil + "\"\nspec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n"
	controller := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: karpenter\n  namespace: \"kube-system" + evil + "\"\n  labels: {app.kubernetes.io/name: karpenter}\nspec:\n  selector: {matchLabels: {app: k}}\n  template:\n    metadata: {labels: {app: k}}\n    spec:\n      containers: [{name: controller, image: public.ecr.aws/karpenter/controller:1.0.8}]\n"
	eksctl := "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  name: \"c" + evil + "\"\n  region: eu-west-1\nmanagedNodeGroups:\n- name: \"ng" + evil + "\"\n  instanceType: m5.large\nfargateProfiles:\n- name: \"fp" + evil + "\"\n  selectors: [{namespace: karpenter}]\n"
	return Case{
		Name: "printed-commands",
		What: "file, object, namespace, node group, profile and cluster names holding command substitutions, where the teardown plan prints the commands that delete them",
		Write: layout(map[string]string{
			"repo/manifests/karpenter" + evil + ".yaml": pool + "---\n" + controller,
			"repo/manifests/-rf.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			"repo/eksctl/cluster.yaml":                  eksctl,
			"repo/eksctl/karpenter" + evil + ".yaml":    pool,
		}),
		Args:    []string{"teardown", "repo"},
		Formats: []string{"text", "json"},
	}
}
