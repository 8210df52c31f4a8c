#!/usr/bin/env bash
# make sim [LAB=<lab file or shipped lab name>] [START=<state>] [PVE_RELEASE=<release>] [SIM_DIR=<dir>]
#          [SIM_PORT=<port>] [SIM_ARGS="<more pvesim flags>"] [FAULTS="<fault spec>"] [FAULT_SEED=<n>]:
# starts pvesim from a lab file (default: examples/labs/reference/lab.json) and keeps it
# running in the foreground until Ctrl-C, for your own configuration. It writes to SIM_DIR
# (default .sim/ in the repository, ignored by git):
#   pvesim.env     TF_VAR_nodes and TF_VAR_ssh as make lab builds them (examples/homelab's
#                  variables) and TF_CLI_CONFIG_FILE;
#   provider.env   PVE_ENDPOINT / PVE_API_TOKEN / PVE_TLS_FINGERPRINT of the first node,
#                  for a provider block without credentials (not in pvesim.env: the
#                  provider refuses a token from the environment beside a password);
#   dev.tfrc       a CLI config whose dev_overrides use the provider built into
#                  SIM_DIR/plugins (export TF_CLI_CONFIG_FILE=<it>; no terraform init);
#   known_hosts    every node's sshd host key; id_lab the lab's root key;
#   pvesim.json    pvesim's JSON line (every node's endpoint, credentials, sshd);
#   requests.jsonl every API request; state.json pvesim's state; pvesim.log its log;
#   HOWTO.txt      what is printed at start.
# Every start is a fresh lab (the lab file's starting state): remove your configuration's
# terraform.tfstate when you restart the simulator.
# FAULTS is a fault spec (pvesim -h: "read /nodes/*/ceph/**=5xx:20%; task qmcreate=fail-late:1x")
# or @file; FAULT_SEED seeds its rates. Faulted requests carry "fault" and "fault_rule" in
# requests.jsonl. pvesim's control listener (printed at start) replaces or clears them:
#   curl -X PUT --data-binary 'write **=lock:10%' <control>/faults;  curl -X DELETE <control>/faults
set -euo pipefail
# A step that fails says which (set -e alone stops without a word).
trap 'echo "sim.sh: failed: $BASH_COMMAND (line $LINENO)" >&2' ERR

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pvesim_root=$root
pvesim_tag=sim.sh
# shellcheck source=scripts/lib/pvesim.sh
. "$root/scripts/lib/pvesim.sh"
pvesim_no_args "${BASH_SOURCE[0]}" "$@"

lab_file="${LAB:-}"
sim_dir="${SIM_DIR:-$root/.sim}"
mkdir -p "$sim_dir"
sim_dir="$(cd "$sim_dir" && pwd)"

# The CLI that make lab would use (terraform or tofu on PATH, else OpenTofu built from
# tools/tofu), so that the how-to names a command that exists here.
# shellcheck source=scripts/env.sh
. "$root/scripts/env.sh"
cli="$TF_ACC_TERRAFORM_PATH"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	pvesim_stop
	if [ "$rc" -ne 0 ] && [ -s "$sim_dir/pvesim.log" ]; then
		echo "--- last lines of the pvesim log ---" >&2
		tail -n 30 "$sim_dir/pvesim.log" >&2 || true
	fi
	exit "$rc"
}
trap cleanup EXIT
# Ctrl-C is how the simulator is meant to stop: not a failure.
trap 'exit 0' INT TERM

echo "sim.sh: building pvesim and the provider into $sim_dir"
pvesim_build "$sim_dir"
pvesim_lab_args "$sim_dir" "$lab_file" "${START:-}" "${PVE_RELEASE:-}"
port="${SIM_PORT:-$(pvesim_free_port "$pvesim_node_count")}"
fault_args=(-control 127.0.0.1:0)
[ -z "${FAULTS:-}" ] || fault_args+=(-faults "$FAULTS")
[ -z "${FAULT_SEED:-}" ] || fault_args+=(-fault-seed "$FAULT_SEED")
# shellcheck disable=SC2086 # SIM_ARGS are words on purpose
pvesim_start "$sim_dir" "$port" "${fault_args[@]}" ${SIM_ARGS:-}
pvesim_client_files "$sim_dir"
pvesim_dev_tfrc "$sim_dir/dev.tfrc" "$sim_dir/plugins"

# The env files: single-quoted values (none holds a quote), sourceable by sh and bash.
# pvesim.env is for a configuration like examples/homelab (credentials from
# var.nodes); provider.env for a provider block without any (credentials from the
# environment). Not one file: the provider refuses an API token from PVE_API_TOKEN
# beside a username/password in the configuration.
{
	echo "# pvesim ${pvesim_lab:+(${pvesim_lab#"$root"/}) }$(date -u +%Y-%m-%dT%H:%M:%SZ), pid $pvesim_pid"
	echo "# Node variables as examples/homelab declares them (variables.tf):"
	printf "export TF_VAR_nodes='%s'\n" "$TF_VAR_nodes"
	printf "export TF_VAR_ssh='%s'\n" "$TF_VAR_ssh"
	echo "# The provider built from this checkout, without terraform init:"
	printf "export TF_CLI_CONFIG_FILE='%s'\n" "$sim_dir/dev.tfrc"
	printf "export TOFU_CLI_CONFIG_FILE='%s'\n" "$sim_dir/dev.tfrc"
} >"$sim_dir/pvesim.env"
{
	echo "# pvesim: the first node's API for a provider block without credentials (an API"
	echo "# token; forming or joining a cluster needs root@pam, as TF_VAR_nodes in pvesim.env has it)."
	printf "export PVE_ENDPOINT='%s'\n" "$(pvesim_field nodes.0.endpoint)"
	printf "export PVE_API_TOKEN='%s'\n" "$(pvesim_field nodes.0.api_token)"
	printf "export PVE_TLS_FINGERPRINT='%s'\n" "$(pvesim_field nodes.0.tls_fingerprint)"
	printf "export TF_CLI_CONFIG_FILE='%s'\n" "$sim_dir/dev.tfrc"
	printf "export TOFU_CLI_CONFIG_FILE='%s'\n" "$sim_dir/dev.tfrc"
} >"$sim_dir/provider.env"
chmod 600 "$sim_dir/pvesim.env" "$sim_dir/provider.env"

rel="${sim_dir#"$root"/}"
[ "$rel" != "$sim_dir" ] || rel=$sim_dir
cat >"$sim_dir/HOWTO.txt" <<HOWTO
pvesim (pid $pvesim_pid) serves ${pvesim_lab:+${pvesim_lab#"$root"/}: }$pvesim_nodes
$(pvesim_node_table)
Each node answers on its own 127.0.0.1 port (the management addresses above are what
the lab file gave the installer; the configuration's interfaces hold them).

In another shell, from your configuration's directory: for one that declares the
variables "nodes" and "ssh" as examples/homelab/variables.tf does,

  . $sim_dir/pvesim.env
  $(basename "$cli") apply

pvesim.env sets TF_VAR_nodes and TF_VAR_ssh and does
  export TF_CLI_CONFIG_FILE=$sim_dir/dev.tfrc
(dev_overrides: the provider built into $rel/plugins; no init needed). For a
provider "pve" {} block without credentials, source provider.env instead
(PVE_ENDPOINT, PVE_API_TOKEN, PVE_TLS_FINGERPRINT of the first node).

Files in $rel: pvesim.env, provider.env, dev.tfrc, known_hosts, id_lab (the nodes' root key),
pvesim.json (every node's endpoint, password, token, fingerprint, sshd),
requests.jsonl (every API request: what a plan costs), pvesim.log.
To try examples/homelab (it uses ../modules): mkdir /tmp/mylab; cp -R examples/homelab examples/modules /tmp/mylab,
then in /tmp/mylab/homelab the above, after a first terraform get (the module; init would ask the registry for pvelab/pve).
Faults: ${FAULTS:-none} (seed ${FAULT_SEED:-0}); faulted requests carry "fault" in requests.jsonl.
Change them while it runs (spec syntax: $rel/bin/pvesim -h):
  curl -X PUT --data-binary 'read **=5xx:20%' $(pvesim_field control)/faults
  curl $(pvesim_field control)/faults; curl -X DELETE $(pvesim_field control)/faults
Ctrl-C stops the simulator; the next make sim starts the lab afresh (remove your
terraform.tfstate then).
HOWTO
cat "$sim_dir/HOWTO.txt"

wait "$pvesim_pid"
