package lint

import (
	"fmt"
	"reflect"

	"github.com/eksdoctor/eksdoctor/cluster"
)

var duplicateObject = &Check{
	ID:       "duplicate-object",
	Title:    "The same object declared twice in one cluster",
	Family:   "input",
	Severity: Warning,
	Doc: Doc{
		What: "Two declarations of one cluster's configuration create the same Kubernetes object (same kind, namespace and name): two Terraform resources (`kubectl_manifest`, `kubernetes_manifest`) or Helm releases of one Terraform root, or two different documents of one manifest file (which `kubectl apply -f` always applies together). Manifests in different files are not compared, since overlays, variants (`app.yaml` beside `app.prod.yaml`), examples and kustomize patches are laid out that way, nor are identical documents (applying one twice changes nothing); declarations that exist only if a `count` or `for_each` not known before apply says so are not compared either. The finding is at the second declaration and names the first.",
		Why:  "Only one object can exist: whichever is applied last replaces the other, so the cluster runs a configuration nobody reviewed as such, and eksdoctor, like a reader, cannot tell which one will win. Two Terraform resources managing one object fight on every apply, and destroying either deletes the object the other still manages; Helm refuses to install a release whose objects another release owns (`rendered manifests contain a resource that already exists`).",
		Fix:  "Keep one declaration: delete or rename the other (a NodePool meant as a second pool needs its own name), or move alternatives into directories of their own.",
	},
	Run: runDuplicateObject,
}

func runDuplicateObject(p *Pass) {
	type first struct {
		o     *cluster.Object
		where string
	}
	seen := map[string]first{}
	for _, o := range p.Model.Objects {
		scope, ok := declarationScope(o)
		if !ok {
			continue
		}
		key := scope + "\x00" + o.Ref().String()
		f, dup := seen[key]
		if !dup {
			seen[key] = first{o, o.Origin.String()}
			continue
		}
		if f.o.Origin == o.Origin {
			continue // one declaration read twice (a document and its list)
		}
		if o.Manager == "kubectl" && reflect.DeepEqual(f.o.Data(), o.Data()) {
			continue // the same object twice: applying it again changes nothing
		}
		by := "documents of one manifest file"
		if o.Manager != "kubectl" {
			by = "resources of one Terraform configuration"
		}
		p.Report(Finding{
			Object:  o.Ref(),
			Origin:  o.Origin,
			Summary: fmt.Sprintf("%s is declared twice: here and at %s; whichever is applied last replaces the other", o.Ref(), f.where),
			Detail:  fmt.Sprintf("Both are %s, so both create %s in the same cluster. The first is %s; this one is %s.", by, o.Ref(), via(f.o), via(o)),
		})
	}
}

// declarationScope is what two declarations must share to create the same
// object for certain: the Terraform configuration (objects of resources and
// releases it manages), or the directory of plain manifests; false for what is
// not a declaration of the user's (read from a cluster, described from the
// knowledge base) or may not exist.
func declarationScope(o *cluster.Object) (string, bool) {
	if o.Conditional != "" || o.Origin.File == "" || o.Name == "" {
		return "", false
	}
	switch o.Manager {
	case "kubectl":
		return "file:" + o.Origin.File, true
	case "terraform", "helm":
		return "tf", true
	}
	return "", false
}

func via(o *cluster.Object) string {
	if o.Via != "" {
		return o.Via + " (" + o.Origin.String() + ")"
	}
	return o.Origin.String()
}
