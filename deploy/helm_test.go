package deploy

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/bunting"

// kubeVersion is the Kubernetes the chart is rendered and linted for: the
// oldest its Chart.yaml accepts.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.25.0", Major: "1", Minor: "25"}

// rendered is a chart's manifests, each decoded strictly into its
// Kubernetes API type.
type rendered struct {
	deployments  map[string]*appsv1.Deployment
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	claims       map[string]*corev1.PersistentVolumeClaim
	accounts     map[string]*corev1.ServiceAccount
	ingresses    map[string]*networkingv1.Ingress
	budgets      map[string]*policyv1.PodDisruptionBudget
	autoscalers  map[string]*autoscalingv2.HorizontalPodAutoscaler
	manifestText string
}

func readValues(t *testing.T, files ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			t.Fatal(err)
		}
		vals = chartutil.MergeTables(v, vals)
	}
	return vals
}

// lintChart runs helm lint's checks and fails on any warning or error.
func lintChart(t *testing.T, vals map[string]any) {
	t.Helper()
	l := lint.AllWithKubeVersion(chartDir, vals, "flags", kubeVersion)
	for _, m := range l.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m.Error())
		} else {
			t.Logf("helm lint: %s", m.Error())
		}
	}
}

// render runs helm template with vals.
func render(vals map[string]any) (string, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return "", err
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "flags", "flags"
	install.KubeVersion = kubeVersion
	rel, err := install.Run(ch, vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// decode decodes every rendered manifest into its API type, refusing
// unknown and duplicate fields: a misspelt or misplaced key fails.
func decode(t *testing.T, manifest string) rendered {
	t.Helper()
	r := rendered{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		claims: map[string]*corev1.PersistentVolumeClaim{}, accounts: map[string]*corev1.ServiceAccount{},
		ingresses: map[string]*networkingv1.Ingress{}, budgets: map[string]*policyv1.PodDisruptionBudget{},
		autoscalers: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, manifestText: manifest,
	}
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		doc := docs[k]
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("manifest %s is not YAML: %v\n%s", k, err, doc)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			o := &appsv1.Deployment{}
			r.deployments[head.Metadata.Name], obj = o, o
		case "v1 Service":
			o := &corev1.Service{}
			r.services[head.Metadata.Name], obj = o, o
		case "v1 ConfigMap":
			o := &corev1.ConfigMap{}
			r.configMaps[head.Metadata.Name], obj = o, o
		case "v1 Secret":
			o := &corev1.Secret{}
			r.secrets[head.Metadata.Name], obj = o, o
		case "v1 PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			r.claims[head.Metadata.Name], obj = o, o
		case "v1 ServiceAccount":
			o := &corev1.ServiceAccount{}
			r.accounts[head.Metadata.Name], obj = o, o
		case "networking.k8s.io/v1 Ingress":
			o := &networkingv1.Ingress{}
			r.ingresses[head.Metadata.Name], obj = o, o
		case "policy/v1 PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{}
			r.budgets[head.Metadata.Name], obj = o, o
		case "autoscaling/v2 HorizontalPodAutoscaler":
			o := &autoscalingv2.HorizontalPodAutoscaler{}
			r.autoscalers[head.Metadata.Name], obj = o, o
		default:
			t.Fatalf("manifest %s: %s %s is not a kind this test knows; add it", k, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Errorf("manifest %s (%s %s) does not decode strictly: %v", k, head.Kind, head.Metadata.Name, err)
		}
	}
	return r
}

// checkPod checks what every Bunting pod needs: the image's non-root user,
// a read-only root file system with /tmp (and, for the server, /data)
// mounted writable, resources, and probes.
func checkPod(t *testing.T, name string, d *appsv1.Deployment, writable []string) *corev1.Container {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers", name, len(spec.Containers))
	}
	c := &spec.Containers[0]
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.FSGroup == nil {
		t.Errorf("%s: pod security context %+v: want runAsNonRoot, runAsUser 65532 (the image's user) and an fsGroup", name, psc)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: container security context %+v: want a read-only root file system and no privilege escalation", name, sc)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, p := range writable {
		if !volumes[mounts[p]] {
			t.Errorf("%s: %s is not mounted from a volume (mounts %v): the root file system is read-only", name, p, mounts)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: resources %+v: want CPU and memory requests and a memory limit", name, c.Resources)
	}
	if c.ReadinessProbe == nil || c.LivenessProbe == nil {
		t.Errorf("%s: readiness %v, liveness %v", name, c.ReadinessProbe, c.LivenessProbe)
	}
	return c
}

func httpPath(p *corev1.Probe) string {
	if p == nil || p.HTTPGet == nil {
		return ""
	}
	return p.HTTPGet.Path
}

func envNames(c *corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// The chart lints clean and renders valid Kubernetes objects for its
// default values (one server on SQLite with a PersistentVolumeClaim) and
// for ci/postgres-ha-values.yaml (three servers on PostgreSQL, the proxy,
// autoscaling, an Ingress).
func TestChart(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		vals := readValues(t)
		lintChart(t, vals)
		manifest, err := render(vals)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, manifest)
		d := r.deployments["flags-bunting"]
		if d == nil || len(r.deployments) != 1 {
			t.Fatalf("deployments %v: want the server only", keys(r.deployments))
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("server: replicas %v, strategy %q: want 1 and Recreate on SQLite", d.Spec.Replicas, d.Spec.Strategy.Type)
		}
		c := checkPod(t, "server", d, []string{"/data", "/tmp"})
		if httpPath(c.LivenessProbe) != "/health" || httpPath(c.ReadinessProbe) != "/health" || httpPath(c.StartupProbe) != "/health" {
			t.Errorf("server probes: liveness %q, readiness %q, startup %q", httpPath(c.LivenessProbe), httpPath(c.ReadinessProbe), httpPath(c.StartupProbe))
		}
		if _, ok := envNames(c)["DATABASE_URL"]; ok {
			t.Errorf("DATABASE_URL is set on SQLite")
		}
		claim := r.claims["flags-bunting-data"]
		if claim == nil {
			t.Fatalf("no PersistentVolumeClaim for SQLite (claims %v)", keys(r.claims))
		}
		var dataClaim string
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == "data" && v.PersistentVolumeClaim != nil {
				dataClaim = v.PersistentVolumeClaim.ClaimName
			}
		}
		if dataClaim != claim.Name {
			t.Errorf("the data volume uses claim %q, want %q", dataClaim, claim.Name)
		}
		if r.services["flags-bunting"] == nil || r.configMaps["flags-bunting"] == nil || r.budgets["flags-bunting"] == nil {
			t.Errorf("want the server's Service, ConfigMap and PodDisruptionBudget: services %v, config maps %v, budgets %v", keys(r.services), keys(r.configMaps), keys(r.budgets))
		}
		if len(r.ingresses) != 0 || len(r.autoscalers) != 0 {
			t.Errorf("ingresses %v, autoscalers %v: both off by default", keys(r.ingresses), keys(r.autoscalers))
		}
	})

	t.Run("postgres-ha", func(t *testing.T) {
		vals := readValues(t, filepath.Join(chartDir, "ci", "postgres-ha-values.yaml"))
		lintChart(t, vals)
		manifest, err := render(vals)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, manifest)
		server, proxy := r.deployments["flags-bunting"], r.deployments["flags-bunting-proxy"]
		if server == nil || proxy == nil {
			t.Fatalf("deployments %v: want the server and the proxy", keys(r.deployments))
		}
		if server.Spec.Replicas != nil || server.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			t.Errorf("server: replicas %v (the autoscaler sets them), strategy %q", server.Spec.Replicas, server.Spec.Strategy.Type)
		}
		c := checkPod(t, "server", server, []string{"/tmp"})
		url := envNames(c)["DATABASE_URL"]
		if url.ValueFrom == nil || url.ValueFrom.SecretKeyRef == nil || url.ValueFrom.SecretKeyRef.Name != "bunting-database" || url.ValueFrom.SecretKeyRef.Key != "url" {
			t.Errorf("DATABASE_URL %+v: want it from the existing Secret bunting-database, key url", url)
		}
		var fromSettings bool
		for _, e := range c.EnvFrom {
			fromSettings = fromSettings || (e.SecretRef != nil && e.SecretRef.Name == "bunting-settings")
		}
		if !fromSettings {
			t.Errorf("the server does not read the existing Secret bunting-settings: %+v", c.EnvFrom)
		}
		if len(r.claims) != 0 {
			t.Errorf("claims %v on PostgreSQL", keys(r.claims))
		}
		pc := checkPod(t, "proxy", proxy, []string{"/tmp"})
		if len(pc.Args) != 1 || pc.Args[0] != "proxy" || envNames(pc)["UPSTREAM_URL"].Value != "http://flags-bunting:4242/api" {
			t.Errorf("proxy args %v, upstream %q", pc.Args, envNames(pc)["UPSTREAM_URL"].Value)
		}
		hpa := r.autoscalers["flags-bunting"]
		if hpa == nil || hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 3 || hpa.Spec.ScaleTargetRef.Name != "flags-bunting" || r.autoscalers["flags-bunting-proxy"] == nil {
			t.Errorf("autoscalers %v", keys(r.autoscalers))
		}
		ing := r.ingresses["flags-bunting"]
		if ing == nil || len(ing.Spec.TLS) != 1 || len(ing.Spec.Rules) != 1 {
			t.Fatalf("ingress %+v", ing)
		}
		backends := map[string]string{}
		for _, p := range ing.Spec.Rules[0].HTTP.Paths {
			backends[p.Path] = p.Backend.Service.Name
		}
		if backends["/"] != "flags-bunting" || backends["/proxy"] != "flags-bunting-proxy" {
			t.Errorf("ingress paths %v", backends)
		}
		if r.budgets["flags-bunting"] == nil || r.budgets["flags-bunting-proxy"] == nil {
			t.Errorf("budgets %v", keys(r.budgets))
		}
	})
}

// Settings the chart cannot run are refused by helm template with a
// message saying what to change.
func TestChartRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		set  string
		want string
	}{
		{"several replicas on SQLite", "server: {replicaCount: 2}", "SQLite serves one replica"},
		{"autoscaling on SQLite", "server: {autoscaling: {enabled: true}}", "needs database.type=postgres"},
		{"PostgreSQL without its Secret", "database: {type: postgres}", "database.postgres.existingSecret"},
		{"an unknown database", "database: {type: mysql}", "database.type must be sqlite or postgres"},
		{"a proxy without credentials", "proxy: {enabled: true}", "proxy.existingSecret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(c.set), &vals); err != nil {
				t.Fatal(err)
			}
			_, err := render(vals)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rendering with %s: %v, want an error saying %q", c.set, err, c.want)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
