package pve

import (
	"net/http"
	"testing"
)

// pve-cluster cfs_lock: "cfs-lock '<id>' error: got lock request timeout"
// when the lock was not taken (the code never ran), behind the caller's
// errmsg (API2/Pool.pm "create pool failed", API2/Storage/Config.pm).
func TestCfsLockTimeoutIsRetriedEvenForWrites(t *testing.T) {
	p := DefaultRetryPolicy
	for _, msg := range []string{
		"create pool failed: cfs-lock 'file-user_cfg' error: got lock request timeout\n",
		"create storage failed: cfs-lock 'file-storage_cfg' error: got lock request timeout\n",
	} {
		err := &APIError{StatusCode: 500, Message: msg}
		if !err.IsLockTimeout() || !p.Retryable(http.MethodPost, err) {
			t.Errorf("%q: not retried as a lock timeout", msg)
		}
	}
	// A command that ran out of time under the lock may have acted.
	ran := &APIError{StatusCode: 500, Message: "'file-user_cfg'-locked command timed out - aborting\n"}
	if ran.IsLockTimeout() || p.Retryable(http.MethodPost, ran) {
		t.Error("a timed-out locked command is retried")
	}
}

// "pveceph configuration not initialized" is PVE's answer before pveceph
// init, not a transient error: the read is not sent again (under 20 % 5xx
// the retries of it used up the attempts and the create failed on an
// injected 500 instead of learning that Ceph was not initialized).
func TestCephNotInitializedIsNotRetried(t *testing.T) {
	err := &APIError{StatusCode: 500, Message: "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'\n"}
	if DefaultRetryPolicy.Retryable(http.MethodGet, err) {
		t.Fatal("retried")
	}
	if !DefaultRetryPolicy.Retryable(http.MethodGet, &APIError{StatusCode: 500, Message: "injected fault\n"}) {
		t.Fatal("a plain 500 on a read is not retried")
	}
}
