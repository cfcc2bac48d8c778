{{/*
Reduced helpers of the Karpenter chart (aws/karpenter-provider-aws charts/karpenter/templates/_helpers.tpl):
the names and labels the workloads carry, and the label selector the chart adds to pod
(anti-)affinity terms and topology spread constraints that have none.
*/}}
{{- define "karpenter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "karpenter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "karpenter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karpenter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "karpenter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "karpenter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "karpenter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "karpenter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "karpenter.feature" -}}
{{- if index (.Chart.Annotations | default dict) (printf "eksdoctor.io/feature-%s" .feature) -}}true{{- end -}}
{{- end -}}

{{/* The affinity with the default label selector added where a pod (anti-)affinity term has none. */}}
{{- define "karpenter.patchedAffinity" -}}
{{- $sel := dict "matchLabels" (include "karpenter.selectorLabels" . | fromYaml) -}}
{{- $aff := deepCopy .Values.affinity -}}
{{- range $kind := list "podAffinity" "podAntiAffinity" -}}
{{- $a := get $aff $kind -}}
{{- if $a -}}
{{- range $t := (get $a "requiredDuringSchedulingIgnoredDuringExecution" | default list) -}}
{{- if not (hasKey $t "labelSelector") -}}{{- $_ := set $t "labelSelector" $sel -}}{{- end -}}
{{- end -}}
{{- range $t := (get $a "preferredDuringSchedulingIgnoredDuringExecution" | default list) -}}
{{- if and (hasKey $t "podAffinityTerm") (not (hasKey $t.podAffinityTerm "labelSelector")) -}}{{- $_ := set $t.podAffinityTerm "labelSelector" $sel -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $aff -}}
{{- end -}}

{{- define "karpenter.patchedTopologySpreadConstraints" -}}
{{- $sel := dict "matchLabels" (include "karpenter.selectorLabels" . | fromYaml) -}}
{{- $out := list -}}
{{- range $t := .Values.topologySpreadConstraints -}}
{{- $c := deepCopy $t -}}
{{- if not (hasKey $c "labelSelector") -}}{{- $_ := set $c "labelSelector" $sel -}}{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* Charts before 0.26 take controller.image as one string (stamped at release, so the
range defaults blank it and the image is named from the chart version). */}}
{{- define "karpenter.controller.image" -}}
{{- if kindIs "map" .Values.controller.image -}}
{{- $tag := .Values.controller.image.tag | default .Chart.AppVersion | toString -}}
{{- if and (include "karpenter.feature" (dict "Chart" .Chart "feature" "vImageTag")) (not (hasPrefix "v" $tag)) -}}
{{- $tag = printf "v%s" $tag -}}
{{- end -}}
{{- printf "%s:%s" .Values.controller.image.repository $tag -}}
{{- else -}}
{{- .Values.controller.image | default (printf "public.ecr.aws/karpenter/controller:v%s" .Chart.AppVersion) | toString -}}
{{- end -}}
{{- end -}}
