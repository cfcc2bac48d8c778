package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Options size a generated configuration.
type Options struct {
	Workloads  int
	NodePools  int
	NodeGroups int
	// Teams spreads workloads over namespaces and directories.
	Teams int
	// DaemonSets are node agents: log shippers and metrics exporters that
	// tolerate everything, and CSI node plugins that nodes need to drain.
	DaemonSets int
	Seed       uint64
}

// Large is the configuration the README's figures are measured on: 5,000
// workloads, 50 NodePools, 20 node groups, 10 DaemonSets; Huge is ten times
// as many workloads and NodePools, with 30 DaemonSets.
var (
	Large = Options{Workloads: 5000, NodePools: 50, NodeGroups: 20, Teams: 50, DaemonSets: 10, Seed: 1}
	Huge  = Options{Workloads: 50_000, NodePools: 500, NodeGroups: 20, Teams: 500, DaemonSets: 30, Seed: 1}
)

var (
	categories = []string{"c", "m", "r", "t", "i", "g", "p"}
	sizes      = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge"}
	families   = []string{"m5", "m6i", "m7i", "c6i", "c7g", "r6i", "m6g", "t3"}
	cpus       = []string{"100m", "250m", "500m", "750m", "1", "2"}
	mems       = []string{"128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
)

// Generate writes a configuration into dir and returns its size in bytes.
func Generate(dir string, o Options) (int64, error) {
	if o.Teams <= 0 {
		o.Teams = 1
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	var total int64
	write := func(rel string, content string) error {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		total += int64(len(content))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		return nil
	}
	if err := write("cluster.yaml", clusterConfig(r, o)); err != nil {
		return 0, err
	}
	if err := write("karpenter/nodepools.yaml", nodePools(r, o)); err != nil {
		return 0, err
	}
	for i := range o.DaemonSets {
		if err := write(fmt.Sprintf("agents/ds-%02d.yaml", i), daemonSet(i)); err != nil {
			return 0, err
		}
	}
	perFile := 10
	for start := 0; start < o.Workloads; start += perFile {
		var b strings.Builder
		for i := start; i < start+perFile && i < o.Workloads; i++ {
			if i > start {
				b.WriteString("---\n")
			}
			b.WriteString(workload(r, i, o))
		}
		team := (start / perFile) % o.Teams
		if err := write(fmt.Sprintf("apps/team-%02d/workloads-%04d.yaml", team, start/perFile), b.String()); err != nil {
			return 0, err
		}
	}
	return total, nil
}

func clusterConfig(r *rand.Rand, o Options) string {
	var b strings.Builder
	b.WriteString(`apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: bench
  region: us-west-2
  version: "1.33"
accessConfig:
  authenticationMode: API_AND_CONFIG_MAP
  accessEntries:
  - principalARN: arn:aws:iam::111122223333:role/KarpenterNodeRole-bench
    type: EC2_LINUX
managedNodeGroups:
`)
	for i := 0; i < o.NodeGroups; i++ {
		fmt.Fprintf(&b, `- name: ng-%02d
  instanceTypes: [%s.%s, %s.%s]
  minSize: 1
  maxSize: 10
  desiredCapacity: 2
  labels:
    pool: ng-%02d
    tier: %s
`, i, families[i%len(families)], sizes[i%3], families[(i+1)%len(families)], sizes[i%3], i, []string{"system", "general", "batch"}[i%3])
		if i%4 == 3 {
			fmt.Fprintf(&b, "  taints:\n  - key: dedicated\n    value: ng-%02d\n    effect: NoSchedule\n", i)
		}
	}
	return b.String()
}

func nodePools(r *rand.Rand, o Options) string {
	var b strings.Builder
	for i := 0; i < o.NodePools; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		cat := categories[i%len(categories)]
		fmt.Fprintf(&b, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-%02d
spec:
  template:
    metadata:
      labels:
        team: team-%02d
        workload-class: %s
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: class-%02d
      expireAfter: 720h
      requirements:
      - key: karpenter.k8s.aws/instance-category
        operator: In
        values: ["%s", "m"]
      - key: karpenter.k8s.aws/instance-generation
        operator: Gt
        values: ["4"]
      - key: kubernetes.io/arch
        operator: In
        values: ["amd64", "arm64"]
      - key: karpenter.sh/capacity-type
        operator: In
        values: ["spot", "on-demand"]
`, i, i%o.Teams, []string{"web", "batch", "data"}[i%3], i%10, cat)
		if i%5 == 4 {
			fmt.Fprintf(&b, "      taints:\n      - key: dedicated\n        value: pool-%02d\n        effect: NoSchedule\n", i)
		}
		fmt.Fprintf(&b, `  limits:
    cpu: "%d"
    memory: %dGi
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`, 1000+r.IntN(1000), 4000)
	}
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: class-%02d
spec:
  role: KarpenterNodeRole-bench
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: bench
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: bench
`, i)
	}
	return b.String()
}

// workload renders one workload with a pod spec the size of a real one: two
// containers with env, probes, mounts and resources, affinity, spread
// constraints, tolerations, volumes.
func workload(r *rand.Rand, i int, o Options) string {
	team := (i / 10) % o.Teams
	kind, apiVersion := workloadKind(i)
	name := fmt.Sprintf("svc-%05d", i)
	pod := podTemplate(r, i, o, name, team)
	header := fmt.Sprintf(`apiVersion: %s
kind: %s
metadata:
  name: %s
  namespace: team-%02d
  labels:
    app.kubernetes.io/name: %s
    app.kubernetes.io/managed-by: kustomize
  annotations:
    owner: team-%02d@example.com
`, apiVersion, kind, name, team, name, team)
	switch kind {
	case "CronJob":
		return header + "spec:\n  schedule: \"*/15 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n" + indent(strings.Replace(pod, "    spec:\n", "    spec:\n      restartPolicy: OnFailure\n", 1), "    ")
	case "Job":
		return header + "spec:\n  backoffLimit: 3\n  template:\n" + strings.Replace(pod, "    spec:\n", "    spec:\n      restartPolicy: OnFailure\n", 1)
	}
	return header + fmt.Sprintf(`spec:
  replicas: %d
  selector:
    matchLabels:
      app.kubernetes.io/name: %s
  template:
`, 2+r.IntN(4), name) + pod
}

// workloadKind gives workload i's kind and API version: mostly Deployments,
// one in twenty each a StatefulSet, a Job and a CronJob.
func workloadKind(i int) (kind, apiVersion string) {
	kind, apiVersion = "Deployment", "apps/v1"
	switch i % 20 {
	case 7:
		kind = "StatefulSet"
	case 13:
		kind, apiVersion = "Job", "batch/v1"
	case 19:
		kind, apiVersion = "CronJob", "batch/v1"
	}
	return kind, apiVersion
}

// podTemplate renders workload i's pod template, indented to sit under a
// workload's spec.template. It draws from r in a fixed order (env values,
// then CPU, then memory) so that a seed gives the same configuration.
func podTemplate(r *rand.Rand, i int, o Options, name string, team int) string {
	selector, tol := podPlacement(i, o, team)
	var env strings.Builder
	for e := 0; e < 12; e++ {
		fmt.Fprintf(&env, "        - name: SETTING_%02d\n          value: \"%s-%d\"\n", e, name, r.IntN(100000))
	}
	env.WriteString("        - name: POD_NAME\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n")
	cpu, mem := cpus[r.IntN(len(cpus))], mems[r.IntN(len(mems))]
	return fmt.Sprintf(podTemplateFormat, name, team, i%40, selector, tol, env.String(), cpu, mem)
}

// podPlacement gives workload i's nodeSelector and tolerations blocks (either
// may be empty): half select a team, a node group or arm64; one in five
// tolerates a NodePool's dedicated taint.
func podPlacement(i int, o Options, team int) (selector, tol string) {
	switch i % 6 {
	case 0:
		selector = fmt.Sprintf("      nodeSelector:\n        team: team-%02d\n", team)
	case 1:
		selector = fmt.Sprintf("      nodeSelector:\n        pool: ng-%02d\n", i%o.NodeGroups)
	case 2:
		selector = "      nodeSelector:\n        kubernetes.io/arch: arm64\n"
	}
	if i%5 == 0 {
		tol = fmt.Sprintf("      tolerations:\n      - key: dedicated\n        operator: Equal\n        value: pool-%02d\n        effect: NoSchedule\n", (i/5)%o.NodePools)
	}
	return selector, tol
}

// podTemplateFormat is a pod template the size of a real one. Its operands:
// 1 name, 2 team, 3 minor version, 4 nodeSelector block, 5 tolerations block,
// 6 env entries, 7 CPU request, 8 memory request and limit.
const podTemplateFormat = `    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
        app.kubernetes.io/part-of: team-%02[2]d
        app.kubernetes.io/version: "1.%[3]d.0"
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"
    spec:
      serviceAccountName: %[1]s
      priorityClassName: team-default
%[4]s%[5]s      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  app.kubernetes.io/name: %[1]s
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            preference:
              matchExpressions:
              - key: karpenter.sh/capacity-type
                operator: In
                values: ["spot"]
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        labelSelector:
          matchLabels:
            app.kubernetes.io/name: %[1]s
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        fsGroup: 10001
        seccompProfile:
          type: RuntimeDefault
      initContainers:
      - name: migrate
        image: registry.example.com/team-%02[2]d/%[1]s-migrate:1.%[3]d.0
        command: ["/bin/migrate", "--up"]
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi}
      containers:
      - name: app
        image: registry.example.com/team-%02[2]d/%[1]s:1.%[3]d.0
        imagePullPolicy: IfNotPresent
        args: ["--config=/etc/app/config.yaml", "--log-level=info", "--listen=:8080"]
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        - name: metrics
          containerPort: 9090
          protocol: TCP
        env:
%[6]s        envFrom:
        - configMapRef:
            name: %[1]s-config
        resources:
          requests:
            cpu: %[7]s
            memory: %[8]s
          limits:
            memory: %[8]s
        readinessProbe:
          httpGet:
            path: /healthz/ready
            port: http
          initialDelaySeconds: 5
          periodSeconds: 10
          timeoutSeconds: 2
          failureThreshold: 3
        livenessProbe:
          httpGet:
            path: /healthz/live
            port: http
          initialDelaySeconds: 15
          periodSeconds: 20
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: ["ALL"]
        volumeMounts:
        - name: config
          mountPath: /etc/app
          readOnly: true
        - name: tmp
          mountPath: /tmp
        - name: data
          mountPath: /var/lib/app
      - name: proxy
        image: registry.example.com/platform/envoy:1.31.2
        args: ["-c", "/etc/envoy/envoy.yaml", "--service-cluster", "%[1]s"]
        ports:
        - name: proxy
          containerPort: 15001
        resources:
          requests: {cpu: 50m, memory: 64Mi}
          limits: {memory: 128Mi}
        volumeMounts:
        - name: envoy
          mountPath: /etc/envoy
      volumes:
      - name: config
        configMap:
          name: %[1]s-config
      - name: envoy
        configMap:
          name: envoy-%[1]s
      - name: tmp
        emptyDir:
          medium: Memory
          sizeLimit: 64Mi
      - name: data
        emptyDir: {}
`

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// daemonSet is a node agent: every third a CSI node plugin (node-critical,
// tolerating the NoExecute taints and Karpenter's disruption taint), the others
// agents that tolerate every taint.
func daemonSet(i int) string {
	if i%3 == 0 {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: csi-node-%02d
  namespace: kube-system
spec:
  selector:
    matchLabels: {app: csi-node-%02d}
  template:
    metadata:
      labels: {app: csi-node-%02d}
    spec:
      priorityClassName: system-node-critical
      tolerations:
      - {operator: Exists, effect: NoExecute}
      - {key: karpenter.sh/disrupted, operator: Exists, effect: NoSchedule}
      containers:
      - name: ebs-plugin
        image: public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.40.0
        resources: {requests: {cpu: 10m, memory: 40Mi}}
      - name: node-driver-registrar
        image: public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.12.0
`, i, i, i)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent-%02d
  namespace: observability
spec:
  selector:
    matchLabels: {app: agent-%02d}
  template:
    metadata:
      labels: {app: agent-%02d}
    spec:
      tolerations:
      - operator: Exists
      containers:
      - name: agent
        image: public.ecr.aws/bench/agent:%d.0
        resources: {requests: {cpu: 50m, memory: 64Mi}}
`, i, i, i, i)
}
