package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunPrintsOneJSONLineAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-nodes", "a1,b1", "-cluster", "c", "-auth-delay", "0s"}, out, io.Discard)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatal("no JSON line printed")
		}
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line, got %q", out.String())
	}
	var info pvesim.Info
	if err := json.Unmarshal([]byte(lines[0]), &info); err != nil {
		t.Fatal(err)
	}
	if len(info.Nodes) != 2 || info.Nodes[1].Name != "b1" || info.APIToken == "" {
		t.Fatalf("info %+v", info)
	}
	// Each node's sshd: endpoint and host key, plus the lab's client key.
	if info.SSHClientKey == "" || info.Nodes[1].SSHEndpoint == "" || !strings.HasPrefix(info.Nodes[1].SSHHostKey, "ssh-ed25519 ") {
		t.Fatalf("no SSH details in %+v", info.Nodes[1])
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(info.CACertPEM))
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", info.Nodes[1].Endpoint+"/api2/json/nodes/a1/status", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+info.APIToken)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	if err := run(context.Background(), []string{"-bogus"}, io.Discard, io.Discard); err == nil {
		t.Fatal("bad flag accepted")
	}
}
