package provider

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

type ctxKey struct{}

// payload stands for what terraform-plugin-go hangs on an RPC's context
// (loggers, fields); the test watches whether it is collected.
type payload struct{ _ [4096]byte }

// rpcs calls GetMetadata n times, each with a context carrying its own
// payload, and returns how many payloads the garbage collector freed.
func rpcs(t *testing.T, s tfprotov6.ProviderServer, n int) int {
	t.Helper()
	freed := make(chan struct{}, n)
	for range n {
		p := &payload{}
		runtime.AddCleanup(p, func(ch chan struct{}) { ch <- struct{}{} }, freed)
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, p))
		if _, err := s.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{}); err != nil {
			t.Fatal(err)
		}
		cancel() // gRPC cancels a stream's context when its RPC ends
	}
	got := 0
	// Cleanups run on their own goroutine after the collection that finds
	// the object unreachable: collect until all ran or a few rounds found
	// nothing more.
	for idle := 0; got < n && idle < 5; {
		runtime.GC()
		select {
		case <-freed:
			got++
			idle = 0
		default:
			idle++
			runtime.Gosched()
		}
	}
	runtime.KeepAlive(s) // a served server lives as long as the process
	return got
}

// The framework keeps every RPC's context until StopProvider (the reason
// for releasingServer); behind it, what the RPC's context carried is
// freed when the RPC returns. Should the first half fail, the framework
// no longer keeps them and releasingServer can go.
func TestServerReleasesRPCContexts(t *testing.T) {
	bare, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	if got := rpcs(t, bare, 20); got != 0 {
		t.Errorf("framework server: %d of 20 RPC contexts freed, want 0 (kept until StopProvider)", got)
	}
	wrapped, err := Server(New("test"))()
	if err != nil {
		t.Fatal(err)
	}
	if got := rpcs(t, wrapped, 20); got != 20 {
		t.Errorf("releasingServer: %d of 20 RPC contexts freed, want 20", got)
	}
}

// recorder is an inner server that keeps the context it was given.
type recorder struct {
	tfprotov6.ProviderServer
	ctx    context.Context
	during func(context.Context)
}

func (r *recorder) ReadResource(ctx context.Context, _ *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.ctx = ctx
	if r.during != nil {
		r.during(ctx)
	}
	return &tfprotov6.ReadResourceResponse{}, nil
}

// During the RPC the handle is the RPC's context (values, cancellation);
// after it, a done context that holds nothing.
func TestReleasingServerHandle(t *testing.T) {
	outer, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	rec := &recorder{during: func(ctx context.Context) {
		if ctx.Value(ctxKey{}) != "v" {
			t.Error("during the RPC: the context's values are not there")
		}
		inner, innerCancel := context.WithCancel(ctx) // as the framework derives its own
		defer innerCancel()
		cancel() // a stop, or the client going away, during the RPC
		select {
		case <-inner.Done():
		default:
			t.Error("during the RPC: cancelling the RPC's context did not reach a context derived from the handle")
		}
	}}
	s := &releasingServer{inner: rec}
	if _, err := s.ReadResource(outer, &tfprotov6.ReadResourceRequest{}); err != nil {
		t.Fatal(err)
	}
	if rec.ctx.Value(ctxKey{}) != nil {
		t.Error("after the RPC: the handle still reaches the RPC's context")
	}
	select {
	case <-rec.ctx.Done():
	default:
		t.Error("after the RPC: the handle is not done")
	}
}

func TestQuietLogs(t *testing.T) {
	keys := []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_PVE"}
	clearLogEnv := func() {
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TF_LOG") {
				t.Setenv(k, "") // restored after the test
				_ = os.Unsetenv(k)
			}
		}
	}
	clearLogEnv()
	t.Setenv("TF_LOG", "DEBUG")
	QuietLogs()
	for _, k := range keys {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("TF_LOG set: QuietLogs set %s=%s", k, v)
		}
	}
	clearLogEnv()
	QuietLogs()
	for _, k := range keys {
		if v := os.Getenv(k); v != "OFF" {
			t.Errorf("no TF_LOG*: %s=%q, want OFF", k, v)
		}
	}
}
