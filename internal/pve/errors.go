package pve

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// ErrNotFound is matched (errors.Is) by API errors that mean the addressed
// object does not exist, so resources can be removed from state.
var ErrNotFound = errors.New("not found")

// ErrReadOnly is returned, before anything is sent, for a write through a
// client configured ReadOnly.
var ErrReadOnly = errors.New("refused by a read-only client")

// IsNotFound reports whether err means "the object does not exist".
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// APIError is a non-2xx answer from the PVE API.
//
// PVE puts the first line of the message in the HTTP reason phrase and, since
// pve-http-server 5.2.0, the full message in the JSON body together with a
// per-parameter "errors" map. Older servers only have the reason phrase.
type APIError struct {
	Method     string
	Path       string
	StatusCode int
	// Message is PVE's message, trimmed of its trailing newline.
	Message string
	// Errors holds per-parameter errors (400 "Parameter verification failed.").
	Errors map[string]string
	// AuthID names the identity used (token id or user name, never a secret).
	// It is set for 401 answers so the message says who failed to log in.
	AuthID string
}

// Error formats the error like
// `PVE API POST /nodes/n1/network: 400 Parameter verification failed. (mtu: value must have a minimum value of 1280)`.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "PVE API %s %s: %d", e.Method, e.Path, e.StatusCode)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if msg != "" {
		b.WriteByte(' ')
		b.WriteString(msg)
	}
	if len(e.Errors) > 0 {
		keys := make([]string, 0, len(e.Errors))
		for k := range e.Errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", k, strings.TrimRight(e.Errors[k], "\n"))
		}
		b.WriteByte(')')
	}
	if e.StatusCode == http.StatusUnauthorized {
		who := e.AuthID
		if who == "" {
			who = "the configured credentials"
		}
		if strings.Contains(who, "!") {
			fmt.Fprintf(&b, ": authentication failed for API token %q (check the token id and secret, that the token has not expired, and that the user and token exist)", who)
		} else {
			fmt.Fprintf(&b, ": authentication failed for user %q (check the user name including its realm, e.g. root@pam, and the password)", who)
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) work.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.IsNotFoundStatus()
}

// IsNotFoundStatus reports whether PVE said the addressed object does not
// exist: a 404, or a 400/500 whose message or any per-parameter error contains
// "does not exist" (e.g. network GET/PUT/DELETE answer
// 400 {"iface":"interface does not exist"}; many handlers die with
// "... does not exist" as a 500).
//
// "no such ..." and "hostname lookup '...' failed" are deliberately not
// not-found: an unknown node is a configuration error that must surface, not
// a reason to silently drop resources from state.
func (e *APIError) IsNotFoundStatus() bool {
	switch e.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest, http.StatusInternalServerError:
	default:
		return false
	}
	if strings.Contains(e.Message, "hostname lookup") {
		return false
	}
	if strings.Contains(e.Message, "does not exist") {
		return true
	}
	for _, v := range e.Errors {
		if strings.Contains(v, "does not exist") {
			return true
		}
	}
	return false
}

// deterministicTexts are parts of PVE's messages (5xx included) that no
// second try changes within a request's retries: the object or the
// prerequisite is missing, or the request itself is wrong. Sources:
//   - "no such ": PVE's own look-ups (pve-ha-manager "no such resource
//     'vm:100'", "no such ha group", "no such ha rule"; pve-manager "no such
//     OSD", "no such monitor id"; pve-cluster "no such cluster node";
//     pve-storage "no such volume group"); lower case, so the errno text
//     "No such file or directory" of a briefly unmounted /etc/pve is not
//     one of them;
//   - "hostname lookup '...' failed" (pve-common PVE::Network, for a node
//     the cluster does not list);
//   - "binary not installed", "pveceph configuration not initialized",
//     "ceph not fully configured" (pve-manager PVE::Ceph::Tools before
//     pveceph install, init and the admin keyring);
//   - "rados_connect failed - No such file or directory" (no monitor to
//     connect to yet) and Ceph's "unrecognized pool" (ENOENT from
//     mon_command);
//   - "Parameter verification failed" (pve-common's parameter check).
var deterministicTexts = []string{
	"no such ", "hostname lookup '",
	"binary not installed", "pveceph configuration not initialized", "ceph not fully configured",
	"rados_connect failed - No such file or directory", "unrecognized pool",
	"Parameter verification failed",
}

// Deterministic reports whether the answer is one that sending the same
// request again cannot change: any 4xx, 501, a not-found answer, an
// answer with per-parameter errors, or a 5xx whose message says an object
// or a prerequisite is missing (deterministicTexts). PVE dies with 500
// for most of these, the same code a restarting pveproxy or a lock
// timeout gives; retrying them only delays the caller, who may be
// waiting for exactly this answer (ceph.conf before init, a pool before
// its create). A lock timeout is never deterministic.
func (e *APIError) Deterministic() bool {
	switch {
	case e.IsLockTimeout():
		return false
	case e.StatusCode < 500, e.StatusCode == http.StatusNotImplemented:
		return true
	case e.IsNotFoundStatus(), len(e.Errors) > 0:
		return true
	}
	for _, t := range deterministicTexts {
		if strings.Contains(e.Message, t) {
			return true
		}
	}
	return false
}

// IsLockTimeout reports whether PVE failed to take a lock in time: a file
// lock ("can't lock file '/var/lock/...' - got timeout", pve-common
// lock_file_full) or a pmxcfs lock ("create pool failed: cfs-lock
// 'file-user_cfg' error: got lock request timeout", pve-cluster cfs_lock,
// which says so only when the lock was not taken and the code never ran).
// The request had no effect and may be retried, even if it was a write.
func (e *APIError) IsLockTimeout() bool {
	return e.StatusCode == http.StatusInternalServerError &&
		(strings.Contains(e.Message, "got timeout") || strings.Contains(e.Message, "got lock request timeout"))
}

// ConnectError means the endpoint could not be reached or the connection
// broke before an answer arrived.
type ConnectError struct {
	Endpoint string
	// Dial is true when the connection was never established, so the request
	// provably was not sent (safe to retry even for writes).
	Dial bool
	Err  error
}

func (e *ConnectError) Error() string {
	if e.Dial {
		return fmt.Sprintf("cannot connect to the PVE API at %s: %v (check the endpoint host and port, usually 8006, and that it is reachable from here)", e.Endpoint, e.Err)
	}
	return fmt.Sprintf("connection to the PVE API at %s failed: %v", e.Endpoint, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// TLSError means the server's certificate was rejected. Fingerprint is the
// SHA-256 of the presented leaf certificate, formatted like PVE shows it
// (upper-case, colon-separated), so the user can pin it after checking it on
// the node (Datacenter > node > System > Certificates, or
// `pvenode cert info`).
type TLSError struct {
	Endpoint    string
	Fingerprint string
	// Pinned is the configured tls_fingerprint when the pin did not match.
	Pinned string
	Err    error
}

func (e *TLSError) Error() string {
	if e.Pinned != "" {
		return fmt.Sprintf("TLS certificate of %s does not match tls_fingerprint: pinned %s, presented %s. "+
			"If the node's certificate was renewed on purpose, verify the new fingerprint on the node and update tls_fingerprint",
			e.Endpoint, e.Pinned, e.Fingerprint)
	}
	return fmt.Sprintf("TLS certificate of %s is not trusted (%v). "+
		"If this is your PVE node, verify its certificate fingerprint on the node and set tls_fingerprint = %q, "+
		"or set ca_cert to the PEM of the PVE cluster CA (/etc/pve/pve-root-ca.pem on any node)",
		e.Endpoint, e.Err, e.Fingerprint)
}

func (e *TLSError) Unwrap() error { return e.Err }
