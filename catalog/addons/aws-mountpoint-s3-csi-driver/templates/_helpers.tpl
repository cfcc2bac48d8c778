{{- define "s3.feature" -}}
{{- if index (.Chart.Annotations | default dict) (printf "eksdoctor.io/feature-%s" .feature) -}}true{{- end -}}
{{- end -}}
