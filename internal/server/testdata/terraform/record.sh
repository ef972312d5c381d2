#!/bin/bash
# Re-records SCENARIO/provider-v3.jsonl (SCENARIO: access, or resources):
# Unleash's Terraform provider (built from a checkout of
# Unleash/terraform-provider-unleash, with a replace of
# github.com/Unleash/unleash-server-api-go to a checkout of its client)
# applies SCENARIO/main.tf against a fresh Bunting through a recording
# proxy, then plans (no changes expected), applies stage 2, plans again and
# destroys.
#
#   PROVIDER_DIR=dir-with-terraform-provider-unleash-binary \
#   BUNTING=path/to/bunting RECORDER=path/to/recorder ./record.sh SCENARIO
#
# RECORDER is any proxy that listens on 127.0.0.1:4243, forwards to its
# first argument and appends {method, path, requestBody, status,
# responseBody} lines to its second. Every command must succeed.
set -euo pipefail
here=$(cd "$(dirname "$0")/$1" && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/terraformrc" <<RC
provider_installation {
  dev_overrides { "registry.terraform.io/unleash/unleash" = "$PROVIDER_DIR" }
  direct {}
}
RC
PORT=4242 HTTP_HOST=127.0.0.1 DATABASE_PATH="$work/bunting.db" INIT_ADMIN_API_TOKENS='*:*.tf-admin-secret' \
  INIT_ADMIN_USER=admin INIT_ADMIN_PASSWORD=test-admin-password LOG_LEVEL=warn "$BUNTING" server &
"$RECORDER" http://127.0.0.1:4242 "$work/rec.jsonl" &
until curl -sf http://127.0.0.1:4242/health >/dev/null; do sleep 0.5; done
sleep 0.5 # the recorder
cp "$here/main.tf" "$work/"
cd "$work"
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1
step() { echo "{\"step\":\"$1\"}" >> rec.jsonl; }
step apply-1; terraform apply -auto-approve -parallelism=1 -var stage=1
step plan-1; terraform plan -detailed-exitcode -parallelism=1 -var stage=1
step apply-2; terraform apply -auto-approve -parallelism=1 -var stage=2
step plan-2; terraform plan -detailed-exitcode -parallelism=1 -var stage=2
step destroy; terraform destroy -auto-approve -parallelism=1 -var stage=2
# Links carry one-time secrets of this throwaway server: keep their shape only.
sed -E 's#http://127\.0\.0\.1:[0-9]+#http://bunting.example#g; s#token=[0-9a-f]+#token=REDACTED#g' rec.jsonl > "$here/provider-v3.jsonl"
