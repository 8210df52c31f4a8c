#!/usr/bin/env bash
# The real-Ceph tier (make testlab): a real Ceph 16 cluster of three "hosts" on this machine, one
# network namespace each (a CRUSH host per namespace, named like pvesim's default nodes), with a
# monitor and a manager per host, two bluestore OSDs per host on sparse files, and an sshd per
# host; then the tests that need real Ceph, and everything torn down again, also when they fail.
#
#   scripts/testlab.sh run                 install, up, tests (T=regexp), down
#   scripts/testlab.sh up | down | status  the lab alone (down: processes by their PIDs, netns removed)
#   scripts/testlab.sh install             only the Debian packages (.ci/run starts it early, beside the tests)
#   scripts/testlab.sh daemon start|stop|restart <mon.X|mgr.X|osd.N>
#                                          what pvesim's real-Ceph backend runs for systemctl
#   scripts/testlab.sh osd create <id> <host> | osd destroy <id>
#                                          ... and for PVE's OSD create and destroy workers
#   scripts/testlab.sh env                 the variables a test run needs (PVESIM_REAL_CEPH=<dir>)
#
# Root only (namespaces, daemons). Needs Debian's ceph-mon ceph-mgr ceph-osd ceph-common
# openssh-server; `run` installs them. Data lives in TESTLAB_DIR (default .testlab/ here).
# Options the provider manages are kept out of ceph.conf: a ceph.conf value overrides the config
# database and would mask what a test sets with `ceph config set`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
D=${TESTLAB_DIR:-$ROOT/.testlab}
HOSTS=(${TESTLAB_HOSTS:-z2g4a z2g4b z2g4c})
OSDS_PER_HOST=${TESTLAB_OSDS_PER_HOST:-2}
NET=10.99.0        # host i (0-based) is $NET.1(i+1); the root namespace is $NET.1
C=$D/ceph CONF=$D/ceph/ceph.conf RUN=$D/ceph/run LOGD=$D/ceph/log
T0=$(date +%s)

log() { printf '%s [+%3ss] testlab: %s\n' "$(date +%T)" "$(($(date +%s) - T0))" "$*" >&2; }
die() { log "$*"; exit 1; }
ip_of() { local i; for i in "${!HOSTS[@]}"; do [ "${HOSTS[$i]}" = "$1" ] && { echo "$NET.1$((i + 1))"; return; }; done; die "no host $1"; }
ceph_() { timeout 60 ceph -c "$CONF" --connect-timeout 20 "$@"; }
# bounded: waits up to $1 seconds for the command to succeed
wait_for() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; return 1; }

install() {
	local want=(ceph-mon ceph-mgr ceph-osd ceph-common openssh-server uuid-runtime iputils-ping python3)
	local missing=() p
	for p in "${want[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
	[ ${#missing[@]} = 0 ] && return
	log "installing ${missing[*]} (Debian packages)"
	mkdir -p "$D"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >"$D/apt.log" 2>&1 || { tail -20 "$D/apt.log"; die "apt-get failed"; }
}

# ---- network: namespace "testlab-sw" holds bridge br0; each host a veth lab0 ----
has_ns() { ip netns list | awk '{print $1}' | grep -qx "$1"; }
net_up() {
	has_ns testlab-sw || ip netns add testlab-sw
	ip -n testlab-sw link show br0 >/dev/null 2>&1 || ip -n testlab-sw link add br0 type bridge stp_state 0 forward_delay 0
	ip -n testlab-sw link set br0 up
	local i h
	for i in "${!HOSTS[@]}"; do
		h=${HOSTS[$i]}
		has_ns "$h" || ip netns add "$h"
		ip -n "$h" link set lo up
		if ! ip -n "$h" link show lab0 >/dev/null 2>&1; then
			ip -n testlab-sw link add "sw$i" type veth peer name "lab0-$i"
			ip -n testlab-sw link set "lab0-$i" netns "$h"
			ip -n "$h" link set "lab0-$i" name lab0
			ip -n testlab-sw link set "sw$i" master br0 up
		fi
		ip -n "$h" link set lab0 up
		ip -n "$h" addr replace "$(ip_of "$h")/24" dev lab0
	done
	if ! ip link show testlab0 >/dev/null 2>&1; then
		ip -n testlab-sw link add swhost type veth peer name testlab0
		ip -n testlab-sw link set testlab0 netns 1
		ip -n testlab-sw link set swhost master br0 up
	fi
	ip link set testlab0 up
	ip addr replace "$NET.1/24" dev testlab0
	for h in "${HOSTS[@]}"; do wait_for 5 ping -c1 -W1 "$(ip_of "$h")" || die "$h ($(ip_of "$h")) does not answer ping"; done
}
net_down() {
	local ns
	for ns in "${HOSTS[@]}" testlab-sw; do
		has_ns "$ns" || continue
		if [ -n "$(ip netns pids "$ns" 2>/dev/null)" ]; then log "netns $ns still has processes $(ip netns pids "$ns" | tr '\n' ' '), kept"; continue; fi
		ip netns del "$ns"
	done
	# removing testlab-sw removes testlab0's peer, and with it testlab0, a moment later
	if ip link show testlab0 >/dev/null 2>&1; then ip link del testlab0 2>/dev/null || true; fi
}

# ---- daemons: each in its host's netns and own UTS namespace (hostname = host), pid files ----
ours() { # pid file, expected comm: the process is running and is what we started
	local pid
	[ -s "$1" ] && pid=$(cat "$1") && [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}
bin_of() { echo "ceph-${1%%.*}"; }
daemon_start() { # name (mon.X, mgr.X, osd.N); its host is recorded in $RUN/<name>.host
	local name=$1 bin host args
	bin=$(bin_of "$name")
	host=$(cat "$RUN/$name.host") || die "$name was never created"
	ours "$RUN/$name.pid" "$bin" && return 0
	rm -f "$RUN/$name.pid"
	args=(-i "${name#*.}")
	[ "$bin" = ceph-osd ] && args+=(--crush_location "root=default host=$host")
	setsid ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" \
		"$bin" -c "$CONF" "${args[@]}" -f </dev/null >>"$LOGD/$name.stdout" 2>&1 &
	for _ in $(seq 1 50); do [ -s "$RUN/$name.pid" ] && break; sleep 0.2; done
	[ -s "$RUN/$name.pid" ] || die "$name did not write its pid file (see $LOGD/$name.stdout)"
	date +%s.%N >"$RUN/$name.started"
}
daemon_stop() { # TERM by PID, bounded wait, KILL only if it is still ours
	local name=$1 bin pid
	bin=$(bin_of "$name")
	ours "$RUN/$name.pid" "$bin" || { rm -f "$RUN/$name.pid"; return 0; }
	pid=$(cat "$RUN/$name.pid")
	kill -TERM "$pid"
	for _ in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
	if ours "$RUN/$name.pid" "$bin"; then kill -KILL "$pid"; log "$name (pid $pid) killed after 10 s"; fi
	rm -f "$RUN/$name.pid"
}

ceph_conf() {
	local mons=() h
	for h in "${HOSTS[@]}"; do mons+=("[v2:$(ip_of "$h"):3300,v1:$(ip_of "$h"):6789]"); done
	cat >"$CONF" <<EOF
[global]
fsid = $(cat "$C/fsid")
mon_initial_members = $(
		IFS=,
		echo "${HOSTS[*]}"
	)
mon_host = $(
		IFS=,
		echo "${mons[*]}"
	)
public_network = $NET.0/24
ms_bind_ipv6 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
run_dir = $RUN
admin_socket = $RUN/\$cluster-\$name.asok
pid_file = $RUN/\$name.pid
log_file = $LOGD/\$cluster-\$name.log
mon_cluster_log_file = $LOGD/\$cluster.log
crash_dir = $C/crash
mon_data = $C/mon/\$cluster-\$id
mgr_data = $C/mgr/\$cluster-\$id
osd_data = $C/osd/\$cluster-\$id
osd_pool_default_size = 3
osd_pool_default_min_size = 2
osd_crush_chooseleaf_type = 1
mon_allow_pool_delete = true
# Sparse files on a shared disk: keep Ceph's free-space warnings for real disks out of the way.
mon_data_avail_warn = 2
mon_data_avail_crit = 1
bluestore_block_create = true
bluestore_block_size = 3221225472
osd_objectstore = bluestore
# Lab pace: daemons report PG states to the manager, and the manager its digest to the monitors
# (what `ceph status` and PVE's API show), every second instead of every five, so that waits for
# active+clean end when Ceph is done and not up to ten seconds later.
mgr_stats_period = 1
mon_mgr_digest_period = 1
# Monitors commit map changes (noout, an OSD marked down or up, a pool set) within 0.1 s instead of
# gathering them for a second: an OSD restart here took 10.8 s to active+clean, 7.6 s with this.
paxos_propose_interval = 0.1

[client]
keyring = $C/keyring/\$cluster.\$name.keyring
admin_socket = $RUN/\$cluster-\$name.\$pid.asok
log_file = $LOGD/client.log
EOF
}

ceph_create() {
	mkdir -p "$C"/{keyring,run,log,crash,mon,mgr,osd}
	[ -s "$C/fsid" ] || uuidgen >"$C/fsid"
	ceph_conf
	local K=$C/keyring h
	if [ ! -s "$K/ceph.mon.keyring" ]; then
		ceph-authtool --create-keyring "$K/mon.tmp" --gen-key -n mon. --cap mon 'allow *' >/dev/null
		ceph-authtool --create-keyring "$K/ceph.client.admin.keyring" --gen-key -n client.admin \
			--cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
		ceph-authtool --create-keyring "$K/ceph.client.bootstrap-osd.keyring" --gen-key -n client.bootstrap-osd \
			--cap mon 'profile bootstrap-osd' --cap mgr 'allow r' >/dev/null
		ceph-authtool "$K/mon.tmp" --import-keyring "$K/ceph.client.admin.keyring" >/dev/null
		ceph-authtool "$K/mon.tmp" --import-keyring "$K/ceph.client.bootstrap-osd.keyring" >/dev/null
		mv "$K/mon.tmp" "$K/ceph.mon.keyring"
	fi
	if [ ! -s "$C/monmap" ]; then
		local add=()
		for h in "${HOSTS[@]}"; do add+=(--addv "$h" "[v2:$(ip_of "$h"):3300,v1:$(ip_of "$h"):6789]"); done
		monmaptool --create --clobber --fsid "$(cat "$C/fsid")" "${add[@]}" --enable-all-features --set-min-mon-release 16 "$C/monmap.tmp" >/dev/null
		mv "$C/monmap.tmp" "$C/monmap"
	fi
	for h in "${HOSTS[@]}"; do
		echo "$h" >"$RUN/mon.$h.host"
		if [ ! -e "$C/mon/ceph-$h/done" ]; then
			rm -rf "$C/mon/ceph-$h" && mkdir -p "$C/mon/ceph-$h"
			ceph-mon -c "$CONF" --mkfs -i "$h" --monmap "$C/monmap" --keyring "$K/ceph.mon.keyring" 2>>"$LOGD/mon.mkfs.log"
			touch "$C/mon/ceph-$h/done"
		fi
		daemon_start "mon.$h"
	done
	wait_for 60 ceph_ mon stat || die "the monitors do not answer (see $LOGD)"
	log "monitors answer"
	# Lab tunables in the config database (not ceph.conf): the smallest osd_memory_target
	# Ceph accepts, and no recovery sleep on the sparse files. In global, the least specific
	# section: a test's osd section holds only what the test set, as on a cluster built by hand,
	# and its values win (a mask such as osd/class:hdd would beat them).
	local who opt val
	while read -r who opt val; do ceph_ config set "$who" "$opt" "$val"; done <<'EOT'
global osd_memory_target 939524096
global osd_recovery_sleep_hdd 0
EOT
	for h in "${HOSTS[@]}"; do
		echo "$h" >"$RUN/mgr.$h.host"
		if [ ! -s "$C/mgr/ceph-$h/keyring" ]; then
			mkdir -p "$C/mgr/ceph-$h"
			ceph_ auth get-or-create "mgr.$h" mon 'allow profile mgr' osd 'allow *' mds 'allow *' -o "$C/mgr/ceph-$h/keyring"
		fi
		daemon_start "mgr.$h"
	done
	# osd.0 and osd.1 on the first host, 2 and 3 on the second, as pvesim's tests number them
	local id=0 n
	for h in "${HOSTS[@]}"; do
		for n in $(seq 1 "$OSDS_PER_HOST"); do
			osd_create "$id" "$h"
			id=$((id + 1))
		done
	done
	# A pool with PGs on every OSD, as the model's Ceph tests have (ok-to-stop, safe-to-destroy
	# and restarts have something to answer about); made here so the ready wait covers it.
	ceph_ osd pool create rbd 32 >/dev/null 2>&1
	ceph_ osd pool application enable rbd rbd >/dev/null
}

osd_create() { # id host: bluestore on a sparse file; the CRUSH host is the namespace
	local id=$1 h=$2 data=$C/osd/ceph-$1 uuid secret got
	echo "$h" >"$RUN/osd.$id.host"
	if [ ! -e "$data/done" ]; then
		if ceph_ osd ls 2>/dev/null | grep -qx "$id"; then ceph_ osd purge "$id" --yes-i-really-mean-it >/dev/null; fi
		rm -rf "$data" && mkdir -p "$data"
		uuid=$(uuidgen)
		secret=$(ceph-authtool --gen-print-key)
		got=$(echo "{\"cephx_secret\": \"$secret\"}" | ceph_ osd new "$uuid" "$id" -i - \
			-n client.bootstrap-osd -k "$C/keyring/ceph.client.bootstrap-osd.keyring")
		[ "$got" = "$id" ] || die "osd new gave '$got', wanted $id"
		ceph-authtool --create-keyring "$data/keyring" --name "osd.$id" --add-key "$secret" >/dev/null
		ip netns exec "$h" ceph-osd -c "$CONF" -i "$id" --mkfs --osd-uuid "$uuid" >>"$LOGD/osd.$id.mkfs.log" 2>&1
		touch "$data/done"
	fi
	daemon_start "osd.$id"
}

osd_destroy() { # id: what PVE's destroyosd worker does once the OSD is out and down
	local id=$1
	daemon_stop "osd.$id"
	ceph_ osd crush remove "osd.$id" >/dev/null 2>&1 || true
	ceph_ auth del "osd.$id" >/dev/null 2>&1 || true
	ceph_ osd rm "$id" >/dev/null
	# the disk cleanup: the sparse file and its directory go
	rm -rf "${C:?}/osd/ceph-$id" "$RUN/osd.$id.host" "$RUN/osd.$id.started"
}

# ready: every OSD up and in, the admin sockets say active (the mon alone still shows old
# daemons up right after a restart), a manager active, HEALTH_OK and all PGs active+clean.
ready() {
	python3 - "$CONF" "$RUN" "$((${#HOSTS[@]} * OSDS_PER_HOST))" <<'EOF'
import json, subprocess, sys
conf, run, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def j(args, asok=None):
    cmd = ["ceph", "--connect-timeout", "10"] + (["--admin-daemon", asok] if asok else ["-c", conf, "-f", "json"]) + args
    try:
        return json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout)
    except Exception:
        return None
bad = [f"osd.{i}" for i in range(n) if (j(["status"], f"{run}/ceph-osd.{i}.asok") or {}).get("state") != "active"]
s = j(["status"])
if not s:
    print("no answer from the monitors"); sys.exit(1)
o, p = s["osdmap"], s["pgmap"]
states = {x["state_name"]: x["count"] for x in p.get("pgs_by_state", [])}
ok = (not bad and s["health"]["status"] == "HEALTH_OK" and s.get("mgrmap", {}).get("available", True)
      and o["num_up_osds"] == n and o["num_in_osds"] == n and p["num_pgs"] > 0 and states.get("active+clean", 0) == p["num_pgs"])
print(f'{s["health"]["status"]} {",".join(sorted(s["health"].get("checks", {})))} osds up/in {o["num_up_osds"]}/{o["num_in_osds"]} pgs {states} not active: {bad}')
sys.exit(0 if ok else 1)
EOF
}
wait_ready() {
	local last="" out
	for _ in $(seq 1 "${1:-300}"); do
		if out=$(ready); then log "ready: $out"; return 0; fi
		[ "$out" = "$last" ] || log "waiting: $out"
		last=$out
		sleep 1
	done
	die "Ceph not ready after ${1:-300} s: $out"
}

# ---- sshd per host: own host key, one client key, sessions get CEPH_CONF ----
# and SHLVL=1: bash run by sshd sources ~/.bashrc unless it is a nested shell, and this machine's
# root .bashrc (pyenv init) cost more CPU per command than the command (0.17 s; a PVE node's has
# nothing of the kind).
sshd_up() {
	local S=$D/ssh h
	mkdir -p "$S" && chmod 700 "$S"
	[ -s "$S/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C testlab -f "$S/client_key"
	cp "$S/client_key.pub" "$S/authorized_keys"
	: >"$S/known_hosts"
	for h in "${HOSTS[@]}"; do
		mkdir -p "$S/$h/run/sshd"
		[ -s "$S/$h/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$S/$h/host_key"
		echo "$(ip_of "$h") $(cut -d' ' -f1,2 "$S/$h/host_key.pub")" >>"$S/known_hosts"
		cat >"$S/$h/sshd_config" <<EOF
ListenAddress $(ip_of "$h")
HostKey $S/$h/host_key
PidFile $S/$h/sshd.pid
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
SetEnv CEPH_CONF=$CONF SHLVL=1
EOF
		ours "$S/$h/sshd.pid" sshd && continue
		# sshd needs /run/sshd: a private /run in the namespace's own mount namespace.
		setsid ip netns exec "$h" unshare --uts sh -c "hostname $h && mount --bind '$S/$h/run' /run && exec /usr/sbin/sshd -D -f '$S/$h/sshd_config' -E '$S/$h/sshd.log'" \
			</dev/null >>"$S/$h/sshd.stdout" 2>&1 &
		for _ in $(seq 1 50); do [ -s "$S/$h/sshd.pid" ] && break; sleep 0.1; done
		[ -s "$S/$h/sshd.pid" ] || die "sshd on $h did not start (see $S/$h/sshd.log)"
	done
}
sshd_down() {
	local f pid
	for f in "$D"/ssh/*/sshd.pid; do
		[ -e "$f" ] || continue
		ours "$f" sshd || { rm -f "$f"; continue; }
		pid=$(cat "$f")
		kill -TERM "$pid"
		for _ in $(seq 1 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		rm -f "$f"
	done
}

up() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces, daemons)"
	mkdir -p "$D"
	install
	net_up
	ceph_create
	sshd_up
	wait_ready "${TESTLAB_READY_TIMEOUT:-300}"
}

down() {
	sshd_down
	# All OSDs and managers at once, then the monitors (an OSD tells them it stops): one after
	# another, their seconds each added up to most of a minute.
	stop_all 'osd.*' 'mgr.*'
	stop_all '*'
	net_down
	if [ "${TESTLAB_KEEP:-}" != 1 ] && [ -d "$D" ]; then
		mkdir -p "$ROOT/.testlab-logs" && rm -rf "$ROOT/.testlab-logs/last" && cp -r "$LOGD" "$ROOT/.testlab-logs/last" 2>/dev/null || true
		rm -rf "$D"
	fi
}

stop_all() { # name globs: every daemon with a pid file matching one, in parallel
	local f g pids=() p
	for g in "$@"; do
		for f in "$RUN"/$g.pid; do
			[ -e "$f" ] || continue
			daemon_stop "$(basename "$f" .pid)" &
			pids+=($!)
		done
	done
	for p in "${pids[@]}"; do wait "$p" || true; done
}

env_() {
	echo "PVESIM_REAL_CEPH=$D PVESIM_REAL_CEPH_CONTROL=$ROOT/scripts/testlab.sh"
}

# The tests of this tier: the CLI conformance test, and acceptance tests unchanged from make test whose Ceph
# side runs on the real cluster.
TESTS='^(TestRealCephCLIConformance|TestAccCephConfig_referenceLab|TestAccCephConfig_fileOverridesDatabase|TestAccCephFlags_lifecycle|TestAccCephPool_lifecycle|TestAccCephOSD_drainedBeforeDestroy)$'

ADOPT_TEST='^TestAccCephAdoptHandBuilt$/^osd_max_backfills_in_hcl=true$'

run() {
	# a lab a failed run left behind goes first: every run starts from nothing
	[ -d "$D" ] && { log "removing the lab a previous run left"; down; }
	trap 'set +e; down; log "lab removed"' EXIT
	# The test binaries build while the lab comes up: on two cores each takes about a minute.
	mkdir -p "$D/bin"
	(cd "$ROOT" && go test -c -o "$D/bin/pvesim.test" ./internal/pvesim/ && go test -c -o "$D/bin/ceph.test" ./internal/service/ceph/) >"$D/build.log" 2>&1 &
	local build=$!
	up
	log "real Ceph up: $(ceph_ -s -f json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["health"]["status"], s["osdmap"]["num_osds"], "OSDs,", s["monmap"]["num_mons"], "monitors")')"
	wait "$build" || { cat "$D/build.log"; die "building the tests failed"; }
	log "tests built"
	export PVESIM_REAL_CEPH=$D PVESIM_REAL_CEPH_CONTROL=$ROOT/scripts/testlab.sh TF_ACC=1
	# shellcheck source=env.sh
	. "$ROOT/scripts/env.sh"
	# as go test runs them: in the package's directory, one test at a time (one cluster)
	local flags=(-test.v -test.count=1 -test.parallel=1 -test.timeout=25m)
	(cd "$ROOT/internal/pvesim" && "$D/bin/pvesim.test" "${flags[@]}" -test.run="${T:-$TESTS}")
	log "pvesim's tests done"
	(cd "$ROOT/internal/service/ceph" && "$D/bin/ceph.test" "${flags[@]}" -test.run="${T:-$TESTS}")
	log "the Ceph acceptance tests done"
	if [ -z "${T:-}" ]; then
		# The adoption of a hand-built Ceph, its stronger half (the config database section
		# imported too): the hand-built start builds it on the real cluster first.
		(cd "$ROOT/internal/service/ceph" && "$D/bin/ceph.test" "${flags[@]}" -test.run="$ADOPT_TEST")
		log "the adoption test done"
	fi
}

case "${1:-run}" in
run) run ;;
install) install ;;
up) up ;;
down) down ;;
status) ready ;;
env) env_ ;;
daemon)
	case "${2:-}" in
	start) daemon_start "$3" ;;
	stop) daemon_stop "$3" ;;
	restart) daemon_stop "$3" && daemon_start "$3" ;;
	*) die "daemon start|stop|restart <name>" ;;
	esac
	;;
osd) # what pvesim's real-Ceph backend runs for PVE's OSD create and destroy
	case "${2:-}" in
	create) osd_create "$3" "$4" ;;
	destroy) osd_destroy "$3" ;;
	*) die "osd create <id> <host> | osd destroy <id>" ;;
	esac
	;;
*) die "unknown command $1 (run, install, up, down, status, env, daemon, osd)" ;;
esac
