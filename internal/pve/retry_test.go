package pve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestRetryable(t *testing.T) {
	p := DefaultRetryPolicy
	dial := &ConnectError{Endpoint: "https://x:8006", Dial: true, Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	reset := &ConnectError{Endpoint: "https://x:8006", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	eof := &ConnectError{Endpoint: "https://x:8006", Err: io.EOF}
	rawDial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	lock := &APIError{StatusCode: 500, Message: "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"}
	netLock := &APIError{StatusCode: 500, Message: "can't lock file '/etc/network/.pve-interfaces.lock' - got timeout"}
	five := &APIError{StatusCode: 500, Message: "bond 'bond0' - unable to find slave 'eno9'"}
	gone := &APIError{StatusCode: 500, Message: "pool 'x' does not exist"}
	cases := []struct {
		name   string
		method string
		err    error
		want   bool
	}{
		{"nil", "GET", nil, false},
		{"GET dial", "GET", dial, true},
		{"POST dial", "POST", dial, true},
		{"DELETE raw dial", "DELETE", fmt.Errorf("wrapped: %w", rawDial), true},
		{"GET reset", "GET", reset, true},
		{"POST reset", "POST", reset, false},
		{"PUT EOF", "PUT", eof, false},
		{"GET EOF", "GET", eof, true},
		{"GET bare ECONNRESET", "GET", syscall.ECONNRESET, true},
		{"GET timeout", "GET", context.DeadlineExceeded, true},
		{"GET canceled", "GET", context.Canceled, false},
		{"POST timeout", "POST", &ConnectError{Err: context.DeadlineExceeded}, false},
		{"GET 500", "GET", five, true},
		{"POST 500", "POST", five, false},
		{"GET 502", "GET", &APIError{StatusCode: 502}, true},
		{"GET 503", "GET", &APIError{StatusCode: 503}, true},
		{"GET 595", "GET", &APIError{StatusCode: 595, Message: "Connection refused"}, true},
		{"GET 596", "GET", &APIError{StatusCode: 596, Message: "Connection timed out"}, true},
		{"POST 595", "POST", &APIError{StatusCode: 595}, false},
		{"DELETE 596", "DELETE", &APIError{StatusCode: 596}, false},
		{"GET 501", "GET", &APIError{StatusCode: 501}, false},
		{"GET 500 not found", "GET", gone, false},
		// PVE's deterministic 500s: what is missing stays missing within
		// a request's retries.
		{"GET HA resource missing", "GET", &APIError{StatusCode: 500, Message: "no such resource 'vm:100'"}, false},
		{"GET HA rule missing", "GET", &APIError{StatusCode: 500, Message: "no such ha rule 'r1'"}, false},
		{"GET OSD missing", "GET", &APIError{StatusCode: 500, Message: "no such OSD '7'"}, false},
		{"GET cluster node missing", "GET", &APIError{StatusCode: 500, Message: "no such cluster node 'pve9'"}, false},
		{"GET unknown node", "GET", &APIError{StatusCode: 500, Message: "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known"}, false},
		{"GET ceph not installed", "GET", &APIError{StatusCode: 500, Message: "binary not installed: /usr/bin/ceph-mon"}, false},
		{"GET ceph not initialised", "GET", &APIError{StatusCode: 500, Message: "pveceph configuration not initialized - missing '/etc/pve/ceph.conf', missing '/etc/pve/ceph'"}, false},
		{"GET ceph no keyring", "GET", &APIError{StatusCode: 500, Message: "ceph not fully configured - missing '/etc/pve/priv/ceph.client.admin.keyring'"}, false},
		{"GET no monitor", "GET", &APIError{StatusCode: 500, Message: "rados_connect failed - No such file or directory"}, false},
		{"GET pool missing", "GET", &APIError{StatusCode: 500, Message: "mon_command failed - unrecognized pool 'rbd'"}, false},
		{"GET 500 parameter errors", "GET", &APIError{StatusCode: 500, Message: "unable to apply", Errors: map[string]string{"vmid": "invalid"}}, false},
		// Transient ones still are retried: /etc/pve briefly unmounted (a
		// pve-cluster restart), Ceph's monitors without quorum, a proxy
		// restarting.
		{"GET pmxcfs restarting", "GET", &APIError{StatusCode: 500, Message: "unable to open file '/etc/pve/nodes/pve1/qemu-server/100.conf' - No such file or directory"}, true},
		{"GET ceph no quorum", "GET", &APIError{StatusCode: 500, Message: "got timeout"}, true},
		{"GET rados timeout", "GET", &APIError{StatusCode: 500, Message: "rados_connect failed - Connection timed out"}, true},
		{"GET proxy refused", "GET", &APIError{StatusCode: 595, Message: "Connection refused"}, true},
		{"GET lock", "GET", lock, true},
		{"POST lock", "POST", lock, true},
		{"PUT lock", "PUT", netLock, true},
		{"DELETE lock", "DELETE", lock, true},
		{"GET 400", "GET", &APIError{StatusCode: 400}, false},
		{"GET 401", "GET", &APIError{StatusCode: 401}, false},
		{"GET 403", "GET", &APIError{StatusCode: 403}, false},
		{"GET 404", "GET", &APIError{StatusCode: 404}, false},
		{"POST 429", "POST", &APIError{StatusCode: 429}, false},
		{"GET TLS", "GET", &TLSError{Err: errors.New("x")}, false},
		{"GET wrapped 503", "GET", fmt.Errorf("ctx: %w", &APIError{StatusCode: 503}), true},
		{"GET unknown host", "GET", &ConnectError{Dial: true, Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "pve9", IsNotFound: true}}}, false},
		{"GET plain error", "GET", errors.New("decode failed"), false},
	}
	for _, tc := range cases {
		if got := p.Retryable(tc.method, tc.err); got != tc.want {
			t.Errorf("%s: Retryable(%s, %v) = %v, want %v", tc.name, tc.method, tc.err, got, tc.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for attempt := 0; attempt < 70; attempt++ {
		upper := p.BaseDelay << min(attempt, 20)
		if upper > p.MaxDelay {
			upper = p.MaxDelay
		}
		var lo, hi time.Duration = time.Hour, 0
		for i := 0; i < 300; i++ {
			d := p.Backoff(attempt)
			if d < p.BaseDelay/2 || d > upper {
				t.Fatalf("Backoff(%d) = %v outside [%v, %v]", attempt, d, p.BaseDelay/2, upper)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if attempt >= 2 && hi-lo < (upper-p.BaseDelay/2)/4 {
			t.Errorf("Backoff(%d) shows no jitter: range [%v, %v]", attempt, lo, hi)
		}
	}
	// Zero-value policies fall back to sane delays instead of spinning.
	if d := (RetryPolicy{}).Backoff(0); d <= 0 {
		t.Errorf("zero policy Backoff = %v", d)
	}
}

// countingServer answers the n-th request (1-based) with responses[n-1], and
// the last entry thereafter.
func countingServer(t *testing.T, responses ...func(w http.ResponseWriter)) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(responses) {
			i = len(responses) - 1
		}
		responses[i](w)
	}))
	return clientFor(t, ts, Config{}), &n
}

func respond(status int, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { writeJSON(w, status, body) }
}

func TestRetryBehaviour(t *testing.T) {
	ctx := context.Background()
	ok := respond(200, `{"data":"done"}`)

	t.Run("POST 500 sent once", func(t *testing.T) {
		c, n := countingServer(t, respond(500, `{"data":null,"message":"bond 'bond0' - unable to find slave 'eno9'\n"}`), ok)
		err := c.Post(ctx, "/nodes/n1/network", Params{"iface": "bond0"}, nil)
		if err == nil || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d, want error after 1 request", err, n.Load())
		}
	})
	t.Run("POST 503 sent once", func(t *testing.T) {
		c, n := countingServer(t, respond(503, `{"data":null}`), ok)
		if err := c.Post(ctx, "/nodes/n1/qemu", nil, nil); err == nil || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d", err, n.Load())
		}
	})
	t.Run("GET 503 then 200", func(t *testing.T) {
		c, n := countingServer(t, respond(503, `{"data":null}`), ok)
		var out string
		if err := c.Get(ctx, "/nodes/n1/network", nil, &out); err != nil || out != "done" || n.Load() != 2 {
			t.Fatalf("err=%v out=%q requests=%d, want success after 2", err, out, n.Load())
		}
	})
	t.Run("POST lock timeout then 200", func(t *testing.T) {
		c, n := countingServer(t, respond(500, `{"data":null,"message":"can't lock file '/etc/network/.pve-interfaces.lock' - got timeout\n"}`), ok)
		if err := c.Post(ctx, "/nodes/n1/network", Params{"iface": "vmbr1"}, nil); err != nil || n.Load() != 2 {
			t.Fatalf("err=%v requests=%d, want success after 2", err, n.Load())
		}
	})
	t.Run("GET gives up after MaxAttempts", func(t *testing.T) {
		c, n := countingServer(t, respond(502, `{"data":null}`))
		err := c.Get(ctx, "/version", nil, nil)
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != 502 || int(n.Load()) != fastRetry.MaxAttempts {
			t.Fatalf("err=%v requests=%d, want 502 after %d", err, n.Load(), fastRetry.MaxAttempts)
		}
	})
	t.Run("GET deterministic 500 sent once", func(t *testing.T) {
		c, n := countingServer(t, respond(500, `{"data":null,"message":"no such resource 'vm:100'\n"}`), ok)
		if err := c.Get(ctx, "/cluster/ha/resources/vm:100", nil, nil); !IsHANotFound(err) || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d, want the HA not-found after 1 request", err, n.Load())
		}
	})
	t.Run("GET ceph not installed sent once", func(t *testing.T) {
		c, n := countingServer(t, respond(500, `{"data":null,"message":"binary not installed: /usr/bin/ceph-mon\n"}`), ok)
		if err := c.Get(ctx, "/nodes/n1/ceph/cfg/raw", nil, nil); !IsCephNotSetUp(err) || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d, want Ceph not set up after 1 request", err, n.Load())
		}
	})
	t.Run("GET lock timeout then 200", func(t *testing.T) {
		c, n := countingServer(t, respond(500, `{"data":null,"message":"got timeout\n"}`), ok)
		if err := c.Get(ctx, "/nodes/n1/ceph/osd", nil, nil); err != nil || n.Load() != 2 {
			t.Fatalf("err=%v requests=%d, want success after 2", err, n.Load())
		}
	})
	t.Run("GET 400 not retried", func(t *testing.T) {
		c, n := countingServer(t, respond(400, `{"data":null,"message":"Parameter verification failed.\n","errors":{"iface":"interface does not exist"}}`), ok)
		if err := c.Get(ctx, "/nodes/n1/network/x", nil, nil); !IsNotFound(err) || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d", err, n.Load())
		}
	})
	t.Run("ctx cancel stops retry sleep", func(t *testing.T) {
		var n atomic.Int32
		cctx, cancel := context.WithCancel(ctx)
		ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			cancel() // cancel while the client is about to back off
			writeJSON(w, 503, `{"data":null}`)
		}))
		c := clientFor(t, ts, Config{Retry: RetryPolicy{MaxAttempts: 5, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}})
		start := time.Now()
		err := c.Get(cctx, "/version", nil, nil)
		if !errors.Is(err, context.Canceled) || n.Load() != 1 {
			t.Fatalf("err=%v requests=%d", err, n.Load())
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("cancellation took %v: the backoff sleep ignored ctx", el)
		}
	})
}
