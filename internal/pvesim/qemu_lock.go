package pvesim

import (
	"fmt"
	"time"
)

// The config lock of qemu-server (PVE::AbstractConfig::lock_config_full):
// an flock on /var/lock/qemu-server/lock-<vmid>.conf that every config
// writer takes; a writer waits for it and gives up with "can't lock file
// '...' - got timeout" after the timeout (10 s for lock_config). Workers
// (qmconfig, qmcreate, qmmove, ...) hold it while they work, so parallel
// writers of one VM queue up behind them and time out when the queue is
// longer than the timeout; a client that retries or serialises gets
// through.

type vmFlock struct {
	held bool
	free chan struct{} // closed when released
}

// lockTimeout scales one of PVE's lock timeouts (in seconds, 10 = the
// usual one) by Options.QemuLockTimeout.
func (s *Sim) lockTimeout(pveSeconds float64) time.Duration {
	base := s.opts.QemuLockTimeout
	if base <= 0 {
		base = 10 * time.Second
	}
	return time.Duration(float64(base) * pveSeconds / 10)
}

func qemuLockFile(vmid int) string {
	return fmt.Sprintf("/var/lock/qemu-server/lock-%d.conf", vmid)
}

func lockTimeoutError(vmid int) *apiError {
	return die("can't lock file '%s' - got timeout", qemuLockFile(vmid))
}

// flockVMLocked takes vm's config lock, waiting up to timeout with s.mu
// released (so the holder can finish). Caller holds s.mu; after a wait the
// VM may have changed or gone, so callers look it up again. The returned
// func releases the lock (under s.mu).
func (s *Sim) flockVMLocked(vm *qemuVM, timeout time.Duration) (func(), *apiError) {
	if vm.flock == nil {
		vm.flock = &vmFlock{}
	}
	fl := vm.flock
	deadline := time.Now().Add(timeout)
	for fl.held {
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return nil, lockTimeoutError(vm.VMID)
		}
		ch := fl.free
		s.mu.Unlock()
		t := time.NewTimer(remaining)
		closing := false
		select {
		case <-ch:
		case <-t.C:
		case <-s.closing:
			closing = true
		}
		t.Stop()
		s.mu.Lock()
		if closing {
			return nil, die("interrupted by signal")
		}
	}
	fl.held = true
	fl.free = make(chan struct{})
	return func() {
		fl.held = false
		close(fl.free)
	}, nil
}

// workLocked lets worker t spend its working time (one TaskDuration, or
// its share of PVE's time with Options.TimeScale) holding the config lock,
// with s.mu released. Caller holds s.mu.
func (s *Sim) workLocked(t *task) { s.waitLocked(t.work) }

// waitLocked lets d pass with s.mu released. Caller holds s.mu.
func (s *Sim) waitLocked(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-s.closing:
	}
	t.Stop()
	s.mu.Lock()
}
