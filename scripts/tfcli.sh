#!/usr/bin/env bash
# Prints the absolute path of a Terraform-compatible CLI, in this order:
#   1. $TF_ACC_TERRAFORM_PATH, if set (must be executable)
#   2. terraform on PATH
#   3. tofu on PATH
#   4. .bin/tofu, the OpenTofu pinned in tools/tofu (built with Go if missing)
# Build progress goes to stderr; stdout is only the path.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

abspath() {
	local p=$1
	case "$p" in
	/*) ;;
	*) p="$PWD/$p" ;;
	esac
	printf '%s/%s\n' "$(cd "$(dirname "$p")" && pwd -P)" "$(basename "$p")"
}

if [ -n "${TF_ACC_TERRAFORM_PATH:-}" ]; then
	if [ ! -x "$TF_ACC_TERRAFORM_PATH" ] || [ -d "$TF_ACC_TERRAFORM_PATH" ]; then
		echo "tfcli.sh: TF_ACC_TERRAFORM_PATH=$TF_ACC_TERRAFORM_PATH is not an executable file" >&2
		exit 1
	fi
	abspath "$TF_ACC_TERRAFORM_PATH"
	exit 0
fi

for name in terraform tofu; do
	if p=$(command -v "$name" 2>/dev/null) && [ -n "$p" ] && [ -x "$p" ]; then
		abspath "$p"
		exit 0
	fi
done

"$root/scripts/tools.sh" tofu >&2
echo "$root/.bin/tofu"
