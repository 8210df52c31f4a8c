package pve

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
)

// A read-only client logs in (a POST PVE needs for a ticket) and reads,
// but refuses every write before anything reaches PVE.
func TestReadOnlyClientRefusesWritesBeforeSending(t *testing.T) {
	var writes atomic.Int32
	ts := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api2/json/access/ticket" {
			_, _ = w.Write([]byte(`{"data":{"ticket":"PVE:root@pam:1::x","CSRFPreventionToken":"c","username":"root@pam"}}`))
			return
		}
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		_, _ = w.Write([]byte(`{"data":{"version":"9.1.1"}}`))
	}))
	c := clientFor(t, ts, Config{Username: "root@pam", Password: "secret", ReadOnly: true})
	ctx := context.Background()
	if err := c.Get(ctx, "/version", nil, nil); err != nil {
		t.Fatalf("read through a read-only client: %v", err)
	}
	for _, call := range []func() error{
		func() error { return c.Post(ctx, "/nodes/n1/qemu", nil, nil) },
		func() error { return c.Put(ctx, "/cluster/options", nil, nil) },
		func() error { return c.Delete(ctx, "/nodes/n1/qemu/100", nil, nil) },
	} {
		if err := call(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("write through a read-only client: got %v, want ErrReadOnly", err)
		}
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("%d writes reached the server", n)
	}
}
