//go:build linux

package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControllerAssets are the programs and data of a test cluster with the real
// controllers, beside the kube-apiserver and etcd of AssetsDir.
type ControllerAssets struct {
	ControllerManager string // kube-controller-manager
	Scheduler         string // kube-scheduler
	Karpenter         string // Karpenter's controllers with its kwok cloud provider
	NodeAgent         string // kwok, which plays the kubelets
	// CRDs are the NodePool, NodeClaim and KWOKNodeClass CRDs of that Karpenter.
	CRDs []string
	// Stages are kwok's stage files: what it does to nodes and pods.
	Stages []string
	// Versions names where each came from, for logs and the README.
	Versions string
}

// controllerBinaries are the programs hack/testbin.sh builds for the cluster
// with controllers, by the name it gives them.
var controllerBinaries = []string{"karpenter-kwok", "kwok"}

// ControllerAssetsFor finds or builds everything StartCluster runs. A binary in
// KUBEBUILDER_ASSETS wins (kube-controller-manager, kube-scheduler, karpenter-kwok,
// kwok); hack/testbin.sh builds the others into its cache, and prepares the CRDs
// and stages from the Go modules of the versions it pins.
func ControllerAssetsFor(log io.Writer) (ControllerAssets, error) {
	var a ControllerAssets
	given := func(name string) (string, bool) {
		dir := os.Getenv("KUBEBUILDER_ASSETS")
		if dir != "" && checkBinaries(dir, name) == nil {
			return filepath.Join(dir, name), true
		}
		return "", false
	}
	// The controllers' directory first: that run also builds the controller
	// manager beside kube-apiserver when the cache lacks it.
	dir, err := buildBinaries(log, "controllers")
	if err != nil {
		return a, err
	}
	k8s, err := buildBinaries(log)
	if err != nil {
		return a, err
	}
	for name, into := range map[string]*string{"kube-controller-manager": &a.ControllerManager, "kube-scheduler": &a.Scheduler} {
		p, ok := given(name)
		if !ok {
			if err := checkBinaries(k8s, name); err != nil {
				return a, fmt.Errorf("build test binaries: %w", err)
			}
			p = filepath.Join(k8s, name)
		}
		*into = p
	}
	for _, b := range controllerBinaries {
		p, ok := given(b)
		if !ok {
			if err := checkBinaries(dir, b); err != nil {
				return a, fmt.Errorf("build controller binaries: %w", err)
			}
			p = filepath.Join(dir, b)
		}
		switch b {
		case "karpenter-kwok":
			a.Karpenter = p
		case "kwok":
			a.NodeAgent = p
		}
	}
	for sub, into := range map[string]*[]string{"crds": &a.CRDs, "stages": &a.Stages} {
		files, err := filepath.Glob(filepath.Join(dir, sub, "*.yaml"))
		if err != nil || len(files) == 0 {
			return a, fmt.Errorf("the cluster's %s are missing from %s: run hack/testbin.sh controllers", sub, dir)
		}
		sort.Strings(files)
		*into = files
	}
	a.Versions = filepath.Base(dir)
	return a, nil
}

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// Log receives build progress, start-up messages and, at Stop, where the
	// programs' logs were; os.Stderr when nil.
	Log io.Writer
	// NeverReady is a node label key: the node agent leaves nodes carrying it
	// alone, so they register but never become Ready (a kubelet that cannot
	// reach the API server's health, a broken CNI).
	NeverReady string
	// InstanceTypes is the kwok provider's instance-type catalog (its JSON
	// format); a small default of linux types when empty.
	InstanceTypes []byte
	// KarpenterEnv adds to Karpenter's environment (its settings are
	// environment variables: BATCH_IDLE_DURATION, FEATURE_GATES, ...).
	KarpenterEnv []string
	// KarpenterNamespace is where the Karpenter Deployment is; kube-system
	// when empty (as terraform-aws-eks installs it since v20).
	KarpenterNamespace string
}

// Cluster is a kube-apiserver and etcd with the controllers a cluster's state
// comes from: kube-controller-manager (Deployments, ReplicaSets, DaemonSets,
// StatefulSets, Jobs, garbage collection, namespace deletion, node lifecycle,
// attach/detach), kube-scheduler, Karpenter's controllers with its kwok cloud
// provider, and kwok making the nodes it manages Ready and their pods Running.
//
// Karpenter runs beside the cluster, as a process with an admin kubeconfig; in
// the cluster, the Deployment kube-system/karpenter stands for it (as a Helm
// install would create it), on the node "system-0" that stands for the managed
// node group hosting it. StopKarpenter stops both, as `helm uninstall` would.
type Cluster struct {
	*Env
	// Kubeconfig is an admin kubeconfig file for the cluster.
	Kubeconfig string
	Assets     ControllerAssets
	// Client is an admin client.
	Client kubernetes.Interface

	opts       ClusterOptions
	log        io.Writer
	dir        string
	stopReaper func()

	mu    sync.Mutex
	procs map[string]*process
}

// process is one program the cluster runs.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// KarpenterVersion is the version of the Karpenter the cluster runs, as its
// Deployment's image tag says.
const KarpenterVersion = "1.14.1"

// StartCluster starts a cluster with the real controllers and waits until each
// runs. The caller must call Stop.
func StartCluster(ctx context.Context, opts ClusterOptions) (c *Cluster, err error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.KarpenterNamespace == "" {
		opts.KarpenterNamespace = "kube-system"
	}
	assets, err := ControllerAssetsFor(opts.Log)
	if err != nil {
		return nil, err
	}
	env, err := Start(Options{CRDs: NoKarpenter, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	c = &Cluster{Env: env, Assets: assets, opts: opts, log: opts.Log, procs: map[string]*process{}}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	if c.dir, err = os.MkdirTemp("", "eksdoctor-cluster-"); err != nil {
		return c, err
	}
	// etcd and kube-apiserver are stopped by a reaper if the test binary dies
	// first; the programs below die with it (procAttr).
	if c.stopReaper, err = startReaper(env.AssetsDir, env.tempDirs(), c.log); err != nil {
		return c, err
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: assets.CRDs, ErrorIfPathMissing: true}); err != nil {
		return c, fmt.Errorf("install Karpenter's kwok CRDs: %w", err)
	}
	kc, err := Kubeconfig(env.Config, "test")
	if err != nil {
		return c, err
	}
	c.Kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		return c, err
	}
	if c.Client, err = kubernetes.NewForConfig(env.Config); err != nil {
		return c, err
	}
	types := opts.InstanceTypes
	if len(types) == 0 {
		types = []byte(defaultInstanceTypes)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "instance-types.json"), types, 0o600); err != nil {
		return c, err
	}

	certDir := env.env.ControlPlane.APIServer.CertDir
	if err := c.start("kube-controller-manager", assets.ControllerManager, nil,
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file="+filepath.Join(certDir, "sa-signer.key"),
		// The controllers a cluster's state comes from; the token and
		// certificate controllers have nothing to do without kubelets.
		"--controllers=*,-serviceaccount-token,-csrsigning,-csrapproving,-csrcleaner,-bootstrapsigner,-tokencleaner",
		"--v=1",
	); err != nil {
		return c, err
	}
	if err := c.start("kube-scheduler", assets.Scheduler, nil,
		"--kubeconfig="+c.Kubeconfig, "--leader-elect=false", "--secure-port=0", "--v=1"); err != nil {
		return c, err
	}
	if err := c.startNodeAgent(); err != nil {
		return c, err
	}
	if err := c.waitControllerManager(ctx); err != nil {
		return c, err
	}
	if err := c.createSystemNode(ctx); err != nil {
		return c, err
	}
	if err := c.StartKarpenter(ctx); err != nil {
		return c, err
	}
	return c, nil
}

// defaultInstanceTypes are a few linux instance types in the kwok provider's
// format, in three zones, on-demand and spot: enough for every scenario, and few
// enough that Karpenter's choice is easy to follow in its events.
const defaultInstanceTypes = `[
{"name":"c-2x-amd64-linux","architecture":"amd64","operatingSystems":["linux"],"resources":{"cpu":"2","memory":"4Gi","pods":"32","ephemeral-storage":"20Gi"},"offerings":[
 {"Price":0.054,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-a"]}]},
 {"Price":0.054,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-b"]}]},
 {"Price":0.054,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-c"]}]},
 {"Price":0.038,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-a"]}]}]},
{"name":"c-4x-amd64-linux","architecture":"amd64","operatingSystems":["linux"],"resources":{"cpu":"4","memory":"8Gi","pods":"64","ephemeral-storage":"20Gi"},"offerings":[
 {"Price":0.108,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-a"]}]},
 {"Price":0.108,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-b"]}]},
 {"Price":0.108,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-c"]}]}]},
{"name":"m-4x-arm64-linux","architecture":"arm64","operatingSystems":["linux"],"resources":{"cpu":"4","memory":"32Gi","pods":"64","ephemeral-storage":"20Gi"},"offerings":[
 {"Price":0.132,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-a"]}]},
 {"Price":0.132,"Available":true,"Requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]},{"key":"topology.kubernetes.io/zone","operator":"In","values":["test-zone-b"]}]}]}
]`

// start runs one program of the cluster, its output in a log file of its own.
func (c *Cluster) start(name, bin string, env []string, args ...string) error {
	logPath := filepath.Join(c.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	// Its own process group (stopped as a whole), killed by the kernel if the
	// test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs[name] = p
	c.mu.Unlock()
	return nil
}

// stop ends one program: SIGTERM, then SIGKILL after ten seconds.
func (c *Cluster) stop(name string) {
	c.mu.Lock()
	p := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// running reports an error when a program the cluster started has exited.
func (c *Cluster) running(name string) error {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); its log:\n%s", name, p.err, tail(p.log, 30))
	default:
		return nil
	}
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Log returns what one of the programs wrote so far ("karpenter",
// "kube-controller-manager", "kube-scheduler", "kwok").
func (c *Cluster) Log(name string) string {
	data, _ := os.ReadFile(filepath.Join(c.dir, name+".log"))
	return string(data)
}

// startNodeAgent runs kwok on the nodes Karpenter's kwok provider creates and
// the system node (both carry the annotation kwok.x-k8s.io/node=fake), except
// nodes labelled NeverReady.
func (c *Cluster) startNodeAgent() error {
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-lease-duration-seconds=40",
		// Room for every pod of every scenario (kwok's default has 254 IPs).
		"--cidr=10.64.0.0/12",
	}
	if c.opts.NeverReady != "" {
		args = append(args, "--manage-nodes-with-label-selector=!"+c.opts.NeverReady)
	}
	for _, s := range c.Assets.Stages {
		args = append(args, "--config="+s)
	}
	return c.start("kwok", c.Assets.NodeAgent, nil, args...)
}

// waitControllerManager waits until kube-controller-manager runs its
// controllers: the service account controller has created "default".
func (c *Cluster) waitControllerManager(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.running("kube-controller-manager"); err != nil {
			return false, err
		}
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("kube-controller-manager did not start its controllers: %w\n%s", err, tail(filepath.Join(c.dir, "kube-controller-manager.log"), 30))
	}
	return nil
}

// SystemNode is the node standing for the managed node group that hosts the
// Karpenter controller, CoreDNS and the other add-ons.
const SystemNode = "system-0"

// createSystemNode adds the node the Karpenter Deployment runs on: labelled as a
// managed node group's node, tainted CriticalAddonsOnly so nothing else lands
// there unless it asks, made Ready by the node agent.
func (c *Cluster) createSystemNode(ctx context.Context) error {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: SystemNode,
			Labels: map[string]string{
				"kubernetes.io/hostname":           SystemNode,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"topology.kubernetes.io/zone":      "test-zone-a",
				"node.kubernetes.io/instance-type": "c-4x-amd64-linux",
				"eks.amazonaws.com/nodegroup":      "system",
				"eks.amazonaws.com/capacityType":   "ON_DEMAND",
				"karpenter.sh/controller":          "true",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		},
		Spec: corev1.NodeSpec{
			Taints: []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("64"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("3900m"), corev1.ResourceMemory: resource.MustParse("7Gi"), corev1.ResourcePods: resource.MustParse("64"),
			},
		},
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the system node: %w", err)
	}
	return nil
}

// karpenterDeployment is the Deployment standing for the controller in the
// cluster, shaped like the chart's (labels, the CriticalAddonsOnly toleration,
// the node selector and the keep-off-Karpenter-nodes affinity).
func karpenterDeployment(namespace string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					PriorityClassName: "system-cluster-critical",
					DNSPolicy:         corev1.DNSDefault,
					NodeSelector:      map[string]string{"kubernetes.io/os": "linux", "karpenter.sh/controller": "true"},
					Tolerations:       []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "karpenter.sh/nodepool", Operator: corev1.NodeSelectorOpDoesNotExist}},
						}}},
					}},
					Containers: []corev1.Container{{
						Name:  "controller",
						Image: "public.ecr.aws/karpenter/controller:" + KarpenterVersion,
						Env:   []corev1.EnvVar{{Name: "CLUSTER_NAME", Value: "test"}},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
						}},
					}},
				},
			},
		},
	}
}

// StartKarpenter starts the Karpenter controllers and puts its Deployment back,
// then waits until both are ready: Karpenter's /readyz answers and the
// Deployment has a ready pod.
func (c *Cluster) StartKarpenter(ctx context.Context) error {
	health, err := freePort()
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	env := append([]string{
		"KUBECONFIG=" + c.Kubeconfig,
		"DISABLE_LEADER_ELECTION=true",
		"HEALTH_PROBE_PORT=" + strconv.Itoa(health),
		"METRICS_PORT=" + strconv.Itoa(metrics),
		"INSTANCE_TYPES_FILE_PATH=" + filepath.Join(c.dir, "instance-types.json"),
		"LOG_LEVEL=debug",
		// A short batch window: scenarios wait for Karpenter's decisions.
		"BATCH_IDLE_DURATION=1s",
		"BATCH_MAX_DURATION=3s",
	}, c.opts.KarpenterEnv...)
	if err := c.start("karpenter", c.Assets.Karpenter, env); err != nil {
		return err
	}
	ns := c.opts.KarpenterNamespace
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, karpenterDeployment(ns), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the Karpenter Deployment: %w", err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.running("karpenter"); err != nil {
			return false, err
		}
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "karpenter", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas > 0, nil
	})
	if err != nil {
		return fmt.Errorf("Karpenter did not become ready: %w\nkarpenter:\n%s", err, tail(filepath.Join(c.dir, "karpenter.log"), 30))
	}
	return nil
}

// KarpenterNamespace is the namespace of the Karpenter Deployment.
func (c *Cluster) KarpenterNamespace() string { return c.opts.KarpenterNamespace }

// StopKarpenter stops the controllers and deletes their Deployment, as `helm
// uninstall` does, and waits until its pods are gone.
func (c *Cluster) StopKarpenter(ctx context.Context) error {
	c.KillKarpenter()
	ns := c.opts.KarpenterNamespace
	err := c.Client.AppsV1().Deployments(ns).Delete(ctx, "karpenter", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Karpenter Deployment: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=karpenter"})
		return err == nil && len(pods.Items) == 0, nil
	})
}

// KillKarpenter stops the controllers only; what the cluster shows of them
// (their Deployment) is left to the test, which may delete their namespace
// as a destroy would.
func (c *Cluster) KillKarpenter() { c.stop("karpenter") }

// Stop stops every program, then kube-apiserver and etcd, and removes the
// cluster's files. It is safe to call more than once.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	// The writers first (Karpenter, the node agent), then the controllers.
	for _, name := range []string{"karpenter", "kwok", "kube-scheduler", "kube-controller-manager"} {
		c.stop(name)
	}
	err := c.Env.Stop()
	if c.stopReaper != nil {
		c.stopReaper()
		c.stopReaper = nil
	}
	if c.dir != "" {
		if keep := os.Getenv("EKSDOCTOR_KEEP_CLUSTER_LOGS"); keep != "" {
			fmt.Fprintf(c.log, "testenv: the cluster's logs are in %s\n", c.dir)
		} else {
			_ = os.RemoveAll(c.dir)
		}
	}
	return err
}

// Running fails when a program of the cluster has exited, naming it with the
// end of its log.
func (c *Cluster) Running() error {
	var errs []error
	for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
		if err := c.running(name); err != nil {
			errs = append(errs, err)
		}
	}
	c.mu.Lock()
	_, karpenter := c.procs["karpenter"]
	c.mu.Unlock()
	if karpenter {
		if err := c.running("karpenter"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
