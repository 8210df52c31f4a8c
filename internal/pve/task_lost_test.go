package pve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

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

	// Dropped before PVE acted: no task of it, so it had no effect and is
	// sent again (once: the second POST is answered).
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-before:1x"); err != nil {
		t.Fatal(err)
	}
	posts = 0
	upid, err = c.StartTask(ctx, "z2g4a", "qmcreate", "101", func() (string, error) {
		posts++
		return c.CreateVM(ctx, "z2g4a", 101, refVMOptions())
	})
	if err != nil || posts != 2 {
		t.Fatalf("drop-before: %q, %v after %d POSTs; want the create's task after two", upid, err, posts)
	}
	if _, err := c.WaitTask(ctx, upid); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := sim.VMConfig(101); cfg == nil {
		t.Fatalf("VM 101: %v", cfg)
	}
	// Every answer lost, no task ever: sent 1 + lostAnswerResends times,
	// then the lost answer's error stands.
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-before"); err != nil {
		t.Fatal(err)
	}
	posts = 0
	_, err = c.StartTask(ctx, "z2g4a", "qmcreate", "102", func() (string, error) {
		posts++
		return c.CreateVM(ctx, "z2g4a", 102, refVMOptions())
	})
	if !OutcomeUnknown(err) || posts != 1+lostAnswerResends {
		t.Fatalf("always dropped: %v after %d POSTs; want the lost answer's error after %d", err, posts, 1+lostAnswerResends)
	}
}

// The node's clock a little behind the client's (the UPID's start time is
// the node's): the task of a lost answer is still found.
func TestStartTaskToleratesClockSkew(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	sim.SetNodeClockOffset("z2g4a", -1500*time.Millisecond)
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-after:1x"); err != nil {
		t.Fatal(err)
	}
	upid, err := c.StartTask(ctx, "z2g4a", "qmcreate", "100", func() (string, error) {
		return c.CreateVM(ctx, "z2g4a", 100, refVMOptions())
	})
	if err != nil || upid == "" {
		t.Fatalf("StartTask with the node's clock 1.5 s behind: %q, %v; want the create's task", upid, err)
	}
}

// A lost answer is matched only to a task of the client's own user, as
// PVE writes it into the UPID (root@pam for a ticket, root@pam!tokenid for
// a token): root@pam's qmcreate of VM 100, just before, is not the task
// of the token's create whose POST never reached PVE.
func TestStartTaskIgnoresAnotherUsersTask(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	info := sim.Info()
	root, err := NewClient(Config{Endpoint: info.Endpoint, Username: "root@pam", Password: info.RootPassword,
		TLSFingerprint: info.TLSFingerprint, Retry: fastRetry, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rootUPID, err := root.StartTask(ctx, "z2g4a", "qmcreate", "100", func() (string, error) {
		return root.CreateVM(ctx, "z2g4a", 100, refVMOptions())
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := ParseUPID(rootUPID); err != nil || u.User != "root@pam" {
		t.Fatalf("root@pam's UPID %q (%v): want its user root@pam", rootUPID, err)
	}
	if err := sim.SetFaultSpec("POST /nodes/*/qemu=drop-before:1x"); err != nil {
		t.Fatal(err)
	}
	upid, err := c.StartTask(ctx, "z2g4a", "qmcreate", "100", func() (string, error) {
		return c.CreateVM(ctx, "z2g4a", 100, refVMOptions())
	})
	// Not taken for the token's task: the create is sent again and PVE
	// refuses it (root@pam's VM 100 is there).
	if upid != "" || err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("StartTask as %s: %q, %v; want the resent create refused, not root@pam's task %s", c.AuthUser(), upid, err, rootUPID)
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

// A sync write whose answer is lost is read back: done counts as done
// (sent once), not there is sent again (a pool create, dropped before PVE
// acted), and a write that always loses its answer stops after
// 1+lostAnswerResends sends with its error.
func TestWriteVerifiedSendsAgainOnlyWhatIsNotThere(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	poolExists := func(id string) func() (bool, error) {
		return func() (bool, error) {
			var pools []struct {
				PoolID string `json:"poolid"`
			}
			if err := c.Get(ctx, "/pools", nil, &pools); err != nil {
				return false, err
			}
			for _, p := range pools {
				if p.PoolID == id {
					return true, nil
				}
			}
			return false, nil
		}
	}
	for _, tc := range []struct {
		spec  string
		posts int
		fails bool
	}{
		{"POST /pools=drop-after:1x", 1, false},
		{"POST /pools=drop-before:1x", 2, false},
		{"POST /pools=drop-before", 1 + lostAnswerResends, true},
	} {
		if err := sim.SetFaultSpec(tc.spec); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("p%d", tc.posts)
		posts := 0
		err := c.WriteVerified(ctx, "create pool "+id, func() error {
			posts++
			return c.Post(ctx, "/pools", Params{"poolid": id}, nil)
		}, poolExists(id))
		if (err != nil) != tc.fails || posts != tc.posts {
			t.Errorf("%s: %v after %d POSTs; want %d (failing: %v)", tc.spec, err, posts, tc.posts, tc.fails)
		}
		if ok, _ := poolExists(id)(); ok == tc.fails {
			t.Errorf("%s: pool %s exists: %v", tc.spec, id, ok)
		}
	}
}

// A write marked Idempotent is sent again when its answer is lost; the
// same write unmarked is not (its effect is unknown to the client).
func TestIdempotentWriteIsSentAgainOnALostAnswer(t *testing.T) {
	sim, c := startVMSim(t, pvesim.Options{})
	ctx := context.Background()
	set := func(ctx context.Context, v string) error {
		return c.UpdateClusterOptions(ctx, map[string]string{"description": v}, nil)
	}
	if err := sim.SetFaultSpec("PUT /cluster/options=drop-before:1x"); err != nil {
		t.Fatal(err)
	}
	if err := set(ctx, "plain"); !OutcomeUnknown(err) {
		t.Fatalf("unmarked: %v; want the lost answer's error", err)
	}
	if err := sim.SetFaultSpec("PUT /cluster/options=drop-before:1x"); err != nil {
		t.Fatal(err)
	}
	if err := set(Idempotent(ctx), "marked"); err != nil {
		t.Fatalf("marked Idempotent: %v", err)
	}
	if o, err := c.ClusterOptions(ctx); err != nil || strings.TrimSpace(o.String("description")) != "marked" {
		t.Fatalf("description after the resent write: %v %v", o, err)
	}
}
