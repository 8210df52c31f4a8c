package pve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

const (
	testTokenID     = "root@pam!terraform"
	testTokenSecret = "5f1c0d2e-aaaa-bbbb-cccc-0123456789ab"
	testToken       = testTokenID + "=" + testTokenSecret
)

// fastRetry keeps retry tests quick without changing what is retried.
var fastRetry = RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func newTLSServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // rejected handshakes are expected in TLS tests
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

func certFingerprintHex(ts *httptest.Server) string {
	sum := sha256.Sum256(ts.Certificate().Raw)
	return hex.EncodeToString(sum[:])
}

func certFingerprintPVE(ts *httptest.Server) string {
	sum := sha256.Sum256(ts.Certificate().Raw)
	return FormatFingerprint(sum[:])
}

// clientFor builds a client for ts, pinned to its certificate, with fast
// retries and task polling, unless cfg says otherwise.
func clientFor(t *testing.T, ts *httptest.Server, cfg Config) *Client {
	t.Helper()
	cfg.Endpoint = ts.URL
	if cfg.APIToken == "" && cfg.Username == "" {
		cfg.APIToken = testToken
	}
	if cfg.TLSFingerprint == "" && cfg.CACertPEM == "" && !cfg.Insecure {
		cfg.TLSFingerprint = certFingerprintHex(ts)
	}
	if cfg.Retry == (RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	if cfg.TaskPollInterval == 0 {
		cfg.TaskPollInterval = time.Millisecond
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// rawResponse writes a response with an arbitrary reason phrase, which
// net/http cannot do; PVE puts the first message line there.
func rawResponse(t *testing.T, w http.ResponseWriter, status int, reason, body string) {
	t.Helper()
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nServer: pve-api-daemon/3.0\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, reason, len(body), body)
	_ = buf.Flush()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
