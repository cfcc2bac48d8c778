package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AddUser provisions a user authenticated by a client certificate, with the given
// groups (system:authenticated is implied). The user can do nothing beyond what the
// default roles grant every authenticated user (discovery, self reviews) until bound
// to roles, e.g. with Grant.
func (e *Env) AddUser(name string, groups ...string) (*rest.Config, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, &rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	return rest.CopyConfig(u.Config()), nil
}

// Kubeconfig renders cfg as a kubeconfig file whose current context is named
// context, so tests exercise the same loading path as users do.
func Kubeconfig(cfg *rest.Config, context string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[context] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[context] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	kc.CurrentContext = context
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return data, nil
}

// Apply creates every object of a multi-document YAML manifest as admin. Objects
// that already exist are left as they are, so a manifest can be applied by several
// tests sharing the server.
func (e *Env) Apply(ctx context.Context, manifest []byte) ([]*unstructured.Unstructured, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	c, err := client.New(e.Config, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	objs, err := decodeManifest(manifest)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return objs, nil
}

func decodeManifest(manifest []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode manifest: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// Grant binds user to the roles an RBAC manifest defines, and to nothing else. Each
// Role and ClusterRole is created under a name ending in "--<user>", with every
// resource in without removed from its rules; each binding is recreated under the
// same suffix, for that role copy and with user as its only subject. Other objects
// (ServiceAccounts, Namespaces) are ignored. Grant returns once the API server's
// authorizer enforces the new rules.
func (e *Env) Grant(ctx context.Context, user string, manifest []byte, without ...schema.GroupResource) error {
	if err := e.check(); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("grant %s: %w", user, err)
	}
	objs, err := decodeManifest(manifest)
	if err != nil {
		return fmt.Errorf("grant %s: %w", user, err)
	}
	suffix := "--" + strings.ToLower(user)
	roles := map[string]bool{} // kind/namespace/name of roles in the manifest
	var checks []authorizationv1.ResourceAttributes
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			r := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, r); err != nil {
				return fmt.Errorf("grant %s: decode ClusterRole %s: %w", user, o.GetName(), err)
			}
			roles["ClusterRole//"+r.Name] = true
			r.ObjectMeta = metav1.ObjectMeta{Name: r.Name + suffix, Labels: r.Labels}
			r.Rules = removeResources(r.Rules, without)
			checks = append(checks, firstAttributes(r.Rules, "")...)
			if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("grant %s: create ClusterRole %s: %w", user, r.Name, err)
			}
		case "Role":
			r := &rbacv1.Role{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, r); err != nil {
				return fmt.Errorf("grant %s: decode Role %s: %w", user, o.GetName(), err)
			}
			roles["Role/"+r.Namespace+"/"+r.Name] = true
			r.ObjectMeta = metav1.ObjectMeta{Name: r.Name + suffix, Namespace: r.Namespace, Labels: r.Labels}
			r.Rules = removeResources(r.Rules, without)
			checks = append(checks, firstAttributes(r.Rules, r.Namespace)...)
			if _, err := cs.RbacV1().Roles(r.Namespace).Create(ctx, r, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("grant %s: create Role %s/%s: %w", user, r.Namespace, r.Name, err)
			}
		}
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	rename := func(ref rbacv1.RoleRef, namespace string) rbacv1.RoleRef {
		if roles[ref.Kind+"/"+namespace+"/"+ref.Name] {
			ref.Name += suffix
		}
		return ref
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
				return fmt.Errorf("grant %s: decode ClusterRoleBinding %s: %w", user, o.GetName(), err)
			}
			b.ObjectMeta = metav1.ObjectMeta{Name: b.Name + suffix, Labels: b.Labels}
			b.RoleRef, b.Subjects = rename(b.RoleRef, ""), subject
			if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("grant %s: create ClusterRoleBinding %s: %w", user, b.Name, err)
			}
		case "RoleBinding":
			b := &rbacv1.RoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
				return fmt.Errorf("grant %s: decode RoleBinding %s: %w", user, o.GetName(), err)
			}
			ns := b.Namespace
			b.ObjectMeta = metav1.ObjectMeta{Name: b.Name + suffix, Namespace: ns, Labels: b.Labels}
			refNS := ns
			if b.RoleRef.Kind == "ClusterRole" {
				refNS = ""
			}
			b.RoleRef, b.Subjects = rename(b.RoleRef, refNS), subject
			if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("grant %s: create RoleBinding %s/%s: %w", user, ns, b.Name, err)
			}
		}
	}
	return e.waitAllowed(ctx, cs, user, checks)
}

// removeResources drops the given resources from rules, and rules left with none.
func removeResources(rules []rbacv1.PolicyRule, without []schema.GroupResource) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		r = *r.DeepCopy()
		r.Resources = slices.DeleteFunc(r.Resources, func(res string) bool {
			for _, w := range without {
				if w.Resource == res && slices.Contains(r.APIGroups, w.Group) {
					return true
				}
			}
			return false
		})
		if len(r.Resources) == 0 && len(r.NonResourceURLs) == 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

// firstAttributes returns, for each rule, one request the rule allows.
func firstAttributes(rules []rbacv1.PolicyRule, namespace string) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, r := range rules {
		if len(r.Resources) == 0 || len(r.Verbs) == 0 || len(r.APIGroups) == 0 {
			continue
		}
		a := authorizationv1.ResourceAttributes{
			Namespace: namespace,
			Verb:      r.Verbs[0],
			Group:     r.APIGroups[0],
			Resource:  r.Resources[0],
		}
		if len(r.ResourceNames) > 0 {
			a.Name = r.ResourceNames[0]
		}
		out = append(out, a)
	}
	return out
}

// waitAllowed polls SubjectAccessReviews until every request is allowed for user:
// the RBAC authorizer reads roles through an informer, so new bindings take effect
// a moment after they are created.
func (e *Env) waitAllowed(ctx context.Context, cs kubernetes.Interface, user string, checks []authorizationv1.ResourceAttributes) error {
	for _, a := range checks {
		var last string
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &a},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			last = r.Status.Reason
			return r.Status.Allowed, nil
		})
		if err != nil {
			return fmt.Errorf("grant %s: %s %s.%s not allowed yet (%s): %w", user, a.Verb, a.Resource, a.Group, last, err)
		}
	}
	return nil
}
