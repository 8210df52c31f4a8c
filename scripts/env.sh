# shellcheck shell=bash
# Source this file (". scripts/env.sh"); it does not change shell options.
# It exports what the Terraform CLI and terraform-plugin-testing need here:
#   TF_CLI_CONFIG_FILE     an existing file. If unset or pointing at a missing file, an empty
#                          .bin/empty.tfrc (a missing file breaks OpenTofu under terraform-exec).
#   TF_ACC_TERRAFORM_PATH  absolute path of the CLI chosen by scripts/tfcli.sh (OpenTofu is built
#                          from tools/tofu when no terraform/tofu is on PATH).
#   PVE_TF_CLI_KIND        "terraform" or "tofu" (for scripts; not read by Go code).
#   For OpenTofu only: TF_ACC_PROVIDER_HOST=registry.opentofu.org and
#   TF_ACC_PROVIDER_NAMESPACE=hashicorp (the address terraform-plugin-testing reattaches the
#   provider under; test configurations have no required_providers, so the CLI infers
#   hashicorp/pve). Values already set are kept, except that an OpenTofu host is dropped
#   for real Terraform.
#   CHECKPOINT_DISABLE=1   no version check calls.
#   GOFLAGS                gets -buildvcs=false unless it already sets -buildvcs.

_pve_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ -z "${TF_CLI_CONFIG_FILE:-}" ] || [ ! -f "${TF_CLI_CONFIG_FILE}" ]; then
	mkdir -p "$_pve_root/.bin"
	[ -f "$_pve_root/.bin/empty.tfrc" ] || : >"$_pve_root/.bin/empty.tfrc"
	export TF_CLI_CONFIG_FILE="$_pve_root/.bin/empty.tfrc"
fi
# Some OpenTofu releases also read TOFU_CLI_CONFIG_FILE; never let it point at a missing file.
if [ -n "${TOFU_CLI_CONFIG_FILE:-}" ] && [ ! -f "${TOFU_CLI_CONFIG_FILE}" ]; then
	export TOFU_CLI_CONFIG_FILE="$TF_CLI_CONFIG_FILE"
fi
export CHECKPOINT_DISABLE=1
# Temp builds need no VCS stamp, and stamping fails in checkouts owned by another user.
case " ${GOFLAGS:-} " in *" -buildvcs"*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false" ;; esac

if ! TF_ACC_TERRAFORM_PATH="$("$_pve_root/scripts/tfcli.sh")"; then
	echo "env.sh: no Terraform-compatible CLI (see scripts/tfcli.sh)" >&2
	return 1 2>/dev/null || exit 1
fi
export TF_ACC_TERRAFORM_PATH

case "$("$TF_ACC_TERRAFORM_PATH" version 2>/dev/null)" in
OpenTofu*)
	PVE_TF_CLI_KIND=tofu
	export TF_ACC_PROVIDER_HOST="${TF_ACC_PROVIDER_HOST:-registry.opentofu.org}"
	export TF_ACC_PROVIDER_NAMESPACE="${TF_ACC_PROVIDER_NAMESPACE:-hashicorp}"
	;;
*)
	PVE_TF_CLI_KIND=terraform
	if [ "${TF_ACC_PROVIDER_HOST:-}" = "registry.opentofu.org" ]; then
		unset TF_ACC_PROVIDER_HOST
	fi
	;;
esac
export PVE_TF_CLI_KIND
unset _pve_root
