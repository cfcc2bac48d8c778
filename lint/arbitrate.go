package lint

import (
	"github.com/eksdoctor/eksdoctor/cluster"
)

// One root cause, one finding. Several checks can explain the same trouble:
// pods that match no Fargate profile also fit no capacity, and a component
// needed before Karpenter that fits nothing is also unschedulable. Checks do not
// ask each other; each reports what it sees and names, in Finding.causes, the
// causes its finding explains. A check that explains a cause more directly
// than another declares that it supersedes it (Check.Supersedes). After every
// check has run, arbitrate drops a finding when each of its causes is explained
// by a finding of a check that supersedes its own.
//
// Because it works on findings, not on checks, disabling a check or ignoring it
// on an object (whose findings then never exist) never hides the problem: the
// other check's finding stays.

// podsCause is the cause "the pods of this workload cannot be placed".
func podsCause(ref cluster.ObjectRef) string { return "pods of " + ref.String() }

// podCause is the cause "this Pending pod of a running cluster cannot be placed".
func podCause(p *cluster.Pod) string { return "pod " + p.Object.Ref().String() }

// podCauses names each pod's cause.
func podCauses(pods []*cluster.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = podCause(p)
	}
	return out
}

// arbitrate settles overlaps between findings; see above. Order is kept.
func arbitrate(fs []Finding, checks []*Check) []Finding {
	supersedes := map[string]map[string]bool{}
	for _, c := range checks {
		for _, s := range c.Supersedes {
			if supersedes[c.ID] == nil {
				supersedes[c.ID] = map[string]bool{}
			}
			supersedes[c.ID][s.ID] = true
		}
	}
	if len(supersedes) == 0 {
		return fs
	}
	explainedBy := map[string][]string{}
	for _, f := range fs {
		for _, c := range f.causes {
			explainedBy[c] = append(explainedBy[c], f.Check)
		}
	}
	superseded := func(f Finding, cause string) bool {
		for _, id := range explainedBy[cause] {
			if supersedes[id][f.Check] {
				return true
			}
		}
		return false
	}
	out := fs[:0]
	for _, f := range fs {
		drop := len(f.causes) > 0
		for _, c := range f.causes {
			if !superseded(f, c) {
				drop = false
				break
			}
		}
		if !drop {
			out = append(out, f)
		}
	}
	return out
}
