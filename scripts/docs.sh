#!/usr/bin/env bash
# Generates docs/ with tfplugindocs (pinned in tools/docs), offline.
#   scripts/docs.sh           regenerate docs/ from templates/, examples/ and the provider schema
#   scripts/docs.sh --check   generate into a temp copy and fail if docs/ differs
# Both run "tfplugindocs validate" on the result and fail if it finds a problem.
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

# The source tree tfplugindocs reads: templates/ (with resources.md.tmpl also serving as data-sources.md.tmpl, so
# the subcategory of every type is stated once), examples/ and a copy of docs/.
src="$tmp/src"
mkdir -p "$src"
cp -R "$root/templates" "$root/examples" "$src/"
layout="$src/templates/resources.md.tmpl"
cp "$layout" "$src/templates/data-sources.md.tmpl"
# templates/{resources,data-sources}/<name>.md.tmpl hold only a type's prose past its schema description's summary;
# each becomes that type's page template (tfplugindocs' per-type name: <name> without "pve_"): the one layout with
# the prose in place of its PROSE line. A file named for no type fails the generate ("... does not exist").
marker='{{- /* PROSE */}}'
if [ "$(grep -cxF "$marker" "$layout")" != 1 ]; then
	echo "docs.sh: templates/resources.md.tmpl needs exactly one line $marker" >&2
	exit 1
fi
for prose in "$src"/templates/resources/*.md.tmpl "$src"/templates/data-sources/*.md.tmpl; do
	[ -f "$prose" ] || continue
	awk -v marker="$marker" -v prose="$prose" '
		$0 == marker { print ""; while ((getline line < prose) > 0) print line; next }
		{ print }' "$layout" >"$tmp/page.md.tmpl"
	mv "$tmp/page.md.tmpl" "$prose"
done
if [ -d "$root/docs" ]; then cp -R "$root/docs" "$src/docs"; else mkdir -p "$src/docs"; fi

out=""
if ! out=$("$tfplugindocs" generate \
	--provider-dir "$src" \
	--provider-name pve \
	--providers-schema "$tmp/schema.json" \
	--rendered-website-dir docs \
	--examples-dir examples \
	--website-source-dir templates \
	--website-temp-dir "$tmp/website" 2>&1); then
	printf '%s\n' "$out" >&2
	echo "docs.sh: tfplugindocs generate failed" >&2
	exit 1
fi
# tfplugindocs reports missing examples/schemas as warnings on success; show them.
printf '%s\n' "$out" | grep -i 'warn' >&2 || true

# The registry's checks, offline: front matter, file layout, every page of the schema present, and each
# resource and data source in one of the subcategories below (a type missing from templates/resources.md.tmpl
# has none and fails here).
if ! out=$("$tfplugindocs" validate \
	--provider-dir "$src" \
	--provider-name pve \
	--providers-schema "$tmp/schema.json" \
	--allowed-resource-subcategories "Network,Cluster,Ceph,Storage,Guests,Node,Certificates" 2>&1); then
	printf '%s\n' "$out" >&2
	echo "docs.sh: tfplugindocs validate failed" >&2
	exit 1
fi

if ! $check; then
	rm -rf "$root/docs"
	cp -R "$src/docs" "$root/docs"
	echo "docs.sh: docs/ generated with $("$cli" version | head -n1) schema and validated"
	exit 0
fi

want="$root/docs"
[ -d "$want" ] || want="$tmp/empty-docs"
mkdir -p "$tmp/empty-docs"
if ! diff -ru "$want" "$src/docs" >"$tmp/docs.diff"; then
	sed -e "s#$src/docs#docs(generated)#g" -e "s#$root/##g" "$tmp/docs.diff" | head -n 200 >&2
	echo "docs/ is stale: run make docs" >&2
	exit 1
fi
echo "docs.sh: docs/ is up to date and valid"
