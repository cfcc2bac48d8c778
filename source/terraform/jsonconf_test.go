package terraform

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const cdktfJSON = `{
  "//": {
    "metadata": {"backend": "local"}
  },
  "locals": {
    "name": "demo"
  },
  "variable": {
    "region": {
      "type": "string",
      "default": "${not-a-template}"
    }
  },
  "module": {
    "eks": {
      "source": "terraform-aws-modules/eks/aws",
      "version": "~> 20.0",
      "cluster_name": "${local.name}",
      "eks_managed_node_groups": {
        "system": {
          "instance_types": ["m5.large"],
          "taints": {"a": {"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"}}
        }
      }
    }
  },
  "output": {
    "region": {
      "value": "${var.region}"
    }
  },
  "resource": {
    "helm_release": {
      "karpenter": {
        "name": "karpenter",
        "namespace": "kube-system",
        "chart": "karpenter",
        "values": ["settings:\n  clusterName: ${module.eks.cluster_name}\n"],
        "set": [
          {"name": "replicas", "value": "2"}
        ],
        "depends_on": ["module.eks"]
      }
    },
    "kubectl_manifest": {
      "np": {
        "yaml_body": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: \"${local.name}\"\n",
        "wait": true
      }
    }
  }
}
`

func TestJSONConfiguration(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{"cdk.tf.json": cdktfJSON, "provider.tf.json": `{"provider": {"aws": [{"region": "eu-west-1"}]}}`})
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Problems {
		t.Errorf("got problem %s: %s, want none", p.Origin, p.Message)
	}
	file := filepath.Join(dir, "cdk.tf.json")
	ng := nodeGroups(m)["system"]
	if diff := cmp.Diff([]corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}, ng.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	// Pretty-printed JSON (as CDK for Terraform writes it) keeps its lines.
	if got := m.NodeGroups[0].Origin; got != (cluster.Origin{File: file, Line: 20}) {
		t.Errorf("node group origin: got %s, want cdk.tf.json:20", got)
	}
	if m.Cluster.Name != "demo" {
		t.Errorf("cluster name: got %q, want demo", m.Cluster.Name)
	}
	rel := release(t, m, "helm_release.karpenter")
	want := map[string]any{"settings": map[string]any{"clusterName": "${module.eks.cluster_name}"}, "replicas": int64(2)}
	if diff := cmp.Diff(want, rel.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if rel.Origin.Line != 34 || !cmp.Equal(rel.DependsOn, []string{"module.eks"}) {
		t.Errorf("release: got origin %s depends_on %v, want line 34 and module.eks", rel.Origin, rel.DependsOn)
	}
	if got := rel.ValueOrigins["replicas"].Line; got != 40 {
		t.Errorf("set origin: got line %d, want 40", got)
	}
	np := object(t, m, "NodePool", "demo")
	if np.Via != "kubectl_manifest.np" || np.Origin.File != file {
		t.Errorf("NodePool: got via %q origin %s", np.Via, np.Origin)
	}
	if got := m.Terraform.Nodes["kubectl_manifest.np"].Attrs["wait"]; got != true {
		t.Errorf("wait: got %v, want true", got)
	}
	// A variable default is a literal in JSON syntax, not a template.
	l := newLoader(dir, Options{})
	cfg, _ := l.readModule(dir)
	mi := l.newModInst(cfg, "", "", ".", 0)
	l.rootVariables(mi)
	v, _ := mi.variable("region")
	if got := toGo(v, ""); got != "${not-a-template}" {
		t.Errorf("variable default: got %v, want the literal string", got)
	}
}

func TestJSONConfigurationErrors(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"bad.tf.json": "{\n  \"resource\": {\n    \"x\": [1,\n}\n",
		"ok.tf":       "resource \"aws_eks_cluster\" \"c\" {\n  name = \"ok\"\n}\n",
	})
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 1 || filepath.Base(m.Problems[0].Origin.File) != "bad.tf.json" || m.Problems[0].Origin.Line != 4 || !strings.Contains(m.Problems[0].Message, "JSON syntax error") {
		t.Errorf("problems: got %+v, want a JSON syntax error at bad.tf.json:4", m.Problems)
	}
	if m.Cluster.Name != "ok" {
		t.Errorf("cluster: got %q, want the one from ok.tf", m.Cluster.Name)
	}
}
