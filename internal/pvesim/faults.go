package pvesim

import (
	"encoding/binary"
	"hash/fnv"
	"net/http"
	"regexp"
	"strings"
	"time"
)

func (f *Fault) matchesMethod(method string) bool {
	if f.Method == "" || f.Method == "*" || f.Method == method {
		return true
	}
	for _, m := range strings.Split(f.Method, ",") {
		if strings.TrimSpace(m) == method {
			return true
		}
	}
	return false
}

func (f *Fault) matches(method, path string) bool {
	return f.matchesMethod(method) && f.re.MatchString(path)
}

// draw is the seeded coin for the n-th time key meets fault id: a hash, not
// a shared random stream, so that the k-th request of a method and path
// meets the same fault whatever order other requests (Terraform's parallel
// walk) come in.
func draw(seed int64, id int, key string, n int) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	_, _ = h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(id))
	_, _ = h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(key))
	// splitmix64's finaliser spreads FNV's low-entropy high bits.
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// fireLocked decides whether fault i fires for key and consumes a count.
func (s *Sim) fireLocked(i int, key string) bool {
	f := s.faults[i]
	if f.Rate > 0 && f.Rate < 1 {
		n := f.seen[key]
		f.seen[key] = n + 1
		if draw(s.opts.FaultSeed, f.id, key, n) >= f.Rate {
			return false
		}
	}
	if f.Count > 0 {
		f.Count--
		if f.Count == 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
	}
	return true
}

// matchFault returns the first request-level fault (not task or SSH
// faults) that fires for this request.
func (s *Sim) matchFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := method + " " + path
	for i := 0; i < len(s.faults); i++ {
		f := s.faults[i]
		if f.Kind.isTask() || f.Kind == FaultSSHDown || !f.matches(method, path) {
			continue
		}
		// A lock timeout needs a lock: reads and calls whose handler takes
		// none are served (write **=lock hits the writes that lock).
		if f.Kind == FaultLockTimeout && f.Message == "" && lockTimeoutMessage(method, path) == "" {
			continue
		}
		cp := *f
		if s.fireLocked(i, key) {
			return &cp
		}
	}
	return nil
}

// takeTaskFaultLocked consumes a task fault for a task of type typ and ID
// id being started by a request. Caller holds s.mu.
func (s *Sim) takeTaskFaultLocked(method, path, typ, id string) (*Fault, bool) {
	key := typ + ":" + id
	for i := 0; i < len(s.faults); i++ {
		f := s.faults[i]
		if !f.Kind.isTask() || !f.matches(method, path) ||
			(f.typeRE != nil && !f.typeRE.MatchString(typ)) || (f.idRE != nil && !f.idRE.MatchString(id)) {
			continue
		}
		if f.Kind == FaultTaskLockTimeout && f.Message == "" && taskLockTimeoutMessage(typ, id) == "" {
			continue
		}
		cp := *f
		if s.fireLocked(i, key) {
			return &cp, true
		}
	}
	return nil, false
}

// taskFaultMessage is the TASK ERROR a fired task fault gives.
func taskFaultMessage(f *Fault, typ, id string) string {
	if f.Message != "" {
		return f.Message
	}
	switch f.Kind {
	case FaultTaskLateFailure, FaultTaskKilled:
		return "unexpected status" // PVE::UPID: a worker that died without its status line
	case FaultTaskLockTimeout:
		return taskLockTimeoutMessage(typ, id)
	}
	return "injected task failure"
}

// taskLockTimeoutMessage is the lock timeout a worker of type typ meets
// inside the worker (so the API call itself succeeded and the task fails):
// lock_file_full's text, "can't lock file '<file>' - got timeout".
func taskLockTimeoutMessage(typ, id string) string {
	switch {
	case typ == "cephcreateosd", typ == "diskinit", typ == "wipedisk", typ == "zfscreate",
		typ == "lvmcreate", typ == "lvmthincreate", typ == "dircreate":
		// PVE::Diskmanage::locked_disk_action (pve-storage).
		return "can't lock file '/run/lock/pve-diskmanage.lck' - got timeout"
	case strings.HasPrefix(typ, "qm"):
		// PVE::AbstractConfig::lock_config_full: the create worker locks the
		// new VM's config (qemu-server API2/Qemu.pm create_vm).
		return "can't lock file '/var/lock/qemu-server/lock-" + id + ".conf' - got timeout"
	case strings.HasPrefix(typ, "vz"):
		return "can't lock file '/run/lock/lxc/pve-config-" + id + ".lock' - got timeout"
	case typ == "cephcreatemon" || typ == "cephdestroymon":
		// API2/Ceph/MON.pm: the worker edits ceph.conf under cfs_lock_file.
		return "cfs-lock 'file-ceph_conf' error: got lock request timeout"
	}
	return "" // no lock pvesim knows of: the fault does not apply
}

// sshDown reports whether a FaultSSHDown fires for a connection or command
// on node.
func (s *Sim) sshDown(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.faults); i++ {
		f := s.faults[i]
		if f.Kind == FaultSSHDown && (f.Node == "" || f.Node == "*" || f.Node == node) && s.fireLocked(i, "ssh "+node) {
			return true
		}
	}
	return false
}

// dropSSHDown closes the open connections of nodes whose sshd is down for
// good (a rate only fails some connections), so a client's pooled
// connection does not outlive the fault.
func (s *Sim) dropSSHDown() {
	s.mu.Lock()
	var nodes []string
	for _, f := range s.faults {
		if f.Kind != FaultSSHDown || (f.Rate > 0 && f.Rate < 1) {
			continue
		}
		if f.Node == "" || f.Node == "*" {
			nodes = append(nodes[:0], s.opts.Nodes...)
			break
		}
		nodes = append(nodes, f.Node)
	}
	s.mu.Unlock()
	for _, n := range nodes {
		s.DropSSHConnections(n)
	}
}

// applyFault acts on a fired fault; it reports whether the request is done.
func (s *Sim) applyFault(f *Fault, w http.ResponseWriter, r *http.Request, path string) bool {
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-s.closing:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	switch f.Kind {
	case FaultError:
		st := f.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		msg := f.Message
		if msg == "" {
			msg = "injected fault"
		}
		s.writeError(w, &apiError{Status: st, Message: msg})
		return true
	case FaultLockTimeout:
		msg := f.Message
		if msg == "" {
			msg = lockTimeoutMessage(r.Method, path)
		}
		s.writeError(w, die("%s", msg))
		return true
	case FaultConnectionReset:
		if sw, ok := w.(*statusWriter); ok {
			sw.logStatus(-1) // no response at all
			w = sw.ResponseWriter
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		panic(http.ErrAbortHandler)
	}
	return false
}

var (
	qemuPathRE = regexp.MustCompile(`^/nodes/[^/]+/qemu/(\d+)`)
	lxcPathRE  = regexp.MustCompile(`^/nodes/[^/]+/lxc/(\d+)`)
)

// lockTimeoutMessage is the text PVE gives when the lock guarding path's
// config cannot be taken in time: lock_file_full's "can't lock file '<file>'
// - got timeout" (pve-common PVE/Tools.pm) for VM and network configs, or
// cfs_lock's "cfs-lock '<id>' error: got lock request timeout" (pve-cluster
// PVE/Cluster.pm) behind the caller's "<errmsg>: " for files in /etc/pve.
func lockTimeoutMessage(method, path string) string {
	if method == "GET" {
		return "" // reads take no lock
	}
	if m := qemuPathRE.FindStringSubmatch(path); m != nil {
		return "can't lock file '/var/lock/qemu-server/lock-" + m[1] + ".conf' - got timeout"
	}
	if m := lxcPathRE.FindStringSubmatch(path); m != nil {
		return "can't lock file '/run/lock/lxc/pve-config-" + m[1] + ".lock' - got timeout"
	}
	// The errmsg of PVE::Storage::lock_storage_config (API2/Storage/Config.pm)
	// and PVE::AccessControl::lock_user_config (API2/Pool.pm).
	verb := map[string]string{"POST": "create", "PUT": "update", "DELETE": "delete"}[method]
	switch {
	case verb == "":
		return ""
	case path == "/storage" || strings.HasPrefix(path, "/storage/"):
		return verb + " storage failed: cfs-lock 'file-storage_cfg' error: got lock request timeout"
	case path == "/pools" || strings.HasPrefix(path, "/pools/"):
		if verb == "update" {
			return "update pools failed: cfs-lock 'file-user_cfg' error: got lock request timeout"
		}
		return verb + " pool failed: cfs-lock 'file-user_cfg' error: got lock request timeout"
	case method == "POST" && cephInitPathRE.MatchString(path):
		// pveceph init writes ceph.conf under cfs_lock_file (API2/Ceph.pm).
		return "cfs-lock 'file-ceph_conf' error: got lock request timeout"
	case method != "GET" && networkPathRE.MatchString(path):
		// API2/Network.pm: lock_file($iflockfn, 10, ...).
		return "can't lock file '/etc/network/.pve-interfaces.lock' - got timeout"
	}
	// No lock pvesim knows of: OSD, monitor and Ceph pool creates lock (if
	// at all) inside their workers (task lock).
	return ""
}

var (
	cephInitPathRE = regexp.MustCompile(`^/nodes/[^/]+/ceph/init$`)
	networkPathRE  = regexp.MustCompile(`^/nodes/[^/]+/network(/[^/]+)?$`)
)

// dropAfter makes sw's answer go nowhere and returns what closes the
// connection once the request was served: the write was applied, the
// client never hears.
func (s *Sim) dropAfter(sw *statusWriter) func() {
	orig := sw.ResponseWriter
	sw.ResponseWriter = &discardWriter{h: http.Header{}}
	return func() {
		if hj, ok := orig.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
}

// discardWriter is a ResponseWriter that keeps nothing (and cannot be
// hijacked, so writeError answers through it).
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// markFault records the task fault f (nil: none) the call's task met in
// its request's log record, unless a request fault is recorded already.
func (c *call) markFault(f *Fault) {
	if f == nil || c.rec == nil || c.rec.Fault != "" {
		return
	}
	c.rec.Fault, c.rec.FaultRule = f.Kind.String(), f.Rule
}
