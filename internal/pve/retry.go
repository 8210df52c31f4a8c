package pve

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"
)

// RetryPolicy decides which failed requests are sent again and how long to
// wait in between.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries, including the first (1 = no
	// retry; values below 1 count as 1 unless the whole policy is zero).
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// DefaultRetryPolicy is used when Config.Retry is the zero value.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, BaseDelay: 250 * time.Millisecond, MaxDelay: 5 * time.Second}

// Retryable reports whether a request with this method that failed with err
// may be sent again.
//
// Reads (GET) are retried on transient failures: broken or timed-out
// connections, 5xx, and PVE's proxy errors 595/596; not on answers a
// second try cannot change (APIError.Deterministic: 501, not found, "no
// such ...", Ceph not installed or initialised, parameter errors).
//
// Writes (POST, PUT, DELETE) are retried only when the request provably had
// no effect: the connection was never established, or PVE answered with a
// lock timeout ("got timeout"). A reset, timeout or 5xx after sending could
// mean the create already happened, and a blind re-POST could duplicate it
// or fail confusingly with "already exists".
//
// 4xx answers are never retried.
func (p RetryPolicy) Retryable(method string, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) && !isTimeout(err) {
		return false
	}
	var tlsErr *TLSError
	if errors.As(err, &tlsErr) {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false // a misspelt host name does not heal itself
	}
	read := method == http.MethodGet || method == http.MethodHead
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if apiErr.IsLockTimeout() {
			return true
		}
		// A definite answer (no /etc/pve/ceph.conf yet, no such HA
		// resource): retrying it only delays the caller.
		return read && !apiErr.Deterministic()
	}
	var ce *ConnectError
	if errors.As(err, &ce) && ce.Dial {
		return true
	}
	if isDialError(err) {
		return true
	}
	if !read {
		return false
	}
	if ce != nil {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, context.DeadlineExceeded)
}

// Backoff returns the delay before retry number attempt (0 for the first
// retry). It uses jitter over [BaseDelay/2, min(MaxDelay, BaseDelay*2^attempt)]:
// the random spread keeps parallel Terraform operations from retrying in
// lockstep against the same PVE lock, and the BaseDelay/2 floor avoids
// near-zero waits that would turn the retry loop into a burst.
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	base, maxD := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = DefaultRetryPolicy.BaseDelay
	}
	if maxD < base {
		maxD = base
	}
	upper := base
	for i := 0; i < attempt && upper < maxD; i++ {
		upper *= 2
	}
	if upper > maxD {
		upper = maxD
	}
	lower := base / 2
	if upper <= lower {
		return upper
	}
	return lower + rand.N(upper-lower+1)
}

func (p RetryPolicy) normalized() RetryPolicy {
	if p == (RetryPolicy{}) {
		return DefaultRetryPolicy
	}
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultRetryPolicy.BaseDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	return p
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isDialError reports whether err happened while establishing the TCP
// connection (refused, unreachable, DNS), i.e. before anything was sent.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
