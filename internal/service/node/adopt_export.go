package node

import "strings"

// What adoption (internal/adopt) needs to know of these resources to
// decide, before importing, whether an object found on a node is one
// they manage.

// FileRefused returns why pve_node_file does not manage p ("" when it
// may).
func FileRefused(p string) string { return checkFilePath(p) }

// TrustedCAName returns the pve_node_trusted_ca name of a file directly
// in /usr/local/share/ca-certificates (root-ca-a.crt: root-ca-a), and
// false when the resource cannot name it.
func TrustedCAName(file string) (string, bool) {
	name, ok := strings.CutSuffix(file, ".crt")
	return name, ok && caNameRE.MatchString(name)
}

// TrustedCAProblem returns why pve_node_trusted_ca refuses pem as its
// pem ("" when it takes it): one CA certificate per file.
func TrustedCAProblem(pem string) string {
	if _, err := parseCA(pem); err != nil {
		return "the file " + err.Error()
	}
	return ""
}
