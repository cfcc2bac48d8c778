{{- define "eksdoctor.labels" -}}
app.kubernetes.io/name: eksdoctor
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "eksdoctor.selector" -}}
app.kubernetes.io/name: eksdoctor
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "eksdoctor.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "eksdoctor.pod" -}}
serviceAccountName: {{ .Release.Name }}
automountServiceAccountToken: true
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "eksdoctor.container" -}}
image: {{ include "eksdoctor.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
resources:
  {{- toYaml .Values.resources | nindent 2 }}
{{- end -}}
