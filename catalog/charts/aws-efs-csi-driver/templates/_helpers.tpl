{{/*
Reduced helpers of the aws-efs-csi-driver chart (kubernetes-sigs/aws-efs-csi-driver
charts/aws-efs-csi-driver/templates/_helpers.tpl): the name, and the switch the reduced
templates read the chart version's features through.
*/}}
{{- define "aws-efs-csi-driver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "aws-efs-csi-driver.feature" -}}
{{- if index (.Chart.Annotations | default dict) (printf "eksdoctor.io/feature-%s" .feature) -}}true{{- end -}}
{{- end -}}

{{- define "aws-efs-csi-driver.image" -}}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) (toString .Values.image.tag)) -}}
{{- end -}}

{{/*
A container port as the scheduler sees it: a pod with hostNetwork takes its container
ports on the node, so the API server gives each the hostPort of its containerPort
(Kubernetes SetDefaults_PodSpec; since 1.28 on the pods, not on their templates:
feature gate DefaultHostNetworkHostPortsInPodTemplates). The chart writes only
containerPort; hostPort is written here so the rendered pod asks for the node port
as the created pod does. Called with (dict "name" "containerPort" "hostNetwork").
*/}}
{{- define "aws-efs-csi-driver.port" -}}
- name: {{ .name }}
  containerPort: {{ .containerPort }}
  {{- if .hostNetwork }}
  hostPort: {{ .containerPort }}
  {{- end }}
  protocol: TCP
{{- end -}}
