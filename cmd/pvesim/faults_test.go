package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRunRefusesABadFaultSpec(t *testing.T) {
	err := run(context.Background(), []string{"-listen", "127.0.0.1:0", "-faults", "GET /version=teapot"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `-faults: fault rule "GET /version=teapot"`) {
		t.Fatalf("got %v", err)
	}
}

func TestRunFaultsAndTheControlListener(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-nodes", "a1", "-auth-delay", "0s",
			"-faults", "GET /version=503", "-fault-seed", "5", "-control", "127.0.0.1:0"}, out, io.Discard)
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
	var line struct {
		Endpoint  string `json:"endpoint"`
		APIToken  string `json:"api_token"`
		CACertPEM string `json:"ca_cert"`
		Control   string `json:"control"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &line); err != nil || line.Control == "" {
		t.Fatalf("JSON line %q: %v", out.String(), err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(line.CACertPEM))
	api := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	version := func() int {
		req, _ := http.NewRequest("GET", line.Endpoint+"/api2/json/version", nil)
		req.Header.Set("Authorization", "PVEAPIToken="+line.APIToken)
		res, err := api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	ctl := func(method, body string) (int, string) {
		req, _ := http.NewRequest(method, line.Control+"/faults", strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st := version(); st != 503 {
		t.Fatalf("-faults not in force: %d", st)
	}
	if code, body := ctl("GET", ""); code != 200 || body != "GET /version=503\n" {
		t.Fatalf("GET /faults: %d %q", code, body)
	}
	if code, body := ctl("PUT", "GET /version=502:1x"); code != 200 || body != "GET /version=502:1x\n" {
		t.Fatalf("PUT /faults: %d %q", code, body)
	}
	if st := version(); st != 502 {
		t.Fatalf("after PUT: %d", st)
	}
	if code, body := ctl("PUT", "GET /version=418"); code != 400 || !strings.Contains(body, "want 5xx") {
		t.Fatalf("a bad spec: %d %q", code, body)
	}
	ctl("PUT", "GET /version=503")
	if code, _ := ctl("DELETE", ""); code != 200 {
		t.Fatalf("DELETE /faults: %d", code)
	}
	if st := version(); st != 200 {
		t.Fatalf("after DELETE: %d", st)
	}
	// The control paths are not on the nodes' API ports.
	req, _ := http.NewRequest("DELETE", line.Endpoint+"/faults", nil)
	if res, err := api.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode != 501 {
			t.Fatalf("DELETE /faults on the API port: %d", res.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
