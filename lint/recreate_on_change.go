package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/write"
)

var recreateOnChange = &Check{
	ID:       "recreate-on-change",
	Title:    "An edit of a NodePool makes Terraform delete and recreate it",
	Family:   "F5",
	Severity: Warning,
	Doc: Doc{
		What: "A kubectl_manifest or kubernetes_manifest resource creating Karpenter NodePools or Provisioners whose instance keys are made from the documents' content: `for_each = toset(data.kubectl_path_documents.x.documents)` (or kubectl_file_documents, or any set of the documents' text), `for_each = { for d in ... : d => d }`, keys that are a hash or an encoding of the text (`md5(d)`, `sha256(d)`, `yamlencode(...)`), and keys that are the documents' positions in a list (`count = length(data.x.documents)`, or a condition choosing between it and 0, with `element(...documents, count.index)` or `...documents[count.index]`, `{ for i, d in ... : i => d }`). Keys made from the objects' names (`yamldecode(d).metadata.name`), literal map keys, file names and the data sources' `manifests` (keyed by each object's self link) do not change with the content and are not reported; nor is a resource with `apply_only = true`, whose destroy deletes nothing. `force_new = true`, which recreates the object on every change whatever its key, is reported by teardown-orphans.",
		Why:  "Terraform tracks each instance by its key. When the key is the document's text or its hash, any edit of the NodePool — a requirement, a label, a limit, a comment, a value rendered into the template — gives it a new key: the plan destroys the instance under the old key and creates one under the new key instead of updating it in place. Destroying it deletes the NodePool, and Karpenter drains and terminates every node it launched at the same time: all their pods are evicted at once and wait, pending, until the new NodePool's nodes come up. Keys that are positions do the same whenever a document is added or removed before it, or a file that sorts first appears. The destroy and the create are independent, so Terraform may run them in either order: when the create comes first it only updates the existing object, and the destroy then deletes it, leaving no NodePool at all until the next apply (which finds the object gone). Both instances name the same object, so no order is safe and `create_before_destroy` does not help.",
		Fix:  "Key the instances by what names the object: `for_each = { for doc in data.kubectl_path_documents.x.documents : \"${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}\" => doc }`, or one resource per object. The fix replaces the for_each expression only (a count gives way to for_each, and `element(..., count.index)` becomes `each.value`; where the documents counted are not the documents applied, as in the workaround that counts documents rendered with placeholder values, each key holds the document's index instead, and the condition of the count is kept), keeping everything else as written. The new keys move each instance to a new address once: run `terraform state mv` from each old address (`terraform state list` shows them) to its new one before applying, or accept one last replacement.",
	},
	Run: runRecreateOnChange,
}

func runRecreateOnChange(p *Pass) {
	g := p.Model.Terraform
	if g == nil {
		return
	}
	for _, addr := range g.Addresses() {
		r := g.Nodes[addr]
		if r.Keys == nil || r.Keys.From == "" {
			continue
		}
		if applyOnly, _ := r.Attrs["apply_only"].(bool); applyOnly {
			// Destroying an instance deletes nothing: the new key applies the
			// same object in place.
			continue
		}
		pools, classes := recreatedObjects(p.Model, addr)
		for _, pool := range pools {
			reportRecreate(p, r, pool, pools, classes)
		}
	}
}

// recreatedObjects are the NodePools and Provisioners, and the node classes,
// that the instances of a resource apply.
func recreatedObjects(m *cluster.Model, addr string) (pools, classes []cluster.ObjectRef) {
	seen := map[cluster.ObjectRef]bool{}
	for _, o := range m.Objects {
		if o.Manager != "terraform" || o.Via == "" || m.Terraform.ConfigAddress(o.Via) != addr || seen[o.Ref()] {
			continue
		}
		seen[o.Ref()] = true
		switch {
		case strings.HasPrefix(o.APIVersion, "karpenter.sh/") && (o.Kind == "NodePool" || o.Kind == "Provisioner"):
			pools = append(pools, o.Ref())
		case strings.HasPrefix(o.APIVersion, "karpenter.k8s.aws/") && (o.Kind == "EC2NodeClass" || o.Kind == "AWSNodeTemplate"):
			classes = append(classes, o.Ref())
		}
	}
	return pools, classes
}

func reportRecreate(p *Pass, r *cluster.Resource, pool cluster.ObjectRef, pools, classes []cluster.ObjectRef) {
	k := r.Keys
	var summary, why string
	switch k.From {
	case cluster.KeysPosition:
		summary = fmt.Sprintf("%s: %s = %s keys each instance by its document's position, so adding or removing a document before %s destroys and recreates it, and Karpenter drains all its nodes at once", r.Address, k.Arg, k.Expr, pool)
		why = fmt.Sprintf("the key of each instance is the index of its document in %s: a document added or removed before it (or a file that sorts first) shifts every later index, and the instance at an index then holds another object, which the provider can only replace", k.Documents)
	case cluster.KeysDigest:
		summary = fmt.Sprintf("%s: %s = %s keys each instance by a hash of its document, so every edit of %s destroys and recreates it, and Karpenter drains all its nodes at once", r.Address, k.Arg, k.Expr, pool)
		why = "the key of each instance is a hash or an encoding of its document's text, so any change to the text gives the object a new key"
	default:
		summary = fmt.Sprintf("%s: %s = %s keys each instance by its document's text, so every edit of %s destroys and recreates it, and Karpenter drains all its nodes at once", r.Address, k.Arg, k.Expr, pool)
		why = "the key of each instance is the whole text of its document, so any change to it (a requirement, a label, a limit, a comment, a value rendered into the template) gives the object a new key"
	}
	var d strings.Builder
	fmt.Fprintf(&d, "In %s = %s, %s.", k.Arg, k.Expr, why)
	fmt.Fprintf(&d, "\nterraform plan then shows %s destroyed under its old key and created under the new one instead of updated in place: the provider deletes %s, Karpenter drains and terminates every node it launched at the same time, and their pods are evicted at once and stay pending until the new %s's nodes are up. When the create runs before the destroy, the destroy deletes the object just applied, and it stays absent until the next apply.", r.Address, pool, pool.Kind)
	others := append(without(pools, pool), classes...)
	if len(others) > 0 {
		fmt.Fprintf(&d, "\nThe same resource recreates %s the same way.", refList(others))
	}
	d.WriteString("\nKeyed by each object's kind and name, an edit is an update in place.")
	f := Finding{Object: pool, Origin: k.Origin, Summary: summary, Detail: d.String()}
	if e, ok := write.RekeyByName(p.Model, r.Address); ok {
		f.Fix = &Fix{
			Summary: fmt.Sprintf("key %s by each object's kind and name; each instance moves to a new address once: terraform state mv it from its old address (terraform state list shows them) before applying, or accept one last replacement", r.Address),
			Edits:   []Edit{e},
		}
	}
	p.Report(f)
}

func without(refs []cluster.ObjectRef, drop cluster.ObjectRef) []cluster.ObjectRef {
	var out []cluster.ObjectRef
	for _, r := range refs {
		if r != drop {
			out = append(out, r)
		}
	}
	return out
}

func refList(refs []cluster.ObjectRef) string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.String())
	}
	return strings.Join(out, ", ")
}
