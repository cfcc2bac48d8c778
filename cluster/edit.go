package cluster

// Edit formats.
const (
	FormatYAML   = "yaml"   // a YAML merge patch for the object that starts at File:Line
	FormatHCL    = "hcl"    // HCL to set in the block at File:Line
	FormatValues = "values" // Helm values to merge into the release at File:Line
	FormatShell  = "shell"  // a command to run
)

// Edit is one change: Text, in Format, applied at File:Line. For FormatYAML the
// text is a merge patch (RFC 7386: maps merge, lists are replaced whole, so lists
// in a fix are complete) for the object that starts at that line.
//
// Each format is written and applied by the source package that reads it:
// source/manifest for YAML, source/terraform for HCL and Helm values, the live
// source's kubectl commands for shell; the write package chooses among them.
type Edit struct {
	File   string
	Line   int
	Format string
	Text   string
}

// CopyJSON deep-copies a JSON-like value; whole numbers decoded as float64 become
// int64, so fixes render 300 rather than 300.0.
func CopyJSON(v any) any {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = CopyJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = CopyJSON(x)
		}
		return out
	}
	return v
}

// DeclKind is how a model entry is declared.
type DeclKind int

const (
	// DeclUnknown: the entry cannot be changed where it is declared.
	DeclUnknown DeclKind = iota
	// DeclEksctl: an item of a list of an eksctl ClusterConfig.
	DeclEksctl
	// DeclModuleEntry: an entry of a map input of a terraform-aws-eks module
	// call (a fargate_profiles or access_entries key).
	DeclModuleEntry
	// DeclResource: a Terraform resource block.
	DeclResource
	// DeclModule: made by a module call from its own inputs (a call of the
	// fargate-profile sub-module, the karpenter module's access entry).
	DeclModule
	// DeclConfigFile: written in a Terraform configuration file, at the
	// entry's origin (an aws_eks_addon block or a cluster_addons entry).
	DeclConfigFile
	// DeclNew: not declared at all (an add-on EKS installs by itself): a
	// change declares it, beside the cluster — a new item of the eksctl
	// ClusterConfig's List (Object), a new entry of the map input List of
	// the module call Block, or a new resource beside the resource Block.
	DeclNew
	// DeclGitOps: a Helm release an Argo CD Application or ApplicationSet or a
	// Flux HelmRelease declares: Object is it, List the path of the release's
	// source in it, Key the dependency of a wrapper chart the release is.
	DeclGitOps
)

// Decl is the declaration handle a loader attaches to a model entry: which
// format declares it and where, so that the writer of that format changes it
// where the user wrote it. Only the write package and the source package of
// the format read it.
type Decl struct {
	Kind DeclKind
	// Object is the eksctl ClusterConfig that declares the entry; List is the
	// list's path in it ("fargateProfiles") and Index the item's position.
	Object *Object
	List   string
	Index  int
	// Block is the Terraform address of the declaring block: the resource, the
	// module call whose map input holds the entry (Key names the entry), the
	// module call that makes it.
	Block string
	Key   string
}
