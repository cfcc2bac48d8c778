package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

func newExplainCmd(env *Env) *cobra.Command {
	o := &checkOptions{}
	var output string
	cmd := &cobra.Command{
		Use:   "explain WORKLOAD [PATH...]",
		Short: "Show where a workload's pods can run, source by source, in both phases",
		Long: `explain answers "why is this Pending?" for one workload: every node group, Fargate profile
and NodePool (and, live, node), in the bootstrap phase (before Karpenter runs) and the
steady phase, with fits / refuses and why.

WORKLOAD is NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME (kind is
case-insensitive: deployment, ds, sts, job, cronjob, pod).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := args[1:]
			if len(paths) == 0 && len(o.charts) == 0 {
				paths = []string{"."}
			}
			if output != "text" && output != "json" {
				return usagef("unknown output format %q (valid: text, json)", output)
			}
			m, err := source.Load(paths, o.sourceOptions())
			if err != nil {
				return loadError(err)
			}
			return explain(env, m, args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	addSourceFlags(cmd, o)
	return cmd
}

var kindAliases = map[string]string{
	"deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
	"ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
	"sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
	"rs": "ReplicaSet", "replicaset": "ReplicaSet", "replicasets": "ReplicaSet",
	"job": "Job", "jobs": "Job", "cj": "CronJob", "cronjob": "CronJob", "cronjobs": "CronJob",
	"po": "Pod", "pod": "Pod", "pods": "Pod",
}

// findWorkloads resolves a WORKLOAD argument.
func findWorkloads(m *cluster.Model, arg string) ([]*cluster.Workload, error) {
	parts := strings.Split(arg, "/")
	var kind, ns, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		if k, ok := kindAliases[strings.ToLower(parts[0])]; ok {
			kind, name = k, parts[1]
		} else {
			ns, name = parts[0], parts[1]
		}
	case 3:
		k, ok := kindAliases[strings.ToLower(parts[0])]
		if !ok {
			return nil, usagef("unknown workload kind %q", parts[0])
		}
		kind, ns, name = k, parts[1], parts[2]
	default:
		return nil, usagef("WORKLOAD must be NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME, not %q", arg)
	}
	var out []*cluster.Workload
	for _, w := range m.Workloads {
		if w.Object.Name != name || (kind != "" && w.Object.Kind != kind) || (ns != "" && w.Template.Namespace != ns) {
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		var names []string
		for _, w := range m.Workloads {
			names = append(names, w.Ref().String())
		}
		sort.Strings(names)
		if len(names) > 20 {
			names = append(names[:20], "...")
		}
		return nil, usagef("no workload %q in the inputs (workloads: %s)", arg, strings.Join(names, ", "))
	}
	return out, nil
}

type explainJSON struct {
	Object    string      `json:"object"`
	Origin    string      `json:"origin"`
	Component string      `json:"component,omitempty"`
	Bootstrap string      `json:"bootstrap,omitempty"`
	Phases    []phaseJSON `json:"phases"`
}

type phaseJSON struct {
	Phase    string            `json:"phase"`
	Result   string            `json:"result"`
	Summary  string            `json:"summary"`
	Fargate  string            `json:"fargateProfile,omitempty"`
	Requests map[string]string `json:"requests"`
	Sources  []sourceJSON      `json:"sources"`
}

type sourceJSON struct {
	Kind          string   `json:"kind"`
	Name          string   `json:"name"`
	Origin        string   `json:"origin,omitempty"`
	Result        string   `json:"result"`
	Reasons       []string `json:"reasons,omitempty"`
	InstanceTypes []string `json:"instanceTypes,omitempty"`
}

func explain(env *Env, m *cluster.Model, arg, output string) error {
	ws, err := findWorkloads(m, arg)
	if err != nil {
		return err
	}
	s := sim.New(m)
	var docs []explainJSON
	for _, w := range ws {
		d := explainJSON{Object: w.Ref().String(), Origin: w.Object.Origin.String(), Component: w.Component, Bootstrap: w.Bootstrap}
		for _, ph := range cluster.Phases {
			pl := s.Place(w, ph)
			pj := phaseJSON{Phase: ph.String(), Result: pl.Result().String(), Summary: pl.Summary(), Requests: map[string]string{}}
			if pl.Fargate != nil {
				pj.Fargate = pl.Fargate.Name
			}
			for k, q := range pl.Requests {
				pj.Requests[string(k)] = q.String()
			}
			for _, v := range pl.Verdicts {
				sj := sourceJSON{Kind: v.Source.Kind.String(), Name: v.Source.Name, Origin: v.Source.Origin.String(), Result: v.Result.String(), InstanceTypes: v.InstanceTypes}
				for _, r := range v.Reasons {
					sj.Reasons = append(sj.Reasons, r.Message)
				}
				pj.Sources = append(pj.Sources, sj)
			}
			d.Phases = append(d.Phases, pj)
		}
		docs = append(docs, d)
	}
	if output == "json" {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(docs); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	p := color(env, env.Stdout)
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s  %s\n", bold(p, d.Object), d.Origin)
		if d.Component != "" {
			fmt.Fprintf(&b, "  component: %s\n", d.Component)
		}
		if d.Bootstrap != "" {
			fmt.Fprintf(&b, "  needed before Karpenter: %s\n", d.Bootstrap)
		}
		for _, ph := range d.Phases {
			fmt.Fprintf(&b, "\n  %s phase: %s\n", ph.Phase, resultWord(p, ph.Result))
			fmt.Fprintf(&b, "    %s\n", ph.Summary)
			for _, src := range ph.Sources {
				line := fmt.Sprintf("%s %q", src.Kind, src.Name)
				fmt.Fprintf(&b, "    - %s: %s", line, resultWord(p, src.Result))
				if len(src.InstanceTypes) > 0 && src.Result == "fits" {
					fmt.Fprintf(&b, " (e.g. %s)", strings.Join(src.InstanceTypes, ", "))
				}
				b.WriteString("\n")
				for _, r := range src.Reasons {
					fmt.Fprintf(&b, "        %s\n", r)
				}
			}
		}
	}
	_, err = fmt.Fprint(env.Stdout, b.String())
	return err
}

func bold(on bool, s string) string {
	if !on {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

func resultWord(on bool, r string) string {
	if !on {
		return r
	}
	switch r {
	case "fits":
		return "\x1b[32m" + r + "\x1b[0m"
	case "refuses":
		return "\x1b[31m" + r + "\x1b[0m"
	}
	return "\x1b[33m" + r + "\x1b[0m"
}
