# shellcheck shell=bash
# What scripts/lab.sh (make lab) and scripts/sim.sh (make sim) share: building pvesim and
# the provider, starting pvesim from a lab file, reading its JSON line, and turning it into
# what a Terraform configuration needs (TF_VAR_nodes, TF_VAR_ssh, known_hosts, the SSH key,
# a dev_overrides CLI config). Source it after setting pvesim_root (the repository) and
# pvesim_tag (the prefix of messages, such as "lab.sh"); it does not change shell options.
# Only Go is needed: JSON is read with tools/jsonfield (no jq).
# shellcheck disable=SC2034,SC2154 # its variables are for the sourcing script, which sets pvesim_root

pvesim_pid=""
pvesim_line=""
pvesim_nodes=""   # node names, space-separated, in the order pvesim lists them
pvesim_args=()    # the lab flags of pvesim_lab_args
pvesim_reference_lab="examples/labs/reference/lab.json"

pvesim_log() { echo "${pvesim_tag:-pvesim.sh}: $*"; }
pvesim_die() {
	echo "${pvesim_tag:-pvesim.sh}: $*" >&2
	exit 1
}

# pvesim_no_args SCRIPT ARGS...: the scripts take their settings from the environment
# (make sim LAB=...); -h/--help prints SCRIPT's leading comment, any other argument is
# refused rather than ignored (the simulator would start without it).
pvesim_no_args() {
	local script=$1
	shift
	[ "$#" -gt 0 ] || return 0
	case "$1" in
	-h | --help)
		sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$script"
		exit 0
		;;
	esac
	pvesim_die "unexpected argument $1: settings are variables, such as make ${pvesim_tag%.sh} LAB=my-lab.json (see $(basename "$script") --help)"
}

# pvesim_build DIR: builds pvesim into DIR/bin, tools/jsonfield into DIR/bin and the
# provider into DIR/plugins (the directory dev_overrides points at).
pvesim_build() {
	local dir=$1
	mkdir -p "$dir/bin" "$dir/plugins"
	go build -o "$dir/bin/pvesim" "$pvesim_root/cmd/pvesim"
	go build -C "$pvesim_root/tools/jsonfield" -o "$dir/bin/jsonfield" .
	(cd "$pvesim_root" && go build -o "$dir/plugins/terraform-provider-pve" .)
	pvesim_bin=$dir/bin
}

# pvesim_resolve_lab LAB: prints the absolute path of a lab file; LAB is a path, or the
# name of a lab shipped in examples/labs (reference, diskless, consumer).
pvesim_resolve_lab() {
	local lab=$1
	if [ ! -f "$lab" ] && [ -f "$pvesim_root/examples/labs/$lab/lab.json" ]; then
		lab="$pvesim_root/examples/labs/$lab/lab.json"
	fi
	[ -f "$lab" ] || pvesim_die "lab file $lab does not exist (a path, or one of: $(cd "$pvesim_root/examples/labs" && for d in */lab.json; do printf '%s ' "${d%/lab.json}"; done))"
	echo "$(cd "$(dirname "$lab")" && pwd)/$(basename "$lab")"
}

# pvesim_lab_args DIR LAB START RELEASE: sets pvesim_args to pvesim's lab flags. LAB is a
# lab file or shipped lab name ("" = the reference lab when it exists, else pvesim's
# built-in default nodes); START overrides the lab file's start (pvesim -start). RELEASE
# overrides its pve_release: pvesim takes the release only from the lab file, so the
# lab is copied to DIR/lab.json with pve_release replaced (or added first). Also sets
# pvesim_lab (the absolute lab file, or ""), pvesim_release ("" = pvesim's default) and
# pvesim_node_count.
pvesim_lab_args() {
	local dir=$1 lab=$2 start=$3 release=$4 file
	pvesim_args=()
	pvesim_lab=""
	pvesim_release=$release
	pvesim_node_count=3
	if [ -z "$lab" ] && [ -f "$pvesim_root/$pvesim_reference_lab" ]; then
		lab="$pvesim_root/$pvesim_reference_lab"
	fi
	if [ -n "$lab" ]; then
		pvesim_lab="$(pvesim_resolve_lab "$lab")"
		file=$pvesim_lab
		if [ -n "$release" ]; then
			file="$dir/lab.json"
			if grep -q '"pve_release"' "$pvesim_lab"; then
				sed -E 's/("pve_release"[[:space:]]*:[[:space:]]*)"[^"]*"/\1"'"$release"'"/' "$pvesim_lab" >"$file"
			else
				sed -E '0,/\{/s//{ "pve_release": "'"$release"'",/' "$pvesim_lab" >"$file"
			fi
		fi
		pvesim_args+=(-lab "$file")
		pvesim_release="$("$pvesim_bin/jsonfield" pve_release <"$file" 2>/dev/null)" || pvesim_release=""
		pvesim_node_count="$("$pvesim_bin/jsonfield" 'nodes.*.name' <"$file" | wc -l | tr -d ' ')" ||
			pvesim_die "$lab: no nodes list (see examples/labs/README.md)"
	elif [ -n "$release" ]; then
		pvesim_args+=(-pve-release "$release")
	fi
	[ -z "$start" ] || pvesim_args+=(-start "$start")
}

# pvesim_free_port N: prints a 127.0.0.1 port P such that P..P+N-1 are free: pvesim
# serves node i on P+i. A port is taken when a connection succeeds (bash /dev/tcp).
pvesim_free_port() {
	local n=$1 p i k ok
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		ok=1
		for k in $(seq 0 $((n - 1))); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$((p + k))") 2>/dev/null; then
				ok=0
				break
			fi
		done
		if [ "$ok" = 1 ]; then
			echo "$p"
			return 0
		fi
	done
	pvesim_die "no free port found"
}

# pvesim_start DIR PORT [ARGS...]: starts pvesim in the background on 127.0.0.1:PORT with
# pvesim_args and ARGS, its state in DIR/state.json, its request log in
# DIR/requests.jsonl, stdout in DIR/pvesim.out and stderr in DIR/pvesim.log; waits (up to
# 30 s) for its JSON line and keeps it in pvesim_line, pvesim_nodes and DIR/pvesim.json.
pvesim_start() {
	local dir=$1 port=$2 i
	shift 2
	rm -f "$dir/state.json" "$dir/requests.jsonl" "$dir/pvesim.out"
	"$pvesim_bin/pvesim" -listen "127.0.0.1:$port" -state "$dir/state.json" \
		-request-log "$dir/requests.jsonl" ${pvesim_args[@]+"${pvesim_args[@]}"} "$@" \
		>"$dir/pvesim.out" 2>"$dir/pvesim.log" &
	pvesim_pid=$!
	pvesim_line=""
	for i in $(seq 1 300); do
		if [ -s "$dir/pvesim.out" ] && [ "$(tail -c 1 "$dir/pvesim.out" | od -An -c | tr -d ' ')" = '\n' ]; then
			pvesim_line="$(sed -n 1p "$dir/pvesim.out")"
			break
		fi
		if ! kill -0 "$pvesim_pid" 2>/dev/null; then
			wait "$pvesim_pid" 2>/dev/null || true
			pvesim_pid=""
			cat "$dir/pvesim.log" >&2 || true
			pvesim_die "pvesim exited before printing its JSON line"
		fi
		sleep 0.1
	done
	[ -n "$pvesim_line" ] || pvesim_die "pvesim printed no JSON line within 30s"
	printf '%s\n' "$pvesim_line" >"$dir/pvesim.json"
	pvesim_nodes="$(pvesim_field 'nodes.*.name' | paste -sd ' ' -)"
}

# pvesim_field PATH: one field of pvesim's JSON line (tools/jsonfield syntax); fails when
# missing. pvesim_field_or PATH DEFAULT prints DEFAULT instead.
pvesim_field() { printf '%s\n' "$pvesim_line" | "$pvesim_bin/jsonfield" "$1"; }
pvesim_field_or() { pvesim_field "$1" 2>/dev/null || printf '%s\n' "$2"; }

# pvesim_stop: SIGTERM, then SIGKILL after 10 s; no-op when not running.
pvesim_stop() {
	[ -n "$pvesim_pid" ] || return 0
	local pid=$pvesim_pid status=0 i
	pvesim_pid=""
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "${pvesim_tag:-pvesim.sh}: pvesim did not stop within 10s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || status=$?
	pvesim_log "pvesim stopped (exit status $status)"
}

# pvesim_client_files DIR: writes DIR/id_lab (the lab's root key) and DIR/known_hosts
# (every node's sshd host key, verified as on a real lab) and sets, without exporting:
#   TF_VAR_nodes  each node's own API endpoint, root@pam password and certificate
#                 fingerprint: { "z2g4a" = { endpoint = "...", ... }, ... }
#   TF_VAR_ssh    the key, the known_hosts file and each node's sshd address and port.
pvesim_client_files() {
	local dir=$1 n ep i=0 ssh_nodes=""
	pvesim_field ssh_client_key >"$dir/id_lab"
	chmod 600 "$dir/id_lab"
	: >"$dir/known_hosts"
	TF_VAR_nodes="{"
	for n in $pvesim_nodes; do
		TF_VAR_nodes+="\"$n\" = { endpoint = \"$(pvesim_field "nodes.$i.endpoint")\", password = \"$(pvesim_field "nodes.$i.root_password")\", tls_fingerprint = \"$(pvesim_field "nodes.$i.tls_fingerprint")\" }, "
		ep="$(pvesim_field "nodes.$i.ssh_endpoint")"
		printf '[%s]:%s %s\n' "${ep%:*}" "${ep##*:}" "$(pvesim_field "nodes.$i.ssh_host_key")" >>"$dir/known_hosts"
		ssh_nodes+="\"$n\" = { address = \"${ep%:*}\", port = ${ep##*:} }, "
		i=$((i + 1))
	done
	TF_VAR_nodes+="}"
	TF_VAR_ssh="{ private_key_file = \"$dir/id_lab\", known_hosts_file = \"$dir/known_hosts\", nodes = { $ssh_nodes} }"
}

# pvesim_dev_tfrc FILE PLUGINS: a CLI configuration whose dev_overrides use the provider
# built into PLUGINS, under both registries' addresses (Terraform and OpenTofu).
pvesim_dev_tfrc() {
	cat >"$1" <<TFRC
provider_installation {
  dev_overrides {
    "registry.terraform.io/pvelab/pve" = "$2"
    "registry.opentofu.org/pvelab/pve" = "$2"
  }
  direct {}
}
TFRC
}

# pvesim_node_table: one line per node: name, management address (from the lab), API
# endpoint and sshd (both on 127.0.0.1: pvesim serves each node on a loopback port).
pvesim_node_table() {
	local n i=0
	for n in $pvesim_nodes; do
		printf '  %-14s %-20s api %s  ssh %s\n' "$n" "$(pvesim_field_or "nodes.$i.management_address" -)" \
			"$(pvesim_field "nodes.$i.endpoint")" "$(pvesim_field "nodes.$i.ssh_endpoint")"
		i=$((i + 1))
	done
}

# pvesim_reloads LOG: per node, how many network reloads (PUT /nodes/{node}/network that
# PVE answered with 200) the request log holds: "node count" lines.
pvesim_reloads() {
	[ -f "$1" ] || return 0
	grep -E '"method":"PUT","path":"/nodes/[^/"]+/network"' "$1" | grep '"status":200' |
		sed -E 's|.*"path":"/nodes/([^/"]+)/network".*|\1|' | sort | uniq -c | awk '{ print $2, $1 }' || true
}

# pvesim_mgmt_holder LOG NODE ADDRESS: the interface the apply last gave the management
# ADDRESS to (a POST or PUT of /nodes/NODE/network... with cidr ADDRESS/prefix that PVE
# answered with 200); empty when no request did, i.e. it stayed where the installer put it.
pvesim_mgmt_holder() {
	local log=$1 node=$2 addr=$3
	[ -f "$log" ] && [ -n "$addr" ] || return 0
	grep -E '"method":"(POST|PUT)","path":"/nodes/'"$node"'/network' "$log" | grep '"status":200' |
		grep -F "\"cidr\":\"$addr/" | tail -n 1 |
		sed -E 's|.*"path":"/nodes/[^/"]+/network/([^"]+)".*|\1|; s|.*"iface":"([^"]+)".*|\1|' || true
}
