{{/*
Reduced helpers of the aws-ebs-csi-driver chart (kubernetes-sigs/aws-ebs-csi-driver
charts/aws-ebs-csi-driver/templates/_helpers.tpl): names, labels, and the DaemonSet
tolerations the chart appends when node.tolerateAllTaints is false.
*/}}
{{- define "aws-ebs-csi-driver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "aws-ebs-csi-driver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aws-ebs-csi-driver.name" . | quote }}
{{- if ne .Release.Name "kustomize" }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}
{{- end -}}

{{- define "aws-ebs-csi-driver.labels" -}}
{{ include "aws-ebs-csi-driver.selectorLabels" . }}
{{- if ne .Release.Name "kustomize" }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: csi-driver
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end }}
{{- with .Values.customLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "aws-ebs-csi-driver.feature" -}}
{{- if index (.Chart.Annotations | default dict) (printf "eksdoctor.io/feature-%s" .feature) -}}true{{- end -}}
{{- end -}}

{{- define "aws-ebs-csi-driver.image" -}}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) (.Values.image.tag | toString)) -}}
{{- end -}}

{{/* Appended to node tolerations since chart 2.36.0 (#2165). */}}
{{- define "aws-ebs-csi-driver.daemonset-tolerations" -}}
- key: "ebs.csi.aws.com/agent-not-ready"
  operator: "Exists"
- key: "ToBeDeletedByClusterAutoscaler"
  operator: Exists
- key: "karpenter.sh/disrupted"
  operator: Exists
- key: "karpenter.sh/disruption"
  operator: Exists
{{- end -}}

{{/*
Node tolerations for a DaemonSet, by chart version; called with (dict "root" $ "windows" bool).
- nodeTolerateAll (0.3.0-0.6.1): always "operator: Exists", then node.tolerations.
- otherwise node.tolerateAllTaints (0.6.2+) renders "operator: Exists"; when it is false:
  nodeLegacyTolerations (0.9.14-2.10.x) CriticalAddonsOnly and NoExecute 300s,
  nodeNoExecuteToleration (2.11.x) NoExecute 300s only, then node.tolerations, then
  agentNotReadyToleration (2.19.0-2.35.x, the Linux DaemonSet only) or
  daemonsetTolerations (2.36.0+, both DaemonSets).
*/}}
{{- define "aws-ebs-csi-driver.node-tolerations" -}}
{{- $root := .root -}}
{{- $f := dict "Chart" $root.Chart -}}
{{- if include "aws-ebs-csi-driver.feature" (set $f "feature" "nodeTolerateAll") }}
- operator: Exists
{{- with $root.Values.node.tolerations }}
{{ toYaml . }}
{{- end }}
{{- else if $root.Values.node.tolerateAllTaints }}
- operator: Exists
{{- else }}
{{- if include "aws-ebs-csi-driver.feature" (set $f "feature" "nodeLegacyTolerations") }}
- key: CriticalAddonsOnly
  operator: Exists
{{- end }}
{{- if or (include "aws-ebs-csi-driver.feature" (set $f "feature" "nodeLegacyTolerations")) (include "aws-ebs-csi-driver.feature" (set $f "feature" "nodeNoExecuteToleration")) }}
- operator: Exists
  effect: NoExecute
  tolerationSeconds: 300
{{- end }}
{{- with $root.Values.node.tolerations }}
{{ toYaml . }}
{{- end }}
{{- if include "aws-ebs-csi-driver.feature" (set $f "feature" "daemonsetTolerations") }}
{{ include "aws-ebs-csi-driver.daemonset-tolerations" $root }}
{{- else if and (not .windows) (include "aws-ebs-csi-driver.feature" (set $f "feature" "agentNotReadyToleration")) }}
- key: "ebs.csi.aws.com/agent-not-ready"
  operator: "Exists"
{{- end }}
{{- end }}
{{- end -}}

{{/* Node DaemonSet affinity: in the templates until 2.7.x, node.affinity from 2.8.0. */}}
{{- define "aws-ebs-csi-driver.node-affinity" -}}
{{- if include "aws-ebs-csi-driver.feature" (dict "Chart" .Chart "feature" "nodeFargateAffinity") -}}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: eks.amazonaws.com/compute-type
              operator: NotIn
              values: [fargate]
{{- else if .Values.node.affinity -}}
affinity:
  {{- toYaml .Values.node.affinity | nindent 2 }}
{{- end -}}
{{- end -}}
