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

{{/* Node tolerations for a DaemonSet, by chart version. */}}
{{- define "aws-ebs-csi-driver.node-tolerations" -}}
{{- if .Values.node.tolerateAllTaints }}
- operator: Exists
{{- else }}
{{- if include "aws-ebs-csi-driver.feature" (dict "Chart" .Chart "feature" "legacyTolerations") }}
- key: CriticalAddonsOnly
  operator: Exists
- operator: Exists
  effect: NoExecute
  tolerationSeconds: 300
{{- end }}
{{- with .Values.node.tolerations }}
{{ toYaml . }}
{{- end }}
{{- if include "aws-ebs-csi-driver.feature" (dict "Chart" .Chart "feature" "daemonsetTolerations") }}
{{ include "aws-ebs-csi-driver.daemonset-tolerations" . }}
{{- else if include "aws-ebs-csi-driver.feature" (dict "Chart" .Chart "feature" "agentNotReadyToleration") }}
- key: "ebs.csi.aws.com/agent-not-ready"
  operator: "Exists"
{{- end }}
{{- end }}
{{- end -}}
