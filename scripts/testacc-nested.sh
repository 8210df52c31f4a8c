#!/usr/bin/env bash
# make testacc-nested [T=<regexp>]: the acceptance tests against real PVE and real Ceph, nested
# on one PVE host (docs/guides/nested-lab.md):
#   1. checks what it needs (below) and says what is missing, before it touches anything;
#   2. builds the provider into a temp dir (dev_overrides: no registry) and copies
#      examples/nested-lab there (the state stays there, never in the repository);
#   3. applies it twice: the nested nodes' VMs powered off (their disks attach after them), then
#      started; the second apply waits until every nested API answers (NESTED_API_WAIT, 30m);
#   4. makes the nested nodes one cluster (examples/nested-lab/cluster);
#   5. runs make testacc against that cluster (T= passes through; PVE_* point at it, not the host);
#   6. destroys the nested lab, also after a failed step (NESTED_KEEP=1 keeps it): that removes
#      what step 3 created and nothing else: the VMs with their disks, the answer images, the
#      installer if it downloaded it, and the two internal bridges.
# The host, as for make testacc: PVE_ENDPOINT, PVE_API_TOKEN (or PVE_USERNAME=root@pam and
# PVE_PASSWORD), PVE_TLS_FINGERPRINT (or a certificate this machine trusts). Then:
#   NESTED_NODE        the host's node name (PVE UI: Datacenter > the node)
#   NESTED_ADDRESSES   the nested nodes' management addresses on the host's vmbr0 network,
#                      node=cidr pairs: z2g4a=192.168.1.71/24,z2g4b=192.168.1.72/24,z2g4c=...
#                      (free addresses this machine reaches; node names from the lab file)
#   NESTED_GATEWAY     their gateway (and DNS server unless NESTED_DNS is set)
#   NESTED_INSTALLER   a PVE ISO on the host prepared for unattended installs, as a volume id
#                      (local:iso/proxmox-ve_9.1-1-auto-from-partition.iso), made on the host with
#                        apt install proxmox-auto-install-assistant xorriso
#                        proxmox-auto-install-assistant prepare-iso /var/lib/vz/template/iso/proxmox-ve_9.1-1.iso \
#                          --fetch-from partition
#                      or NESTED_INSTALLER_URL (+ NESTED_INSTALLER_SHA256) where the host downloads one
# Optional: NESTED_LAB (a shipped lab or a lab file; default reference), NESTED_BRIDGE (vmbr0),
# NESTED_VMID_BASE (9101), NESTED_MEMORY (MiB, 6144), NESTED_API_WAIT (30m), NESTED_KEEP=1.
set -euo pipefail
trap 'echo "testacc-nested: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pvesim_root=$root
pvesim_tag=testacc-nested
# shellcheck source=scripts/lib/pvesim.sh
. "$root/scripts/lib/pvesim.sh"
pvesim_no_args "${BASH_SOURCE[0]}" "$@"

# 1. What it needs, all missing pieces at once.
missing=()
[ -n "${PVE_ENDPOINT:-}" ] || missing+=("PVE_ENDPOINT: the host's API, such as https://pve-host.example:8006")
[ -n "${PVE_API_TOKEN:-}" ] || [ -n "${PVE_PASSWORD:-}" ] ||
	missing+=("PVE_API_TOKEN (user@realm!name=secret), or PVE_USERNAME=root@pam and PVE_PASSWORD: credentials on the host")
[ -n "${NESTED_NODE:-}" ] || missing+=("NESTED_NODE: the host's node name")
[ -n "${NESTED_ADDRESSES:-}" ] || missing+=("NESTED_ADDRESSES: node=cidr,... free management addresses on the host's vmbr0 network")
[ -n "${NESTED_GATEWAY:-}" ] || missing+=("NESTED_GATEWAY: the nested nodes' gateway on that network")
[ -n "${NESTED_INSTALLER:-}" ] || [ -n "${NESTED_INSTALLER_URL:-}" ] ||
	missing+=("NESTED_INSTALLER (an ISO volume on the host prepared with proxmox-auto-install-assistant prepare-iso --fetch-from partition) or NESTED_INSTALLER_URL")
if [ "${#missing[@]}" -gt 0 ]; then
	{
		echo "testacc-nested: runs the acceptance tests on PVE nodes nested in VMs on one PVE host, and needs:"
		printf '  - %s\n' "${missing[@]}"
		echo "The host needs nested virtualisation (cat /sys/module/kvm_intel/parameters/nested, or kvm_amd: Y or 1),"
		echo "about 20 GiB of free RAM and 150 GiB on its disk storage for the reference lab's three nodes; an install"
		echo "takes 10 to 20 minutes, the whole run one to two hours. See docs/guides/nested-lab.md or scripts/testacc-nested.sh --help."
	} >&2
	exit 2
fi

json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}
# node=cidr,node=cidr as an HCL map.
addresses="{"
IFS=',' read -r -a pairs <<<"$NESTED_ADDRESSES"
for p in "${pairs[@]}"; do
	[[ "$p" == *=*/* ]] || pvesim_die "NESTED_ADDRESSES: $p is not node=address/prefix, such as z2g4a=192.168.1.71/24"
	addresses+=" $(json_str "${p%%=*}") = $(json_str "${p#*=}"),"
done
addresses+=" }"

lab_file="$(pvesim_resolve_lab "${NESTED_LAB:-reference}")"
# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pve-nested.XXXXXX")"
pvesim_log "work dir $tmp (state, logs)"
pvesim_build "$tmp"
work="$tmp/repo/examples/nested-lab"
mkdir -p "$work/cluster" "$tmp/repo/examples/labs"
cp "$root"/examples/nested-lab/*.tf "$root"/examples/nested-lab/*.tftpl "$work/"
cp "$root"/examples/nested-lab/cluster/*.tf "$work/cluster/"
pvesim_dev_tfrc "$tmp/dev.tfrc" "$tmp/plugins"

# The nested nodes' root password and SSH key: made here, for this lab only.
root_password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
ssh_keys="[]"
if command -v ssh-keygen >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -C nested-lab -f "$tmp/id_nested"
	ssh_keys="[$(json_str "$(cat "$tmp/id_nested.pub")")]"
fi
if [ -n "${NESTED_INSTALLER_URL:-}" ]; then
	installer="{ url = $(json_str "$NESTED_INSTALLER_URL"), file_name = $(json_str "$(basename "${NESTED_INSTALLER_URL%%\?*}")")"
	[ -z "${NESTED_INSTALLER_SHA256:-}" ] || installer+=", sha256 = $(json_str "$NESTED_INSTALLER_SHA256")"
	installer+=" }"
else
	installer="{ volume = $(json_str "$NESTED_INSTALLER") }"
fi
host="{ endpoint = $(json_str "$PVE_ENDPOINT"), node = $(json_str "$NESTED_NODE")"
if [ -n "${PVE_API_TOKEN:-}" ]; then host+=", api_token = $(json_str "$PVE_API_TOKEN")"; else host+=", password = $(json_str "$PVE_PASSWORD")"; fi
[ -z "${PVE_TLS_FINGERPRINT:-}" ] || host+=", tls_fingerprint = $(json_str "$PVE_TLS_FINGERPRINT")"
host+=" }"
umask 077
cat >"$work/terraform.tfvars" <<EOF
host          = $host
lab_file      = $(json_str "$lab_file")
root_password = $(json_str "$root_password")
root_ssh_keys = $ssh_keys
installer     = $installer
vmid_base     = ${NESTED_VMID_BASE:-9101}
memory        = ${NESTED_MEMORY:-6144}
api_wait      = $(json_str "${NESTED_API_WAIT:-30m}")
management = {
  bridge    = $(json_str "${NESTED_BRIDGE:-vmbr0}")
  addresses = $addresses
  gateway   = $(json_str "$NESTED_GATEWAY")
  dns       = $(json_str "${NESTED_DNS:-$NESTED_GATEWAY}")
}
EOF

# The CLI sees only its dev_overrides config; the host's PVE_* stay out of the CLI's provider
# (the configuration has its credentials in terraform.tfvars).
tf() {
	env -u PVE_ENDPOINT -u PVE_API_TOKEN -u PVE_USERNAME -u PVE_PASSWORD -u PVE_TLS_FINGERPRINT \
		TF_CLI_CONFIG_FILE="$tmp/dev.tfrc" TOFU_CLI_CONFIG_FILE="$tmp/dev.tfrc" TF_IN_AUTOMATION=1 \
		"$cli" "-chdir=$1" "$2" -no-color "${@:3}"
}

created=""
cleanup() {
	local rc=$?
	trap - ERR
	if [ -n "$created" ] && [ -z "${NESTED_KEEP:-}" ]; then
		pvesim_log "destroying the nested lab (what this run created on $NESTED_NODE)"
		if ! tf "$work" destroy -auto-approve -input=false >"$tmp/destroy.log" 2>&1; then
			echo "testacc-nested: destroy failed; see $tmp/destroy.log, and run again: $cli -chdir=$work destroy (TF_CLI_CONFIG_FILE=$tmp/dev.tfrc)" >&2
			rc=1
		fi
	elif [ -n "$created" ]; then
		pvesim_log "NESTED_KEEP=1: the nested lab stays; remove it with TF_CLI_CONFIG_FILE=$tmp/dev.tfrc $cli -chdir=$work destroy"
	fi
	exit "$rc"
}
trap cleanup EXIT

# 3. The nested lab: powered off with its disks, then started, waiting for the APIs.
pvesim_log "applying examples/nested-lab on $NESTED_NODE (VMs powered off)"
created=1
tf "$work" apply -auto-approve -input=false -var power_on=false >"$tmp/apply-1.log" 2>&1 ||
	pvesim_die "apply failed; see $tmp/apply-1.log"
pvesim_log "starting the nested nodes; waiting up to ${NESTED_API_WAIT:-30m} for each nested API (unattended install)"
tf "$work" apply -auto-approve -input=false >"$tmp/apply-2.log" 2>&1 ||
	pvesim_die "apply failed; see $tmp/apply-2.log (the nested nodes' consoles on the host show the installer)"
tf "$work" output -json nodes >"$tmp/nodes.json"

# 4. One cluster of them.
pvesim_log "forming the cluster (examples/nested-lab/cluster)"
TF_VAR_nodes="$(cat "$tmp/nodes.json")" tf "$work/cluster" apply -auto-approve -input=false >"$tmp/cluster.log" 2>&1 ||
	pvesim_die "cluster apply failed; see $tmp/cluster.log"
founding="$(tf "$work/cluster" output -raw founding_node)"
# Joining gives a node a certificate signed by the cluster's CA: read the fingerprints again.
tf "$work" apply -refresh-only -auto-approve -input=false >"$tmp/refresh.log" 2>&1 ||
	pvesim_die "refresh failed; see $tmp/refresh.log"
tf "$work" output -json nodes >"$tmp/nodes.json"
field() { "$pvesim_bin/jsonfield" "$founding.$1" <"$tmp/nodes.json"; }

# 5. The acceptance tests against the nested cluster: its PVE_*, never the host's.
pvesim_log "running the acceptance tests against $(field endpoint)"
ssh_env=()
if [ -f "$tmp/id_nested" ]; then
	# A lab this run made: its host keys are new, first use is trusted.
	ssh_env=(PVE_SSH_USERNAME=root PVE_SSH_PRIVATE_KEY="$(cat "$tmp/id_nested")" PVE_SSH_TRUST_ON_FIRST_USE=1)
fi
status=0
env -u PVE_API_TOKEN PVE_ENDPOINT="$(field endpoint)" PVE_USERNAME=root@pam PVE_PASSWORD="$(field password)" \
	PVE_TLS_FINGERPRINT="$(field tls_fingerprint)" PVE_ACC_NICS=ens19,ens20 "${ssh_env[@]}" \
	make -C "$root" testacc T="${T:-.}" || status=$?
if [ "$status" -ne 0 ]; then
	echo "testacc-nested: acceptance tests failed (exit $status)" >&2
	exit "$status"
fi
pvesim_log "acceptance tests passed"
