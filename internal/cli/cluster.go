package cli

import (
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/spf13/cobra"
)

func newClusterCmd(env *Env) *cobra.Command {
	o := &reportOptions{}
	lo := &liveOptions{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Analyse the running cluster of the current kube context (read-only)",
		Long: `cluster reads the cluster of the current kubeconfig context (or --context) and reports what
is wrong with it now, with the same checks, reports, flags and exit codes as 'eksdoctor check':
Pending pods explained source by source beside the scheduler's own message, NodeClaims whose
instances never joined, objects held by Karpenter finalizers no controller will remove,
volumes left attached to nodes that are gone, node-critical DaemonSet pods evicted from a node
Karpenter is draining, and the configuration checks on what the cluster runs.

It only reads (get and list, never Secrets); deploy/rbac.yaml grants exactly what it needs.
Resources it may not read are reported as live-resource-skipped and the rest is analysed.
'eksdoctor snapshot' saves what it reads for 'eksdoctor check' to analyse later.`,
		Example: `  eksdoctor cluster
  eksdoctor cluster --context prod -n apps -o json
  kubectl eksdoctor cluster -n apps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := o.resolve(env)
			if err != nil {
				return err
			}
			m, err := lo.load(cmd.Context(), env)
			if err != nil {
				return err
			}
			return analyse(env, set, []*source.Cluster{{Name: m.Live.Context, Model: m}})
		},
	}
	o.addFlags(cmd)
	lo.addFlags(cmd.Flags())
	return cmd
}
