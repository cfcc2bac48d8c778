{{- define "cw.feature" -}}
{{- if index (.Chart.Annotations | default dict) (printf "eksdoctor.io/feature-%s" .feature) -}}true{{- end -}}
{{- end -}}

{{/*
The tolerations of a workload, called with (dict "root" $ "component" <values or nil>):
none before 1.7.0; the top-level tolerations (default "- operator: Exists", helm-charts#41)
from 1.7.0; from 3.7.0 the component's own tolerations when set
(amazon-cloudwatch-observability.common.tolerations in the chart's _helpers.tpl).
*/}}
{{- define "cw.tolerations" -}}
{{- $root := .root -}}
{{- if include "cw.feature" (dict "Chart" $root.Chart "feature" "tolerations") -}}
{{- $t := $root.Values.tolerations -}}
{{- if and .component (include "cw.feature" (dict "Chart" $root.Chart "feature" "componentValues")) -}}
{{- $c := dig "tolerations" nil .component -}}
{{- if ne nil $c -}}{{- $t = $c -}}{{- end -}}
{{- end -}}
{{- with $t }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Node selector and affinity of the agent and Fluent Bit, (dict "root" $ "component" <values>):
from 3.7.0 the component's nodeSelector and affinity values; before, kubernetes.io/os: linux
from 1.5.0 and the required affinity compute-type NotIn [fargate] from 1.9.0 (helm-charts#58)
in the templates.
*/}}
{{- define "cw.placement" -}}
{{- $root := .root -}}
{{- $f := dict "Chart" $root.Chart -}}
{{- if include "cw.feature" (set $f "feature" "componentValues") -}}
{{- with .component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- else -}}
{{- if include "cw.feature" (set $f "feature" "linuxNodeSelector") }}
nodeSelector:
  kubernetes.io/os: linux
{{- end }}
{{- if include "cw.feature" (set $f "feature" "fargateAffinity") }}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: eks.amazonaws.com/compute-type
              operator: NotIn
              values: [fargate]
{{- end }}
{{- end -}}
{{- end -}}

{{/*
The node affinity of the dcgm-exporter and neuron-monitor DaemonSets, (dict "root" $
"component" <values> "instances" <list> "os" bool): node.kubernetes.io/instance-type In the
accelerated instance types (neuron-monitor also kubernetes.io/os In [linux] in the same
term), plus compute-type NotIn [fargate] from 1.9.0; from 3.7.0 the component's affinity
value when the user sets one.
*/}}
{{- define "cw.acceleratorAffinity" -}}
{{- $root := .root -}}
{{- $f := dict "Chart" $root.Chart -}}
{{- if and (include "cw.feature" (set $f "feature" "componentValues")) .component.affinity -}}
affinity:
  {{- toYaml .component.affinity | nindent 2 }}
{{- else -}}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            {{- if .os }}
            - key: kubernetes.io/os
              operator: In
              values: [linux]
            {{- end }}
            - key: node.kubernetes.io/instance-type
              operator: In
              values: {{ toJson .instances }}
            {{- if include "cw.feature" (set $f "feature" "fargateAffinity") }}
            - key: eks.amazonaws.com/compute-type
              operator: NotIn
              values: [fargate]
            {{- end }}
{{- end -}}
{{- end -}}
