#!/usr/bin/env bash
# Builds the pinned CLI tools into .bin/ when missing or at the wrong version.
#   scripts/tools.sh [tofu] [tfplugindocs] [golangci-lint]    (no argument: all three)
# Versions are pinned by the tool modules tools/tofu, tools/docs and tools/lint (go.mod + go.sum).
# Needs only Go and the module proxy. Cold OpenTofu build: ~3 minutes on 2 cores.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.bin"
mkdir -p "$bin"
# Temp builds need no VCS stamp, and stamping fails in checkouts owned by another user.
case " ${GOFLAGS:-} " in *" -buildvcs"*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false" ;; esac

# ensure <binary> <tools dir> <module whose version is pinned> [ldflags; @VERSION@ is the pinned version]
ensure() {
	local name=$1 dir=$2 mod=$3 ldflags=${4:-}
	local want have note=""
	[ "$name" != tofu ] || note="about 3 minutes on 2 cores when the Go build cache is cold"
	want=$(awk -v m="$mod" '$1 == m { print $2; exit }' "$root/tools/$dir/go.mod")
	if [ -z "$want" ]; then
		echo "tools.sh: $mod is not pinned in tools/$dir/go.mod" >&2
		exit 1
	fi
	have=""
	if [ -x "$bin/$name" ]; then
		have=$(go version -m "$bin/$name" 2>/dev/null | awk -v m="$mod" '$1 == "mod" && $2 == m { print $3; exit }' || true)
	fi
	if [ "$have" = "$want" ]; then
		return 0
	fi
	ldflags=${ldflags//@VERSION@/${want#v}}
	echo "tools.sh: building $name $want into .bin/ from tools/$dir${note:+ ($note)}" >&2
	GOBIN="$bin" go install -C "$root/tools/$dir" -ldflags "$ldflags" tool
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tofu tfplugindocs golangci-lint)
for t in "${targets[@]}"; do
	case "$t" in
	tofu) ensure tofu tofu github.com/opentofu/opentofu "-X github.com/opentofu/opentofu/version.dev=no" ;;
	tfplugindocs) ensure tfplugindocs docs github.com/hashicorp/terraform-plugin-docs ;;
	golangci-lint) ensure golangci-lint lint github.com/golangci/golangci-lint/v2 "-X main.version=@VERSION@" ;;
	*)
		echo "tools.sh: unknown tool $t (want tofu, tfplugindocs or golangci-lint)" >&2
		exit 2
		;;
	esac
done
