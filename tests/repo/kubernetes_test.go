package repo

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/merchant"
)

// manifests are the objects of deploy/kubernetes, each decoded strictly
// into its Kubernetes API type: a misspelt or misplaced field fails.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	secret     *corev1.Secret
}

func readManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob("deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes (%v)", err)
	}
	var m manifests
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s #%d: %v", file, i+1, err)
			}
			// Each kind decodes into its field, which the decoder fills.
			into, ok := map[string]any{
				"apps/v1 Deployment":                     &m.deployment,
				"v1 Service":                             &m.service,
				"policy/v1 PodDisruptionBudget":          &m.pdb,
				"autoscaling/v2 HorizontalPodAutoscaler": &m.hpa,
				"v1 Secret":                              &m.secret,
			}[head.APIVersion+" "+head.Kind]
			if !ok {
				t.Fatalf("%s #%d: %s %s is not a kind this test knows; add it here", file, i+1, head.APIVersion, head.Kind)
			}
			if err := decodeStrict(doc, into); err != nil {
				t.Fatalf("%s #%d (%s): %v", file, i+1, head.Kind, err)
			}
		}
	}
	switch {
	case m.deployment == nil, m.service == nil, m.pdb == nil, m.hpa == nil, m.secret == nil:
		t.Fatalf("deploy/kubernetes needs a Deployment, a Service, a PodDisruptionBudget, a HorizontalPodAutoscaler and a Secret; found %+v", m)
	}
	return m
}

// decodeStrict decodes a YAML manifest as the API server does: field names
// match exactly (case too), and a field unknown or given twice is an error.
func decodeStrict(doc []byte, into any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, into)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func TestStrictDecodingRefusesAMisspeltField(t *testing.T) {
	for _, field := range []string{"replica: 3", "Replicas: 3", "replicas: 3\n  replicas: 4"} {
		doc := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  " + field + "\n")
		if err := decodeStrict(doc, new(appsv1.Deployment)); err == nil {
			t.Errorf("%q was decoded without error: the manifest test would not catch it", field)
		}
	}
}

func TestKubernetesManifests(t *testing.T) {
	m := readManifests(t)
	d := m.deployment
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want the checkout alone", len(pod.Containers))
	}
	c := pod.Containers[0]

	t.Run("three instances, scaled and protected together", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
			t.Errorf("replicas %v, want 3", d.Spec.Replicas)
		}
		labels := d.Spec.Template.Labels
		for name, sel := range map[string]map[string]string{
			"Deployment selector": d.Spec.Selector.MatchLabels,
			"Service selector":    m.service.Spec.Selector,
			"PDB selector":        m.pdb.Spec.Selector.MatchLabels,
		} {
			if len(sel) == 0 {
				t.Errorf("%s is empty", name)
			}
			for k, v := range sel {
				if labels[k] != v {
					t.Errorf("%s %s=%s does not match the pods' labels %v", name, k, v, labels)
				}
			}
		}
		ref := m.hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.Name != d.Name || ref.APIVersion != "apps/v1" {
			t.Errorf("the autoscaler scales %+v, not the Deployment %s", ref, d.Name)
		}
		if m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 3 || m.hpa.Spec.MaxReplicas < *m.hpa.Spec.MinReplicas {
			t.Errorf("the autoscaler's range %v–%d goes below the three instances", m.hpa.Spec.MinReplicas, m.hpa.Spec.MaxReplicas)
		}
		if min := m.pdb.Spec.MinAvailable; min == nil || min.IntValue() < 1 || min.IntValue() >= 3 {
			t.Errorf("the disruption budget's minAvailable %v lets no node drain or lets every instance go", min)
		}
		if u := d.Spec.Strategy.RollingUpdate; u == nil || u.MaxUnavailable == nil || u.MaxUnavailable.IntValue() != 0 {
			t.Error("a rollout may take an instance away before its successor is ready")
		}
	})

	t.Run("probes on the app's health routes and port", func(t *testing.T) {
		port := ""
		for _, p := range c.Ports {
			if p.ContainerPort == 8080 {
				port = p.Name
			}
		}
		if port == "" || envValue(c, "ADDR") != ":8080" {
			t.Fatalf("the container's port %v and ADDR %q are not both 8080", c.Ports, envValue(c, "ADDR"))
		}
		for name, probe := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			want := map[string]string{"readiness": handlers.RouteReady, "liveness": handlers.RouteHealth}[name]
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port.String() != port {
				t.Errorf("%s probe %+v, want GET %s on port %s", name, probe, want, port)
			}
		}
		if m.service.Spec.Ports[0].TargetPort.String() != port {
			t.Errorf("the Service sends to %s, not the app's port %s", m.service.Spec.Ports[0].TargetPort.String(), port)
		}
	})

	t.Run("non-root on a read-only root filesystem, with resources", func(t *testing.T) {
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Error("the root filesystem is writable")
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Error("privilege escalation is allowed")
		}
		if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Error("the pod may run as root")
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[r]; !ok {
				t.Errorf("no %s request", r)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Error("no memory limit")
		}
	})

	t.Run("the grace period covers the app's drain", func(t *testing.T) {
		var pause time.Duration
		if h := c.Lifecycle; h != nil && h.PreStop != nil && h.PreStop.Sleep != nil {
			pause = time.Duration(h.PreStop.Sleep.Seconds) * time.Second
		}
		if pause == 0 {
			t.Error("no preStop pause: the Service may still send requests to an instance that stopped listening")
		}
		need := pause + app.ShutdownGrace + app.WorkersGrace
		if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < need {
			if g == nil {
				g = new(int64)
			}
			t.Errorf("terminationGracePeriodSeconds %d is shorter than the pause, the drain and the background work's end (%v)", g, need)
		}
	})

	t.Run("every variable is one the app reads, every secret one the Secret holds", func(t *testing.T) {
		read := map[string]bool{}
		app.LoadConfig(func(name string) string { read[name] = true; return "" })
		for _, e := range c.Env {
			if !read[e.Name] {
				t.Errorf("env %s is not a variable the app reads", e.Name)
			}
			if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
				if ref.SecretKeyRef.Name != m.secret.Name {
					t.Errorf("env %s comes from Secret %s, not %s", e.Name, ref.SecretKeyRef.Name, m.secret.Name)
				}
				if _, ok := m.secret.StringData[ref.SecretKeyRef.Key]; !ok {
					t.Errorf("env %s: the Secret has no key %s", e.Name, ref.SecretKeyRef.Key)
				}
			}
		}
		file := envValue(c, "MERCHANTS_FILE")
		mounted := false
		for _, v := range pod.Volumes {
			if v.Secret == nil || v.Secret.SecretName != m.secret.Name {
				continue
			}
			for _, item := range v.Secret.Items {
				for _, vm := range c.VolumeMounts {
					if vm.Name == v.Name && filepath.Join(vm.MountPath, item.Path) == file {
						mounted = true
						if _, ok := m.secret.StringData[item.Key]; !ok {
							t.Errorf("the merchants file comes from key %s, which the Secret lacks", item.Key)
						}
					}
				}
			}
		}
		if !mounted {
			t.Errorf("MERCHANTS_FILE %s is not a file mounted from the Secret", file)
		}
	})

	t.Run("the Secret as shipped does not start", func(t *testing.T) {
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				env[e.Name] = m.secret.StringData[e.ValueFrom.SecretKeyRef.Key]
			}
		}
		for _, name := range []string{"DATABASE_URL", "PIS_API_KEY", "SESSION_KEYS", "SETTINGS_KEYS"} {
			shipped := maps.Clone(env)
			for _, k := range []string{"DATABASE_URL", "PIS_API_KEY", "SESSION_KEYS", "SETTINGS_KEYS"} {
				if k != name {
					shipped[k] = validSecrets[k]
				}
			}
			if _, err := app.LoadConfig(mapEnv(shipped)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s as shipped (%q): start-up says %v, want a refusal naming it", name, shipped[name], err)
			}
		}
		ok := maps.Clone(env)
		maps.Copy(ok, validSecrets)
		if _, err := app.LoadConfig(mapEnv(ok)); err != nil {
			t.Errorf("with real secrets the Deployment's environment is refused: %v", err)
		}
		if _, err := merchant.Parse([]byte(m.secret.StringData["merchants.json"])); err == nil {
			t.Error("the example merchants file starts as it is: its secrets would be public")
		}
	})
}

// validSecrets stand for the values an operator puts in the Secret.
var validSecrets = map[string]string{
	"DATABASE_URL":  "postgres://checkout:pw@postgres:5432/checkout",
	"PIS_API_KEY":   "a-provider-key",
	"SESSION_KEYS":  strings.Repeat("k", app.MinKeyLength),
	"SETTINGS_KEYS": strings.Repeat("s", app.MinKeyLength),
}

func envValue(c corev1.Container, name string) string {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return ""
	}
	return c.Env[i].Value
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
