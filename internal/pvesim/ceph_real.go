package pvesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
	r := &realCeph{opts: o, signer: signer, hosts: map[string]realHost{}, clients: map[string]*ssh.Client{}}
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
	conf := filepath.Join(r.opts.Dir, "ceph", "ceph.conf")
	keyring := filepath.Join(r.opts.Dir, "ceph", "keyring", "ceph.client.admin.keyring")
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

func (r *realCeph) close() {
	if r.watcher != nil {
		r.stopWatcher() // kills the process
		<-r.done
		_ = r.watcher.Wait()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, c := range r.clients {
		_ = c.Close()
		delete(r.clients, n)
	}
}
