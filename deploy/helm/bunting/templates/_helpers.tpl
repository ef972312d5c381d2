{{/* Names. */}}
{{- define "bunting.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "bunting.fullname" -}}
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

{{- define "bunting.proxyName" -}}
{{- printf "%s-proxy" (include "bunting.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "bunting.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "bunting.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "bunting.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Labels; call with (dict "ctx" $ "component" "server"). */}}
{{- define "bunting.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "bunting.selectorLabels" . }}
app.kubernetes.io/version: {{ default .ctx.Chart.AppVersion .ctx.Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end -}}

{{- define "bunting.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bunting.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The settings the chart cannot run with, refused with fail so that
`helm install` stops before anything is applied.
*/}}
{{- define "bunting.validate" -}}
{{- $db := .Values.database.type -}}
{{- if not (has $db (list "sqlite" "postgres")) -}}
{{- fail (printf "database.type must be sqlite or postgres (got %q)" $db) -}}
{{- end -}}
{{- if eq $db "sqlite" -}}
{{- if gt (int .Values.server.replicaCount) 1 -}}
{{- fail (printf "server.replicaCount is %d, but SQLite serves one replica: the database is a file on one volume. Run several replicas on PostgreSQL (database.type=postgres, database.postgres.existingSecret), or set server.replicaCount=1." (int .Values.server.replicaCount)) -}}
{{- end -}}
{{- if .Values.server.autoscaling.enabled -}}
{{- fail "server.autoscaling.enabled needs database.type=postgres: SQLite serves one replica" -}}
{{- end -}}
{{- else -}}
{{- if not .Values.database.postgres.existingSecret -}}
{{- fail "database.type=postgres needs database.postgres.existingSecret: the name of a Secret holding the PostgreSQL URL (key database.postgres.secretKey)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.proxy.enabled (not .Values.proxy.existingSecret) (or (not .Values.proxy.apiToken) (not .Values.proxy.clientKeys)) -}}
{{- fail "proxy.enabled needs proxy.existingSecret, or proxy.apiToken and proxy.clientKeys" -}}
{{- end -}}
{{- end -}}

{{/* The server's pod template volumes. */}}
{{- define "bunting.dataVolume" -}}
- name: data
{{- if and (eq .Values.database.type "sqlite") .Values.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-data" (include "bunting.fullname" .)) .Values.persistence.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: tmp
  emptyDir: {}
{{- end -}}
