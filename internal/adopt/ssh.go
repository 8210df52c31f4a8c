package adopt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// errNoSSH is returned by sshRead when the run has no SSH access; areas
// record the objects they cannot read as skipped.
var errNoSSH = errors.New("no SSH access to the nodes (give the adoption an SSH key to read node files, trusted CAs, tuned and units)")

// readOnly tells, per program, whether an argv only reads. Adoption runs
// nothing else over SSH: a program or subcommand that is not listed here is
// refused before it reaches the node.
var readOnly = map[string]func(args []string) bool{
	"cat":        func([]string) bool { return true },
	"stat":       func([]string) bool { return true },
	"ls":         func([]string) bool { return true },
	"lsblk":      func([]string) bool { return true },
	"findmnt":    func([]string) bool { return true },
	"dpkg-query": func([]string) bool { return true },
	"tuned-adm":  func(a []string) bool { return len(a) > 0 && (a[0] == "active" || a[0] == "list") },
	"ethtool":    func(a []string) bool { return len(a) > 0 && (a[0] == "-g" || a[0] == "-i" || a[0] == "--show-ring") },
	"systemctl": func(a []string) bool {
		for _, w := range a {
			if strings.HasPrefix(w, "-") {
				continue
			}
			switch w {
			case "show", "cat", "is-enabled", "is-active", "list-unit-files", "list-units", "list-timers":
				return true
			}
			return false
		}
		return false
	},
	"ceph": cephReads,
}

// cephReads is the allow-list of ceph commands: exactly the one the
// adoption runs, pve_ceph_config's Read of the config database (`ceph
// config dump`, optionally --format json). A deny-list of verbs would let
// through what it forgot (osd pool delete, config-key put, auth
// get-or-create, mon remove, tell ... injectargs, mgr fail).
func cephReads(a []string) bool {
	if len(a) < 2 || a[0] != "config" || a[1] != "dump" {
		return false
	}
	rest := a[2:]
	switch {
	case len(rest) == 0:
		return true
	case len(rest) == 2 && (rest[0] == "--format" || rest[0] == "-f"):
		return rest[1] == "json" || rest[1] == "json-pretty"
	}
	return false
}

// allowSSH is the guard of every SSH command of an adoption, the
// discovery's and the read-only provider's: only what readOnly lists runs.
func allowSSH(argv []string) error {
	if len(argv) > 0 {
		if ok := readOnly[argv[0]]; ok != nil && ok(argv[1:]) {
			return nil
		}
	}
	return fmt.Errorf("adoption runs only commands that read; refusing %s", strings.Join(argv, " "))
}

// sshRead runs a read-only command on node and returns what it printed.
// Commands outside the read-only list are refused here, before SSH.
func (r *run) sshRead(ctx context.Context, node, program string, args ...string) ([]byte, error) {
	if err := allowSSH(append([]string{program}, args...)); err != nil {
		return nil, err
	}
	if r.src.SSH == nil {
		return nil, errNoSSH
	}
	res, err := r.src.SSH.Run(ctx, node, nodeexec.Cmd(program, args...))
	if err != nil {
		return nil, err
	}
	return res.Stdout, nil
}
