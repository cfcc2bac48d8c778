package lint

import (
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// What the knowledge base says of a release's chart: the values key that sets an object field, the chart's defaults.

// chartValuesKey finds the values key that sets an object field of a chart
// component, from the knowledge base.
func chartValuesKey(r *cluster.HelmRelease, w *cluster.Workload, field string) (string, bool) {
	version := w.Object.Annotations["eksdoctor.io/chart-version"]
	if version == "" {
		version = r.Version
	}
	kb, ok := catalog.ChartFor(r.Chart, version)
	if !ok {
		return "", false
	}
	comp, ok := kb.Component(w.Component)
	if !ok {
		comp, ok = kb.Component(w.Object.Annotations["eksdoctor.io/component"])
	}
	if !ok {
		return "", false
	}
	keys := make([]string, 0, len(comp.Fields))
	for k := range comp.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if comp.Fields[k] == field {
			if comp.ValuesPrefix != "" {
				return comp.ValuesPrefix + "." + k, true
			}
			return k, true
		}
	}
	return "", false
}

// chartDefaultList returns a chart's default list at a values key.
func chartDefaultList(r *cluster.HelmRelease, w *cluster.Workload, key string) []any {
	version := w.Object.Annotations["eksdoctor.io/chart-version"]
	if version == "" {
		version = r.Version
	}
	kb, ok := catalog.ChartFor(r.Chart, version)
	if !ok {
		return nil
	}
	return copyJSONList(cluster.Lookup(kb.DefaultValues(), key))
}

// releaseChart is the knowledge of a release's chart, for releases described by
// the knowledge base (a local chart is rendered from its own templates).
func releaseChart(r *cluster.HelmRelease) (*catalog.Chart, bool) {
	if r.ChartDir != "" || r.Rendered || r.Chart == "" || cluster.IsUnknown(r.Chart) {
		return nil, false
	}
	version := r.Version
	if cluster.IsUnknown(version) {
		version = ""
	}
	if r.Repository != "" && !strings.Contains(r.Chart, "://") {
		if kb, ok := catalog.ChartFor(strings.TrimRight(r.Repository, "/")+"/"+r.Chart, version); ok {
			return kb, true
		}
	}
	return catalog.ChartFor(r.Chart, version)
}

// componentOf finds the knowledge-base component of a workload.
func componentOf(lookup func(string) (*catalog.ChartComponent, bool), w *cluster.Workload) (*catalog.ChartComponent, bool) {
	if c, ok := lookup(w.Component); ok {
		return c, true
	}
	return lookup(w.Object.Annotations["eksdoctor.io/component"])
}

// componentKey is the values key that sets a pod spec field of a component: the
// one its field map names, else the field under the component's prefix (EKS
// add-on configurations mirror their charts' values).
func componentKey(c *catalog.ChartComponent, field string) string {
	if _, ok := c.Fields[field]; ok && strings.HasSuffix(c.Fields[field], "spec."+field) {
		return joinKey(c.ValuesPrefix, field)
	}
	var keys []string
	for k, f := range c.Fields {
		if strings.HasSuffix(f, "spec."+field) && k != "tolerateAllTaints" {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return joinKey(c.ValuesPrefix, keys[0])
	}
	return joinKey(c.ValuesPrefix, field)
}

// chartVersionAnnotation is set by the Helm knowledge base on synthesized objects.
const chartVersionAnnotation = "eksdoctor.io/chart-version"
