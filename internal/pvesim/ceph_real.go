package pvesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// RealCeph puts a real Ceph cluster behind the simulator (make testlab:
// Ceph 16 in network namespaces named like the simulated nodes, an sshd
// per host). The `ceph` command a node runs goes over real SSH to that
// host's sshd and real `ceph`; the daemons' systemd units start, stop and
// restart the real daemons of that host; and what the acceptance tests
// ask about Ceph restarts (hosts down at once, OSDs down without noout,
// noout left set, PGs below min_size) is observed on the real cluster.
// The API's Ceph objects stay the model's: the lab is built with the
// model's layout (a monitor and a manager per node, osd.0 and osd.1 on the
// first node, ...), so the two agree on what exists.
type RealCeph struct {
	// Dir is the lab's directory (scripts/testlab.sh: TESTLAB_DIR).
	Dir string
	// Control is scripts/testlab.sh, run as `Control daemon <verb> <name>`.
	Control string
}

// realCeph is the connection to the real lab and what was seen of it.
type realCeph struct {
	opts   RealCeph
	signer ssh.Signer
	hosts  map[string]realHost

	mu      sync.Mutex
	clients map[string]*ssh.Client
	seen    realSeen

	base      realBaseline
	baseHosts map[int]string // the baseline OSDs' hosts
	baseConf  string         // the lab's ceph.conf as the lab wrote it
	written   map[string]int // pool -> objects store wrote (guarded by mu)
	// unbacked are model OSDs whose id the lab uses on another host (a
	// test that builds fewer OSDs per node than the lab has): they stay
	// the model's, and nothing done to them reaches the lab.
	unbacked    map[int]bool
	storeErrs   []string // what store could not write (guarded by mu)
	monMu       sync.Mutex
	monc        *monClient // guarded by monMu
	watcher     *exec.Cmd
	stopWatcher context.CancelFunc
	done        chan struct{}
}

type realHost struct {
	addr string
	key  ssh.PublicKey
}

// realSeen is what the watcher saw of the real cluster.
type realSeen struct {
	maxHostsDown     int
	downLog          []string
	downWithoutNoout []string
	belowMinSize     []string
	nooutSet         []string
	lastDown         string
	samples          int
}

func newRealCeph(o RealCeph) (*realCeph, error) {
	key, err := os.ReadFile(filepath.Join(o.Dir, "ssh", "client_key"))
	if err != nil {
		return nil, fmt.Errorf("real Ceph lab: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("real Ceph lab client key: %w", err)
	}
	known, err := os.ReadFile(filepath.Join(o.Dir, "ssh", "known_hosts"))
	if err != nil {
		return nil, fmt.Errorf("real Ceph lab: %w", err)
	}
	r := &realCeph{opts: o, signer: signer, hosts: map[string]realHost{}, clients: map[string]*ssh.Client{}, written: map[string]int{}, unbacked: map[int]bool{}}
	byKey := map[string]string{}
	for _, line := range strings.Split(string(known), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			byKey[f[1]+" "+f[2]] = f[0]
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(o.Dir, "ssh", "*", "host_key.pub"))
	for _, d := range dirs {
		pub, err := os.ReadFile(d)
		if err != nil {
			return nil, err
		}
		k, _, _, _, err := ssh.ParseAuthorizedKey(pub)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		f := strings.Fields(string(pub))
		host := filepath.Base(filepath.Dir(d))
		r.hosts[host] = realHost{addr: net.JoinHostPort(byKey[f[0]+" "+f[1]], "22"), key: k}
	}
	if len(r.hosts) == 0 {
		return nil, fmt.Errorf("real Ceph lab %s has no hosts (ssh/*/host_key.pub)", o.Dir)
	}
	if r.base, err = r.snapshot(); err != nil {
		return nil, fmt.Errorf("real Ceph lab: %w", err)
	}
	conf, err := os.ReadFile(r.confPath())
	if err != nil {
		return nil, fmt.Errorf("real Ceph lab: %w", err)
	}
	r.baseConf = string(conf)
	r.baseHosts = map[int]string{}
	for id := range r.base.osds {
		r.baseHosts[id] = r.osdHost(id)
	}
	if err := r.startWatcher(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *realCeph) client(node string) (*ssh.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[node]; c != nil {
		return c, nil
	}
	h, ok := r.hosts[node]
	if !ok {
		return nil, fmt.Errorf("the real Ceph lab has no host %s", node)
	}
	c, err := ssh.Dial("tcp", h.addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(r.signer)},
		HostKeyCallback: ssh.FixedHostKey(h.key), Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	r.clients[node] = c
	return c, nil
}

// forward runs the node's command on the real host and relays what it
// printed and its exit status.
func (r *realCeph) forward(x *sshExec) int {
	c, err := r.client(x.node)
	if err != nil {
		x.errf("pvesim: real Ceph: %v\n", err)
		return 255
	}
	sess, err := c.NewSession()
	if err != nil {
		r.mu.Lock()
		delete(r.clients, x.node) // a dead connection: dial again next time
		r.mu.Unlock()
		x.errf("pvesim: real Ceph: %v\n", err)
		return 255
	}
	defer func() { _ = sess.Close() }()
	sess.Stdout, sess.Stderr = &x.stdout, &x.stderr
	if x.stdin != nil {
		sess.Stdin = bytes.NewReader(x.stdin)
	}
	err = sess.Run(nodeexec.Cmd(x.argv[0], x.argv[1:]...).String())
	var exitErr *ssh.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.ExitStatus()
	}
	x.errf("pvesim: real Ceph: %v\n", err)
	return 255
}

// daemon runs the lab's control for a daemon's unit verb.
func (r *realCeph) daemon(verb, name string) error {
	switch verb {
	case "start", "stop", "restart":
	case "try-restart", "reload-or-restart", "try-reload-or-restart":
		verb = "restart"
	default:
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.opts.Control, "daemon", verb, name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", verb, name, err, out)
	}
	return nil
}

// unit is the real daemon's unit state: active while its process runs,
// since when it last started.
func (r *realCeph) unit(name string) (string, time.Time) {
	run := filepath.Join(r.opts.Dir, "ceph", "run")
	var since time.Time
	if b, err := os.ReadFile(filepath.Join(run, name+".started")); err == nil {
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			since = time.UnixMicro(int64(f * 1e6))
		}
	}
	b, err := os.ReadFile(filepath.Join(run, name+".pid"))
	if err != nil {
		return "inactive", since
	}
	comm, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/comm")
	kind, _, _ := strings.Cut(name, ".")
	if err != nil || strings.TrimSpace(string(comm)) != "ceph-"+kind {
		return "inactive", since
	}
	return "active", since
}

// starts is when each daemon of the lab last started.
func (r *realCeph) starts() map[string]time.Time {
	out := map[string]time.Time{}
	files, _ := filepath.Glob(filepath.Join(r.opts.Dir, "ceph", "run", "*.started"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".started")
		_, since := r.unit(name)
		out[name] = since
	}
	return out
}

// The watcher: one Python process with librados (python3-rados comes with
// ceph-common) asking the monitors for the OSD map and PG states five
// times a second; far cheaper than a `ceph` process per sample.
const realCephWatchPy = `
import json, sys, time, rados
c = rados.Rados(conffile=sys.argv[1], conf={"keyring": sys.argv[2]})
c.connect(timeout=20)
def mc(prefix):
    ret, out, err = c.mon_command(json.dumps({"prefix": prefix, "format": "json"}), b"", timeout=10)
    return json.loads(out) if ret == 0 else None
while True:
    d, s = mc("osd dump"), mc("status")
    if d is not None and s is not None:
        print(json.dumps({"flags": d.get("flags", ""), "node_flags": d.get("crush_node_flags", {}),
            "osds": [[o["osd"], o["up"], o["in"]] for o in d["osds"]],
            "pgs": [x["state_name"] for x in s["pgmap"].get("pgs_by_state", [])]}), flush=True)
    time.sleep(0.2)
`

type realSample struct {
	Flags     string              `json:"flags"`
	NodeFlags map[string][]string `json:"node_flags"`
	OSDs      [][3]int            `json:"osds"`
	PGs       []string            `json:"pgs"`
}

func (r *realCeph) startWatcher() error {
	conf, keyring := r.confPath(), r.keyringPath()
	// Debian's python3, which has python3-rados (not one first on PATH).
	ctx, cancel := context.WithCancel(context.Background())
	r.stopWatcher = cancel
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c", realCephWatchPy, conf, keyring)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return fmt.Errorf("real Ceph watcher: %w", err)
	}
	r.watcher, r.done = cmd, make(chan struct{})
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var s realSample
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				r.observe(s)
			}
		}
	}()
	return nil
}

// observe records one sample: hosts with a down OSD, OSDs down without
// noout, PGs that stopped serving I/O (peered: fewer than min_size
// copies), and where noout is set.
func (r *realCeph) observe(s realSample) {
	run := filepath.Join(r.opts.Dir, "ceph", "run")
	cluster := containsStr(strings.Split(s.Flags, ","), "noout")
	down := map[string]bool{}
	var unprotected []string
	for _, o := range s.OSDs {
		id, up, in := o[0], o[1], o[2]
		if up == 1 {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(run, "osd."+strconv.Itoa(id)+".host"))
		host := strings.TrimSpace(string(b))
		down[host] = true
		if in == 1 && !cluster && !containsStr(s.NodeFlags[host], "noout") {
			unprotected = append(unprotected, fmt.Sprintf("osd.%d (host %s)", id, host))
		}
	}
	var hosts []string
	for h := range down {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	now := time.Now().UTC().Format("15:04:05.000")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen.samples++
	r.seen.maxHostsDown = max(r.seen.maxHostsDown, len(hosts))
	if d := strings.Join(hosts, ","); d != r.seen.lastDown {
		r.seen.downLog = append(r.seen.downLog, fmt.Sprintf("%s hosts with down OSDs: %s", now, d))
		r.seen.lastDown = d
	}
	for _, u := range unprotected {
		r.seen.downWithoutNoout = append(r.seen.downWithoutNoout, u+" at "+now)
	}
	for _, st := range s.PGs {
		for _, part := range strings.Split(st, "+") {
			if part == "peered" || part == "incomplete" || part == "down" {
				r.seen.belowMinSize = append(r.seen.belowMinSize, st+" at "+now)
			}
		}
	}
	r.seen.nooutSet = nil
	if cluster {
		r.seen.nooutSet = append(r.seen.nooutSet, "cluster")
	}
	for h, f := range s.NodeFlags {
		if containsStr(f, "noout") {
			r.seen.nooutSet = append(r.seen.nooutSet, "host "+h)
		}
	}
	sort.Strings(r.seen.nooutSet)
}

// forget drops what the watcher saw so far: what a user did before the
// simulator started is not what a client under test did.
func (r *realCeph) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = realSeen{lastDown: r.seen.lastDown, samples: r.seen.samples}
}

// observed returns a copy of what the watcher saw, after waiting for one
// more sample so that the last change is in it.
func (r *realCeph) observed() realSeen {
	r.mu.Lock()
	n := r.seen.samples
	r.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if r.seen.samples > n+1 {
			s := r.seen
			s.downLog = append([]string(nil), s.downLog...)
			s.downWithoutNoout = append([]string(nil), s.downWithoutNoout...)
			s.belowMinSize = append([]string(nil), s.belowMinSize...)
			s.nooutSet = append([]string(nil), s.nooutSet...)
			r.mu.Unlock()
			return s
		}
		r.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	s.belowMinSize = append(s.belowMinSize, "the real Ceph watcher took no sample for 10 s")
	return s
}

func (r *realCeph) close() error {
	err := errors.Join(r.removeData(), os.WriteFile(r.confPath(), []byte(r.baseConf), 0o644), r.restore(r.base))
	if r.watcher != nil {
		r.stopWatcher() // kills the process
		<-r.done
		_ = r.watcher.Wait()
	}
	r.monMu.Lock()
	r.stopMonClient()
	r.monMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, c := range r.clients {
		_ = c.Close()
		delete(r.clients, n)
	}
	return err
}

// mon sends one mon command to the real cluster, as PVE does through
// librados (PVE::RADOS mon_command), and returns its output; a failure
// carries Ceph's status message, as PVE's mon_command dies with. Mgr
// commands (osd safe-to-destroy, ok-to-stop) go the same way: the monitors
// forward them. One librados client serves every command: a `ceph` process
// per command cost about half a CPU second each, most of the lab's time.
func (r *realCeph) mon(cmd map[string]any) ([]byte, error) {
	r.monMu.Lock()
	defer r.monMu.Unlock()
	if r.monc == nil {
		if err := r.startMonClient(); err != nil {
			return nil, err
		}
	}
	line, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	var res struct {
		Ret  int    `json:"ret"`
		Out  string `json:"out"`
		Outs string `json:"outs"`
	}
	if _, err := r.monc.in.Write(append(line, '\n')); err != nil || !r.monc.out.Scan() {
		// The client died: the next command starts another.
		serr := r.monc.out.Err()
		r.stopMonClient()
		return nil, fmt.Errorf("real Ceph mon client ended: %w", errors.Join(err, serr))
	}
	if err := json.Unmarshal(r.monc.out.Bytes(), &res); err != nil {
		return nil, err
	}
	if res.Ret != 0 {
		return nil, fmt.Errorf("%s", strings.TrimSpace(res.Outs))
	}
	return []byte(res.Out), nil
}

// removePool is `osd pool rm`, as PVE's destroy_pool sends it.
func (r *realCeph) removePool(name string) error {
	_, err := r.mon(map[string]any{"prefix": "osd pool rm", "pool": name, "pool2": name, "yes_i_really_really_mean_it": true})
	return err
}

// monJSON sends cmd with format json and decodes the answer into v.
func (r *realCeph) monJSON(v any, cmd map[string]any) error {
	cmd["format"] = "json"
	out, err := r.mon(cmd)
	if err != nil {
		return err
	}
	return json.Unmarshal(out, v)
}

// realCephMonPy is the mon client: a JSON command per line in, a JSON
// answer per line out (ret, out, outs as mon_command gives them).
const realCephMonPy = `
import json, sys, rados
c = rados.Rados(conffile=sys.argv[1], conf={"keyring": sys.argv[2]})
c.connect(timeout=20)
for line in sys.stdin:
    try:
        ret, out, outs = c.mon_command(line.strip(), b"", timeout=60)
    except Exception as e:
        ret, out, outs = -1, b"", str(e)
    print(json.dumps({"ret": ret, "out": out.decode("utf-8", "replace"), "outs": outs}), flush=True)
`

type monClient struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc // kills it
	in     io.WriteCloser
	out    *bufio.Scanner
}

func (r *realCeph) startMonClient() error {
	// Debian's python3, which has python3-rados (not one first on PATH).
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c", realCephMonPy, r.confPath(), r.keyringPath())
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return fmt.Errorf("real Ceph mon client: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	r.monc = &monClient{cmd: cmd, cancel: cancel, in: in, out: sc}
	return nil
}

// stopMonClient ends the client (its stdin closed, it exits); monMu held.
func (r *realCeph) stopMonClient() {
	if r.monc == nil {
		return
	}
	_ = r.monc.in.Close()
	done := make(chan struct{})
	go func() { _ = r.monc.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.monc.cancel()
		<-done
	}
	r.monc.cancel()
	r.monc = nil
}

// flags are the cluster flags PVE lists, from the real OSD map: pause is
// set when pauserd is (PVE's get_real_flag_name).
func (r *realCeph) flags() (map[string]bool, error) {
	var d struct {
		Flags string `json:"flags"`
	}
	if err := r.monJSON(&d, map[string]any{"prefix": "osd dump"}); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, f := range strings.Split(d.Flags, ",") {
		if f == "pauserd" {
			f = "pause"
		}
		set[f] = true
	}
	out := map[string]bool{}
	for _, f := range cephFlagNames {
		out[f] = set[f]
	}
	return out, nil
}

// setFlag is PVE's `osd set`/`osd unset` mon command.
func (r *realCeph) setFlag(flag string, on bool) error {
	verb := "unset"
	if on {
		verb = "set"
	}
	_, err := r.mon(map[string]any{"prefix": "osd " + verb, "key": flag})
	return err
}

// status is PVE's ceph_cluster_status over the real cluster: status, the
// health in detail, and `mon dump` and `mgr dump` in place of Ceph's
// summaries.
func (r *realCeph) status() (map[string]any, error) {
	var st, health, mon, mgr map[string]any
	for _, q := range []struct {
		v   *map[string]any
		cmd map[string]any
	}{
		{&st, map[string]any{"prefix": "status"}},
		{&health, map[string]any{"prefix": "health", "detail": "detail"}},
		{&mon, map[string]any{"prefix": "mon dump"}},
		{&mgr, map[string]any{"prefix": "mgr dump"}},
	} {
		if err := r.monJSON(q.v, q.cmd); err != nil {
			return nil, err
		}
	}
	st["health"], st["monmap"], st["mgrmap"] = health, mon, mgr
	return st, nil
}

func (r *realCeph) flagsOrDie() (map[string]bool, *apiError) {
	f, err := r.flags()
	if err != nil {
		return nil, die("%s", err.Error())
	}
	return f, nil
}

// realBaseline is what the real cluster held when the simulator started:
// tests share one lab, so each simulator puts it back when it closes.
type realBaseline struct {
	flags  map[string]bool
	config map[[2]string]string // (section, name) -> value
	pools  map[string]bool
	osds   map[int]realOSD
}

func (r *realCeph) snapshot() (realBaseline, error) {
	b := realBaseline{config: map[[2]string]string{}, pools: map[string]bool{}}
	var err error
	if b.flags, err = r.flags(); err != nil {
		return b, err
	}
	db, err := r.configDB()
	if err != nil {
		return b, err
	}
	for who, kv := range db {
		for name, v := range kv {
			b.config[[2]string{who, name}] = v
		}
	}
	var pools []string
	if err := r.monJSON(&pools, map[string]any{"prefix": "osd pool ls"}); err != nil {
		return b, err
	}
	for _, p := range pools {
		b.pools[p] = true
	}
	b.osds, err = r.osds()
	return b, err
}

// restore puts the baseline's flags, config database and pools back.
func (r *realCeph) restore(base realBaseline) error {
	now, err := r.snapshot()
	if err != nil {
		return err
	}
	var errs []error
	for f, on := range base.flags {
		if now.flags[f] != on {
			errs = append(errs, r.setFlag(f, on))
		}
	}
	for k, v := range now.config {
		if old, ok := base.config[k]; !ok {
			_, err = r.mon(map[string]any{"prefix": "config rm", "who": k[0], "name": k[1]})
			errs = append(errs, err)
		} else if old != v {
			_, err = r.mon(map[string]any{"prefix": "config set", "who": k[0], "name": k[1], "value": old})
			errs = append(errs, err)
		}
	}
	for k, v := range base.config {
		if _, ok := now.config[k]; !ok {
			_, err = r.mon(map[string]any{"prefix": "config set", "who": k[0], "name": k[1], "value": v})
			errs = append(errs, err)
		}
	}
	for p := range now.pools {
		if !base.pools[p] {
			err = r.removePool(p)
			errs = append(errs, err)
		}
	}
	if changed, err := r.restoreOSDs(base.osds, now.osds); err != nil {
		errs = append(errs, err)
	} else if changed {
		errs = append(errs, r.waitActiveClean(3*time.Minute))
	}
	return errors.Join(errs...)
}

// restoreOSDs brings the lab's OSDs back: those a test destroyed are made
// again (same id, same host), those it made are removed, and every OSD is
// in and running. It reports whether it changed anything.
func (r *realCeph) restoreOSDs(base, now map[int]realOSD) (bool, error) {
	changed := false
	var errs []error
	for id := range now {
		if _, ok := base[id]; !ok {
			changed = true
			_, err := r.mon(map[string]any{"prefix": "osd out", "ids": []string{strconv.Itoa(id)}})
			errs = append(errs, err, r.control("osd", "destroy", strconv.Itoa(id)))
		}
	}
	ids := make([]int, 0, len(base))
	for id := range base {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		o, ok := now[id]
		name := fmt.Sprintf("osd.%d", id)
		switch {
		case !ok:
			changed = true
			host := r.baseHosts[id]
			errs = append(errs, r.control("osd", "create", strconv.Itoa(id), host))
			continue
		case o.In == 0:
			changed = true
			_, err := r.mon(map[string]any{"prefix": "osd in", "ids": []string{strconv.Itoa(id)}})
			errs = append(errs, err)
		}
		if active, _ := r.unit(name); active != "active" {
			changed = true
			errs = append(errs, r.daemon("start", name))
		}
	}
	return changed, errors.Join(errs...)
}

// waitActiveClean waits until every OSD is up and in and every PG is
// active+clean, so that the next test starts on a lab like the first.
func (r *realCeph) waitActiveClean(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		var st struct {
			OSDMap struct {
				NumOSDs   int `json:"num_osds"`
				NumUpOSDs int `json:"num_up_osds"`
				NumInOSDs int `json:"num_in_osds"`
			} `json:"osdmap"`
			PGMap struct {
				NumPGs  int `json:"num_pgs"`
				ByState []struct {
					Name  string `json:"state_name"`
					Count int    `json:"count"`
				} `json:"pgs_by_state"`
			} `json:"pgmap"`
		}
		if err := r.monJSON(&st, map[string]any{"prefix": "status"}); err == nil {
			clean := 0
			for _, b := range st.PGMap.ByState {
				if b.Name == "active+clean" {
					clean = b.Count
				}
			}
			o := st.OSDMap
			if o.NumUpOSDs == o.NumOSDs && o.NumInOSDs == o.NumOSDs && clean == st.PGMap.NumPGs {
				return nil
			}
			last = fmt.Sprintf("%d OSDs, %d up, %d in, %d of %d PGs active+clean", o.NumOSDs, o.NumUpOSDs, o.NumInOSDs, clean, st.PGMap.NumPGs)
		} else {
			last = err.Error()
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("the lab had not every OSD up and in and every PG active+clean within %s: %s", limit, last)
}

// ---- pools: Ceph decides, the model mirrors the real OSD map ----

// realPoolEntry is a pool of the real OSD map (`osd dump`).
type realPoolEntry struct {
	ID        int                       `json:"pool"`
	Name      string                    `json:"pool_name"`
	Size      int                       `json:"size"`
	MinSize   int                       `json:"min_size"`
	PGNum     int                       `json:"pg_num"`
	PGTarget  int                       `json:"pg_num_target"`
	Autoscale string                    `json:"pg_autoscale_mode"`
	CrushRule int                       `json:"crush_rule"`
	Apps      map[string]map[string]any `json:"application_metadata"`
	Options   struct {
		PGNumMin    int     `json:"pg_num_min"`
		TargetBytes int64   `json:"target_size_bytes"`
		TargetRatio float64 `json:"target_size_ratio"`
	} `json:"options"`
}

func (r *realCeph) pools() ([]realPoolEntry, map[int]string, error) {
	var d struct {
		Pools []realPoolEntry `json:"pools"`
	}
	if err := r.monJSON(&d, map[string]any{"prefix": "osd dump"}); err != nil {
		return nil, nil, err
	}
	var rules []struct {
		ID   int    `json:"rule_id"`
		Name string `json:"rule_name"`
	}
	if err := r.monJSON(&rules, map[string]any{"prefix": "osd crush rule dump"}); err != nil {
		return nil, nil, err
	}
	names := map[int]string{}
	for _, rl := range rules {
		names[rl.ID] = rl.Name
	}
	return d.Pools, names, nil
}

// poolGetAll is `osd pool get <name> all` as strings, set_pool's "before".
func (r *realCeph) poolGetAll(name string) (map[string]string, error) {
	out, err := r.mon(map[string]any{"prefix": "osd pool get", "pool": name, "var": "all", "format": "json"})
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		return nil, err
	}
	cur := map[string]string{}
	for k, v := range all {
		cur[k] = fmt.Sprint(v)
	}
	return cur, nil
}

// poolSet is one of set_pool's mon commands.
func (r *realCeph) poolSet(name, key, val string) error {
	var err error
	if key == "application" {
		_, err = r.mon(map[string]any{"prefix": "osd pool application enable", "pool": name, "app": val})
	} else {
		_, err = r.mon(map[string]any{"prefix": "osd pool set", "pool": name, "var": key, "val": val})
	}
	return err
}

// syncPoolsLocked makes the model's pools the real ones: same ids, names
// and settings; pools only the model had are gone.
func (s *Sim) syncPoolsLocked(cs *cephState) error {
	lab, rules, err := s.realCeph.pools()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, rp := range lab {
		keep[rp.Name] = true
		p := cs.pool(rp.Name)
		if p == nil {
			p = &cephPool{Name: rp.Name, Stored: cephDefaultStored}
			p.setPGNum(rp.PGNum)
			cs.Pools = append(cs.Pools, p)
		}
		if p.PGNum != rp.PGNum {
			p.setPGNum(rp.PGNum)
		}
		p.PGNumTarget = rp.PGTarget
		p.ID, p.Size, p.MinSize, p.Autoscale, p.CrushRule = rp.ID, rp.Size, rp.MinSize, rp.Autoscale, rules[rp.CrushRule]
		p.PGNumMin, p.TargetSize, p.TargetRatio = rp.Options.PGNumMin, rp.Options.TargetBytes, rp.Options.TargetRatio
		p.Application = ""
		for app := range rp.Apps {
			p.Application = app
		}
		cs.NextPoolID = max(cs.NextPoolID, rp.ID+1)
	}
	cs.Pools = slices.DeleteFunc(cs.Pools, func(p *cephPool) bool { return !keep[p.Name] })
	cs.settle()
	return nil
}

// realCreatePool is create_pool on the real cluster: `osd pool create`
// with PVE's pg_num (an existing pool is no error), then set_pool.
func (s *Sim) realCreatePoolLocked(cs *cephState, name string, params map[string]string, log *[]string) error {
	r := s.realCeph
	pgNum, err := strconv.Atoi(params["pg_num"])
	if err != nil {
		return fmt.Errorf("pg_num %q: %w", params["pg_num"], err)
	}
	if _, err := r.mon(map[string]any{"prefix": "osd pool create", "pool": name, "pg_num": pgNum}); err != nil {
		return fmt.Errorf("mon_command failed - %w", err)
	}
	return s.realSetPoolLocked(cs, name, params, log)
}

func (s *Sim) realSetPoolLocked(cs *cephState, name string, params map[string]string, log *[]string) error {
	r := s.realCeph
	cur, err := r.poolGetAll(name)
	if err != nil {
		return fmt.Errorf("mon_command failed - %w", err)
	}
	err = setPool(name, cur, params, log, func(k, v string) error { return r.poolSet(name, k, v) })
	if serr := s.syncPoolsLocked(cs); serr != nil && err == nil {
		err = serr
	}
	return err
}

func (s *Sim) realDestroyPoolLocked(cs *cephState, name string) error {
	if err := s.realCeph.removePool(name); err != nil {
		return fmt.Errorf("mon_command failed - %w", err)
	}
	return s.syncPoolsLocked(cs)
}

// realPoolsLocked brings the model's pools up to the real cluster's before
// a read; nothing without a real lab.
func (s *Sim) realPoolsLocked(cs *cephState) *apiError {
	if s.realCeph == nil {
		return nil
	}
	if err := s.syncPoolsLocked(cs); err != nil {
		return die("mon_command failed - %s", err.Error())
	}
	return nil
}

// ---- OSDs: PVE's OSD workers run on the lab; up and in are the lab's ----

// realOSD is an OSD of the real OSD map (`osd dump`).
type realOSD struct {
	ID int `json:"osd"`
	Up int `json:"up"`
	In int `json:"in"`
}

func (r *realCeph) osds() (map[int]realOSD, error) {
	var d struct {
		OSDs []realOSD `json:"osds"`
	}
	if err := r.monJSON(&d, map[string]any{"prefix": "osd dump"}); err != nil {
		return nil, err
	}
	out := map[int]realOSD{}
	for _, o := range d.OSDs {
		out[o.ID] = o
	}
	return out, nil
}

// osdHost is the lab host (network namespace) an OSD runs in.
func (r *realCeph) osdHost(id int) string {
	b, _ := os.ReadFile(filepath.Join(r.opts.Dir, "ceph", "run", fmt.Sprintf("osd.%d.host", id)))
	return strings.TrimSpace(string(b))
}

// control runs the lab's control script (scripts/testlab.sh).
func (r *realCeph) control(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.opts.Control, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// syncOSDsLocked takes up and in of the model's OSDs from the real OSD
// map: the monitors decide when a stopped OSD is down, not the model.
func (s *Sim) syncOSDsLocked(cs *cephState) *apiError {
	if s.realCeph == nil {
		return nil
	}
	lab, err := s.realCeph.osds()
	if err != nil {
		return die("mon_command failed - %s", err.Error())
	}
	for id, o := range cs.OSDs {
		ro, ok := lab[id]
		if !ok || !s.realCeph.backed(id) {
			continue
		}
		if up := ro.Up == 1; up != o.Up {
			cs.setOSDUp(id, up)
		}
		if in := ro.In == 1; in != o.In {
			o.In = in
			cs.Epoch++
		}
	}
	cs.settle()
	return nil
}

// realCreateOSD is the create worker's ceph-volume on the lab. The lab
// starts with the OSDs the tests create first (osd.0 and osd.1 on the
// first node, ...): an OSD of the model's id already running on that node
// is the one PVE would have made; one running on another node leaves the
// model's OSD unbacked (tests with one OSD per node); any other is made
// (`osd new`, mkfs).
func (r *realCeph) createOSD(id int, node string) error {
	lab, err := r.osds()
	if err != nil {
		return err
	}
	if _, ok := lab[id]; ok {
		if r.osdHost(id) != node {
			r.mu.Lock()
			r.unbacked[id] = true
			r.mu.Unlock()
		}
		return nil
	}
	return r.control("osd", "create", strconv.Itoa(id), node)
}

// backed: the model's OSD id is the lab's OSD of that id.
func (r *realCeph) backed(id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.unbacked[id]
}

// forgetOSD: a destroyed model OSD's id is free again.
func (r *realCeph) forgetOSD(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.unbacked, id)
}

// safeToDestroy is Ceph's own verdict (`osd safe-to-destroy`).
func (r *realCeph) safeToDestroy(id int) (bool, string) {
	if _, err := r.mon(map[string]any{"prefix": "osd safe-to-destroy", "ids": []string{strconv.Itoa(id)}}); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// okToStop is Ceph's `osd ok-to-stop`.
func (r *realCeph) okToStop(id int) (bool, string) {
	if _, err := r.mon(map[string]any{"prefix": "osd ok-to-stop", "ids": []string{strconv.Itoa(id)}}); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// ---- data: real objects where the model only counts bytes ----

// realDataPy writes, verifies or removes n objects of 4 MiB whose content
// follows from their names, so that a check needs no record of them.
const realDataPy = `
import json, random, sys, rados
conf, keyring, mode, pool, n = sys.argv[1:6]
c = rados.Rados(conffile=conf, conf={"keyring": keyring})
c.connect(timeout=20)
io = c.open_ioctx(pool)
size, bad = 4 << 20, []
for i in range(int(n)):
    name = "pvesim-data-%d" % i
    data = random.Random(name).randbytes(size)
    try:
        if mode == "write":
            io.write_full(name, data)
        elif mode == "remove":
            io.remove_object(name)
        elif io.read(name, size) != data:
            bad.append("%s/%s: content differs" % (pool, name))
    except Exception as e:
        bad.append("%s/%s: %s" % (pool, name, e))
print(json.dumps(bad))
`

// realDataMax bounds what a test's "stored bytes" become on the lab's
// 3 GiB OSDs: enough that draining an OSD moves real data for seconds.
const realDataMax = 128 << 20

func (r *realCeph) data(mode, pool string, n int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conf, keyring := r.confPath(), r.keyringPath()
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", realDataPy, conf, keyring, mode, pool, strconv.Itoa(n)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s objects in %s: %w: %s", mode, pool, err, bytes.TrimSpace(ee.Stderr))
		}
		return nil, err
	}
	var bad []string
	if err := json.Unmarshal(out, &bad); err != nil {
		return nil, fmt.Errorf("%s objects in %s: %w", mode, pool, err)
	}
	return bad, nil
}

// store puts real objects for a pool's stored bytes (up to realDataMax).
func (r *realCeph) store(pool string, bytes int64) error {
	n := int(min(bytes, realDataMax) >> 22)
	r.mu.Lock()
	had := r.written[pool]
	r.mu.Unlock()
	if n < had {
		if _, err := r.data("remove", pool, had); err != nil {
			return err
		}
	}
	bad, err := r.data("write", pool, n)
	if err == nil && len(bad) > 0 {
		err = fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	r.mu.Lock()
	r.written[pool] = n
	if err != nil {
		r.storeErrs = append(r.storeErrs, "could not write the test's data: "+err.Error())
	}
	r.mu.Unlock()
	return err
}

// removeData removes what store wrote from the pools that are left.
func (r *realCeph) removeData() error {
	var pools []string
	if err := r.monJSON(&pools, map[string]any{"prefix": "osd pool ls"}); err != nil {
		return err
	}
	var errs []error
	for _, p := range pools {
		if n := r.written[p]; n > 0 {
			_, err := r.data("remove", p, n)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dataLoss reads back every object store wrote into a pool that still
// exists: a missing or changed object is lost data.
func (r *realCeph) dataLoss() []string {
	r.mu.Lock()
	written := maps.Clone(r.written)
	r.mu.Unlock()
	var pools []string
	if err := r.monJSON(&pools, map[string]any{"prefix": "osd pool ls"}); err != nil {
		return []string{"list pools: " + err.Error()}
	}
	out := slices.Clone(r.storeErrs)
	for _, p := range pools {
		if n := written[p]; n > 0 {
			bad, err := r.data("verify", p, n)
			if err != nil {
				bad = append(bad, err.Error())
			}
			out = append(out, bad...)
		}
	}
	return out
}

// ---- ceph.conf: the lab's daemons read what /etc/pve/ceph.conf sets ----

// labConfKeep are keys of /etc/pve/ceph.conf that describe PVE's cluster
// (addresses, keyrings, paths, authentication): the lab keeps its own.
var labConfKeep = regexp.MustCompile(`^(fsid|mon_host|mon_initial_members|public_network|cluster_network|public_addr|cluster_addr|` +
	`keyring|host|ms_bind_ipv[46]|auth_.*|mon_allow_pool_delete|osd_pool_default_.*|.*_(data|dir|file|socket|path))$`)

// labConf is the lab's ceph.conf with the options of PVE's file (cfg, as
// parseCephConf reads it) merged in, section by section: on PVE every
// daemon reads /etc/pve/ceph.conf, so here they read what it sets.
func labConf(base string, cfg map[string]map[string]string) string {
	type section struct {
		name string
		keys []string
		vals map[string]string
	}
	var secs []*section
	find := func(name string) *section {
		for _, s := range secs {
			if s.name == name {
				return s
			}
		}
		s := &section{name: name, vals: map[string]string{}}
		secs = append(secs, s)
		return s
	}
	var cur *section
	for _, line := range strings.Split(base, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
		case t[0] == '[' && strings.HasSuffix(t, "]"):
			cur = find(t[1 : len(t)-1])
		case cur != nil:
			if k, v, ok := strings.Cut(t, "="); ok {
				k = strings.TrimSpace(k)
				cur.keys = append(cur.keys, k)
				cur.vals[k] = strings.TrimSpace(v)
			}
		}
	}
	for _, name := range sortedKeys(cfg) {
		for _, k := range sortedKeys(cfg[name]) {
			if labConfKeep.MatchString(normalizeKeyName(k)) {
				continue
			}
			s := find(name)
			if _, ok := s.vals[k]; !ok {
				s.keys = append(s.keys, k)
			}
			s.vals[k] = cfg[name][k]
		}
	}
	var b strings.Builder
	b.WriteString("# the lab's own settings, then what /etc/pve/ceph.conf sets (pvesim, make testlab)\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			fmt.Fprintf(&b, "%s = %s\n", k, s.vals[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeConf makes the lab's ceph.conf the lab's base plus cfg; daemons
// read it when they start, `ceph` on every call.
func (r *realCeph) writeConf(cfg map[string]map[string]string) error {
	path := r.confPath()
	tmp := path + ".pvesim"
	if err := os.WriteFile(tmp, []byte(labConf(r.baseConf, cfg)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// configDBLocked is the monitors' configuration database by who
// (section[/mask]): the real one behind a lab, else the model's.
func (s *Sim) configDBLocked(cs *cephState) (map[string]map[string]string, *apiError) {
	if s.realCeph == nil {
		return cs.ConfigDB, nil
	}
	db, err := s.realCeph.configDB()
	if err != nil {
		return nil, die("mon_command failed - %s", err.Error())
	}
	return db, nil
}

// configDB is the real monitors' database (`config dump`) by who, as
// `config set` names it: section[/mask].
func (r *realCeph) configDB() (map[string]map[string]string, error) {
	var dump []struct{ Section, Mask, Name, Value string }
	if err := r.monJSON(&dump, map[string]any{"prefix": "config dump"}); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, e := range dump {
		who := e.Section
		if e.Mask != "" {
			who += "/" + e.Mask
		}
		if out[who] == nil {
			out[who] = map[string]string{}
		}
		out[who][e.Name] = e.Value
	}
	return out, nil
}

// confPath and keyringPath are the lab's ceph.conf and admin keyring.
func (r *realCeph) confPath() string { return filepath.Join(r.opts.Dir, "ceph", "ceph.conf") }
func (r *realCeph) keyringPath() string {
	return filepath.Join(r.opts.Dir, "ceph", "keyring", "ceph.client.admin.keyring")
}
