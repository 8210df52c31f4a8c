package pvesim

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"sort"
	"strings"
)

// --- update-ca-certificates ---

const localCADir = "/usr/local/share/ca-certificates/"

func sshUpdateCACertificates(x *sshExec) int {
	fresh := false
	for _, a := range x.argv[1:] {
		switch a {
		case "-f", "--fresh":
			fresh = true
		case "-v", "--verbose":
		default:
			x.errf("update-ca-certificates: [--verbose] [--fresh]\n")
			return 1
		}
	}
	if !x.root {
		x.errf("/usr/sbin/update-ca-certificates: 94: cannot create /etc/ssl/certs/ca-certificates.crt.new: Permission denied\n")
		return 2
	}
	st := x.s.execState(x.node)
	var now []string
	for p := range st.Files {
		if strings.HasPrefix(p, localCADir) && strings.HasSuffix(p, ".crt") {
			now = append(now, strings.TrimPrefix(p, localCADir))
		}
	}
	sort.Strings(now)
	old := st.CATrusted
	if fresh {
		old = nil
	}
	added, removed := 0, 0
	for _, n := range now {
		if !slices.Contains(old, n) {
			added++
		}
	}
	for _, n := range st.CATrusted {
		if !slices.Contains(now, n) || fresh {
			removed++
			delete(st.Files, "/etc/ssl/certs/"+pemName(n))
		}
	}
	x.outf("Updating certificates in /etc/ssl/certs...\n")
	x.errf("rehash: warning: skipping ca-certificates.crt,it does not contain exactly one certificate or CRL\n")
	for _, n := range now {
		f := st.Files[localCADir+n]
		if !oneCertificate(f.Content) {
			x.errf("rehash: warning: skipping %s,it does not contain exactly one certificate or CRL\n", pemName(n))
		}
		st.Files["/etc/ssl/certs/"+pemName(n)] = &simFile{Content: f.Content, Mode: 0o644, Owner: "root", Group: "root"}
	}
	st.CATrusted = now
	x.changed = true
	x.outf("%d added, %d removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n", added, removed)
	return 0
}

// pemName is the name update-ca-certificates links a local CA file as.
func pemName(crt string) string {
	return strings.ReplaceAll(strings.TrimSuffix(crt, ".crt"), "/", "_") + ".pem"
}

// oneCertificate reports whether b is exactly one PEM certificate.
func oneCertificate(b []byte) bool {
	block, rest := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" || strings.TrimSpace(string(rest)) != "" {
		return false
	}
	_, err := x509.ParseCertificate(block.Bytes)
	return err == nil
}
