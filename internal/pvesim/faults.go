package pvesim

import (
	"math/rand/v2"
	"net/http"
	"regexp"
	"time"
)

func (f *Fault) matches(method, path string) bool {
	return (f.Method == "" || f.Method == method) && f.re.MatchString(path)
}

// fireLocked decides whether a matching fault fires and consumes a count.
func (s *Sim) fireLocked(i int) bool {
	f := s.faults[i]
	if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
		return false
	}
	if f.Count > 0 {
		f.Count--
		if f.Count == 0 {
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		}
	}
	return true
}

// matchFault returns the first request-level fault (not task failures) that
// fires for this request.
func (s *Sim) matchFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.faults); i++ {
		f := s.faults[i]
		if f.Kind == FaultTaskFailure || !f.matches(method, path) {
			continue
		}
		cp := *f
		if s.fireLocked(i) {
			return &cp
		}
	}
	return nil
}

// takeTaskFaultLocked consumes a task-failure fault for a task being started.
func (s *Sim) takeTaskFaultLocked(method, path string) (string, bool) {
	for i := 0; i < len(s.faults); i++ {
		f := s.faults[i]
		if f.Kind != FaultTaskFailure || !f.matches(method, path) {
			continue
		}
		msg := f.Message
		if msg == "" {
			msg = "injected task failure"
		}
		if s.fireLocked(i) {
			return msg, true
		}
	}
	return "", false
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
			msg = lockTimeoutMessage(path)
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
// config cannot be taken in time.
func lockTimeoutMessage(path string) string {
	if m := qemuPathRE.FindStringSubmatch(path); m != nil {
		return "can't lock file '/var/lock/qemu-server/lock-" + m[1] + ".conf' - got timeout"
	}
	if m := lxcPathRE.FindStringSubmatch(path); m != nil {
		return "can't lock file '/run/lock/lxc/pve-config-" + m[1] + ".lock' - got timeout"
	}
	switch {
	case regexp.MustCompile(`^/storage|/storage(/|$)`).MatchString(path):
		return "cfs-lock 'file-storage_cfg' error: got lock request timeout"
	case regexp.MustCompile(`^/nodes/[^/]+/ceph`).MatchString(path):
		return "cfs-lock 'file-ceph_conf' error: got lock request timeout"
	}
	return "can't lock file '/var/lock/pve-manager/pve-network.lck' - got timeout"
}
