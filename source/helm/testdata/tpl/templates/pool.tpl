apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "tpl.name" . }}
