package nodeexec

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyChangedError is a node presenting a host key other than the one
// its known_hosts entry holds: a reinstalled node, or someone in between.
// It is never accepted automatically.
type HostKeyChangedError struct {
	Node, Address, File string
	Line                int
	Known               []string // fingerprints (SHA256:...) in the file
	Presented           string   // fingerprint the node presented
	KeyType             string
}

func (e *HostKeyChangedError) Error() string {
	return fmt.Sprintf("host key of node %s at %s has changed: %s (line %d) has %s, the node presented %s (%s). "+
		"Someone may be intercepting the connection, or the node was reinstalled. Compare with the key on the node's console "+
		"(ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub); only if it matches, remove the old entry (ssh-keygen -R %s -f %s) "+
		"and connect again.",
		e.Node, e.Address, e.File, e.Line, strings.Join(e.Known, ", "), e.Presented, e.KeyType,
		keyFileSuffix(e.KeyType), quoteArg(knownhosts.Normalize(e.Address)), quoteArg(e.File))
}

// HostKeyUnknownError is a node whose host key the known_hosts file does
// not hold, with trust-on-first-use off.
type HostKeyUnknownError struct {
	Node, Address, File string
	Presented           string
	KeyType             string
}

func (e *HostKeyUnknownError) Error() string {
	host, port := splitAddress(e.Address)
	return fmt.Sprintf("host key of node %s at %s is not known: the node presented %s (%s) and %s has no entry for %s. "+
		"Check the fingerprint on the node (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub), then add the key to the file "+
		"(ssh-keyscan -p %s %s >> %s, and compare the fingerprints), or enable trust-on-first-use to record keys on first contact.",
		e.Node, e.Address, e.Presented, e.KeyType, e.File, e.Address,
		keyFileSuffix(e.KeyType), port, quoteArg(host), quoteArg(e.File))
}

// keyFileSuffix maps a key type to the name of sshd's host key file.
func keyFileSuffix(keyType string) string {
	switch {
	case keyType == ssh.KeyAlgoED25519:
		return "ed25519"
	case strings.HasPrefix(keyType, "ecdsa-"):
		return "ecdsa"
	case keyType == ssh.KeyAlgoRSA:
		return "rsa"
	}
	return "*"
}

func splitAddress(address string) (string, string) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return address, "22"
	}
	return host, port
}

// hostKeys checks host keys against one known_hosts file, read again for
// every connection so entries added meanwhile count.
type hostKeys struct {
	file string
	tofu bool
	logf func(msg string, kv ...any)
	mu   sync.Mutex // serialises this process's reads and appends
}

// load returns the file's callback, or nil when the file does not exist
// (every host unknown).
func (h *hostKeys) load() (ssh.HostKeyCallback, error) {
	if _, err := os.Stat(h.file); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	cb, err := knownhosts.New(h.file)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts file %s: %w", h.file, err)
	}
	return cb, nil
}

// probeKey is a key no host has, to ask the file which keys it knows.
var probeKey = func() ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		panic(err)
	}
	return k
}()

// algorithms returns the host key algorithms to offer for address: those
// of the keys the file holds for it, so a node with several host keys
// presents the one we know; nil (any) for an unknown host.
func (h *hostKeys) algorithms(address string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cb, err := h.load()
	if err != nil || cb == nil {
		return nil, err
	}
	var ke *knownhosts.KeyError
	if err := cb(address, dummyAddr(address), probeKey); !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil, nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		for _, a := range algorithmsForKeyType(k.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos, nil
}

func algorithmsForKeyType(t string) []string {
	if t == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{t}
}

type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }

func dummyAddr(address string) net.Addr { return tcpAddr(address) }

// callback verifies the key node presents at address.
func (h *hostKeys) callback(node, address string) ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		cb, err := h.load()
		if err != nil {
			return err
		}
		if cb != nil {
			err := cb(address, remote, key)
			if err == nil {
				return nil
			}
			var ke *knownhosts.KeyError
			var re *knownhosts.RevokedError
			switch {
			case errors.As(err, &re):
				return fmt.Errorf("host key of node %s at %s (%s) is marked @revoked in %s (line %d)",
					node, address, ssh.FingerprintSHA256(key), h.file, re.Revoked.Line)
			case errors.As(err, &ke) && len(ke.Want) > 0:
				e := &HostKeyChangedError{Node: node, Address: address, File: h.file, Line: ke.Want[0].Line,
					Presented: ssh.FingerprintSHA256(key), KeyType: key.Type()}
				for _, w := range ke.Want {
					e.Known = append(e.Known, ssh.FingerprintSHA256(w.Key)+" ("+w.Key.Type()+")")
				}
				return e
			case !errors.As(err, &ke):
				return err
			}
		}
		if !h.tofu {
			return &HostKeyUnknownError{Node: node, Address: address, File: h.file, Presented: ssh.FingerprintSHA256(key), KeyType: key.Type()}
		}
		if err := h.record(address, key); err != nil {
			return fmt.Errorf("trust-on-first-use: record the host key of node %s in %s: %w", node, h.file, err)
		}
		if h.logf != nil {
			h.logf("ssh: trusted the host key of a node on first use", "node", node, "address", address,
				"fingerprint", ssh.FingerprintSHA256(key), "known_hosts", h.file)
		}
		return nil
	}
}

// record appends address's key to the file, creating it (0600, in a 0700
// directory) when needed. Caller holds h.mu.
func (h *hostKeys) record(address string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(h.file, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	line := knownhosts.Line([]string{knownhosts.Normalize(address)}, key) + "\n"
	// Start on a new line if the file does not end with one.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		return err
	}
	return f.Sync()
}

// joinHostPort formats an address the way known_hosts and ssh expect.
func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
