package cluster

// ManagerCommand is the Manager of an object that a Terraform resource applies
// by running a command (a local-exec provisioner running kubectl apply): Via
// names the resource. Terraform does not track such an object: destroying the
// resource deletes it only if a destroy-time command does.
const ManagerCommand = "local-exec"

// ManagerEKS marks objects EKS itself creates in the cluster (Auto Mode's
// built-in NodePools and default NodeClass): they cannot be edited.
const ManagerEKS = "eks"

// Command is what the destroy-time commands of a Terraform resource (local-exec
// provisioners with when = destroy) remove from the cluster. terraform destroy
// runs them when it destroys the resource: after everything that depends on
// it, before everything it depends on.
type Command struct {
	// Origin is the provisioner's command; Text the command line read.
	Origin Origin
	Text   string
	// Deletes are the objects kubectl delete removes.
	Deletes []CommandDelete
	// WaitsFor are the kinds `kubectl wait --for=delete` waits to be gone
	// ("NodeClaim", "Node").
	WaitsFor []string
	// Uninstalls are the Helm releases helm uninstall removes.
	Uninstalls []string
	// Unread: part of the commands could not be read (a script, a loop, a
	// variable of the environment): they may delete more.
	Unread bool
}

// CommandDelete is one kubectl delete.
type CommandDelete struct {
	// Kind is the kind deleted ("NodePool"); for a resource eksdoctor does not
	// know, the resource as written.
	Kind string
	// Names are the objects deleted; All is set for --all, a label selector, or
	// names not known before the command runs.
	Names []string
	All   bool
	// Wait: kubectl waits until the objects are gone (its default; not with
	// --wait=false). Foreground: --cascade=foreground, the objects go only after
	// their dependents (a NodePool after its NodeClaims).
	Wait       bool
	Foreground bool
}

// Covers reports whether the delete removes the object.
func (d CommandDelete) Covers(o ObjectRef) bool {
	if d.Kind != o.Kind {
		return false
	}
	if d.All {
		return true
	}
	for _, n := range d.Names {
		if n == o.Name {
			return true
		}
	}
	return false
}
