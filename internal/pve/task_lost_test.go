package pve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func TestOutcomeUnknown(t *testing.T) {
	for err, want := range map[error]bool{
		&ConnectError{Endpoint: "e", Err: io.EOF}:                            true,
		&ConnectError{Endpoint: "e", Err: syscall.ECONNRESET}:                true,
		&ConnectError{Endpoint: "e", Dial: true, Err: syscall.ECONNREFUSED}:  false,
		&APIError{StatusCode: 500, Message: "VM 100 already exists"}:         false,
		fmt.Errorf("wrapped: %w", &ConnectError{Endpoint: "e", Err: io.EOF}): true,
		context.Canceled:                 false,
		errors.New("some other failure"): false,
	} {
		if got := OutcomeUnknown(err); got != want {
			t.Errorf("OutcomeUnknown(%v) = %v, want %v", err, got, want)
		}
	}
}

// A create whose answer is lost (drop-after: PVE started the task, the
// connection closed before the UPID came back) is followed through its
// task, not failed and not sent again: the reference lab's apply failed
// "Unable to Create VM 100 ... EOF", and the next one "VM 100 already
// exists" (or, for an OSD, "already holds osd.0").
func TestStartTaskFollowsTheTaskOfALostAnswer(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-after:1x"); err != nil {
		t.Fatal(err)
	}
	posts := 0
	upid, err := c.StartTask(ctx, "z2g4a", "qmcreate", "100", func() (string, error) {
		posts++
		return c.CreateVM(ctx, "z2g4a", 100, refVMOptions())
	})
	if err != nil || posts != 1 {
		t.Fatalf("StartTask: %q, %v after %d POSTs; want the create's task after one", upid, err, posts)
	}
	if _, err := c.WaitTask(ctx, upid); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := sim.VMConfig(100); cfg["name"] != "vm100" {
		t.Fatalf("VM 100: %v", cfg)
	}

	// Dropped before PVE acted: no task, the error stands, nothing is sent again.
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-before:1x"); err != nil {
		t.Fatal(err)
	}
	posts = 0
	_, err = c.StartTask(ctx, "z2g4a", "qmcreate", "101", func() (string, error) {
		posts++
		return c.CreateVM(ctx, "z2g4a", 101, refVMOptions())
	})
	if !OutcomeUnknown(err) || posts != 1 {
		t.Fatalf("drop-before: %v after %d POSTs; want the lost answer's error after one", err, posts)
	}
	if cfg, _ := sim.VMConfig(101); cfg != nil {
		t.Fatalf("VM 101 exists: %v", cfg)
	}
}

// A worker that failed to take its lock first did nothing: the VM config
// lock (lock_file_full), the disk-manage lock, and cfs_lock's for
// ceph.conf (API2/Ceph/MON.pm takes it before creating a monitor).
func TestIsConfigLockTimeoutOfTasks(t *testing.T) {
	for exit, want := range map[string]bool{
		"can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout": true,
		"can't lock file '/run/lock/pve-diskmanage.lck' - got timeout":        true,
		"cfs-lock 'file-ceph_conf' error: got lock request timeout":           true,
		"unexpected status": false,
		"command 'ceph-volume lvm create' failed: got timeout": false,
	} {
		if got := IsConfigLockTimeout(&TaskError{ExitStatus: exit}); got != want {
			t.Errorf("IsConfigLockTimeout(task %q) = %v, want %v", exit, got, want)
		}
	}
}
