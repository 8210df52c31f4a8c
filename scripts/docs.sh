#!/usr/bin/env bash
# Generates docs/ with tfplugindocs (pinned in tools/docs), offline.
#   scripts/docs.sh           regenerate docs/ from templates/, examples/ and the provider schema
#   scripts/docs.sh --check   generate into a temp copy and fail if docs/ differs
# tfplugindocs --tf-version always downloads a CLI, so the schema is produced here instead:
# the provider is built into a temp dir, a CLI config with dev_overrides points
# pvelab/pve at it (no init, no network), "<cli> providers schema -json" writes the
# schema, and tools/providerschema renames its key to "pve", the only form
# tfplugindocs v0.25 looks up besides registry.terraform.io/hashicorp/pve.
# Terraform and OpenTofu produce the same schema JSON for this provider.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*)
	echo "usage: scripts/docs.sh [--check]" >&2
	exit 2
	;;
esac

# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"
"$root/scripts/tools.sh" tfplugindocs
tfplugindocs="$root/.bin/tfplugindocs"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pve-docs.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/plugins" "$tmp/cfg"
go build -o "$tmp/plugins/terraform-provider-pve" .

cat >"$tmp/dev.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "registry.terraform.io/pvelab/pve" = "$tmp/plugins"
    "registry.opentofu.org/pvelab/pve" = "$tmp/plugins"
  }
  direct {}
}
TFRC
cat >"$tmp/cfg/main.tf" <<'TF'
terraform {
  required_providers {
    pve = {
      source = "pvelab/pve"
    }
  }
}
TF

TF_CLI_CONFIG_FILE="$tmp/dev.tfrc" TOFU_CLI_CONFIG_FILE="$tmp/dev.tfrc" \
	"$cli" -chdir="$tmp/cfg" providers schema -json >"$tmp/raw-schema.json"
go run -C "$root/tools/providerschema" . pve <"$tmp/raw-schema.json" >"$tmp/schema.json"

# generate <provider dir>: renders <provider dir>/docs from its templates/ and examples/.
generate() {
	local out
	if ! out=$("$tfplugindocs" generate \
		--provider-dir "$1" \
		--provider-name pve \
		--providers-schema "$tmp/schema.json" \
		--rendered-website-dir docs \
		--examples-dir examples \
		--website-source-dir templates \
		--website-temp-dir "$tmp/website" 2>&1); then
		printf '%s\n' "$out" >&2
		echo "docs.sh: tfplugindocs generate failed" >&2
		return 1
	fi
	# tfplugindocs reports missing examples/schemas as warnings on success; show them.
	printf '%s\n' "$out" | grep -i 'warn' >&2 || true
}

if ! $check; then
	generate "$root"
	echo "docs.sh: docs/ generated with $("$cli" version | head -n1) schema"
	exit 0
fi

mkdir -p "$tmp/src"
for d in templates examples docs; do
	if [ -d "$root/$d" ]; then
		cp -R "$root/$d" "$tmp/src/$d"
	fi
done
mkdir -p "$tmp/src/docs" "$tmp/empty-docs"
generate "$tmp/src"
want="$root/docs"
[ -d "$want" ] || want="$tmp/empty-docs"
if ! diff -ru "$want" "$tmp/src/docs" >"$tmp/docs.diff"; then
	sed -e "s#$tmp/src/docs#docs(generated)#g" -e "s#$root/##g" "$tmp/docs.diff" | head -n 200 >&2
	echo "docs/ is stale: run make docs" >&2
	exit 1
fi
echo "docs.sh: docs/ is up to date"
