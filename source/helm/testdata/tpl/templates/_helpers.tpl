{{- define "tpl.name" -}}{{ .Release.Name }}-pool{{- end -}}
