{{/* The chart's name, overridable. */}}
{{- define "kto.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name alone when it already contains the chart's name. */}}
{{- define "kto.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "kto.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "kto.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "kto.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The standard labels (https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/). */}}
{{- define "kto.labels" -}}
helm.sh/chart: {{ include "kto.chart" . }}
{{ include "kto.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kafka-topic-operator
{{- end }}

{{- define "kto.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kto.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "kto.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kto.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kto.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The RBAC rules, shared by the ClusterRole (all namespaces) and the per-namespace Roles. */}}
{{- define "kto.rules" -}}
- apiGroups: [kto.dev]
  resources: [kafkatopics, kafkaclusters]
  verbs: [list, watch, patch]
- apiGroups: [kto.dev]
  resources: [kafkatopics/status, kafkaclusters/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
{{- end }}

{{/* The namespaces that hold KafkaClusters, where the operator may read Secrets (a KafkaCluster's TLS and
     credentials) and the admission policy takes its parameters: clusterNamespaces, or the release's own when it is
     empty, and the namespace of every KafkaCluster the chart itself declares. */}}
{{- define "kto.clusterNamespaces" -}}
{{- $namespaces := .Values.clusterNamespaces | default (list .Release.Namespace) -}}
{{- range .Values.clusters }}
{{- $namespaces = append $namespaces (default $.Release.Namespace .namespace) -}}
{{- end }}
{{- $namespaces | compact | uniq | toJson -}}
{{- end }}

{{/* The rules for cluster-scoped resources, in a ClusterRole whatever watchNamespaces says: the Namespaces (kopf
     watches their labels for the tenants' namespaceSelector grants, and a standby answering the webhook lists the
     one a review comes from). The webhook's configuration is the chart's: the operator needs no right on it. */}}
{{- define "kto.clusterRules" -}}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end }}

{{/* The ValidatingWebhookConfiguration the operator kept itself before the chart made it (kopf's managed one). */}}
{{- define "kto.webhookConfiguration" -}}
kafka-topic-operator.kto.dev
{{- end }}
