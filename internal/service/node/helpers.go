package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// unitNameRE is a systemd unit name with its type suffix: letters,
// digits, ':', '_', '.', '-', '@' and '\' (systemd's escapes such as
// \x2d); the suffix is required so that the name means one unit.
var unitNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9:_.@\\-]*\.(service|socket|target|timer|path|mount|automount|swap|slice)$`)

const unitNameWhat = "a systemd unit name with its type suffix, such as systemd-journal-upload.service or pve-daily-update.timer"

// splitImportID splits "node/rest" for import.
func splitImportID(id string) (node, rest string, ok bool) {
	node, rest, found := strings.Cut(id, "/")
	if !found || !framework.IsNodeName(node) || rest == "" {
		return "", "", false
	}
	return node, rest, true
}

// readOptionalFile returns a file's content and whether it exists.
func readOptionalFile(ctx context.Context, ex *nodeexec.Pool, node, p string) ([]byte, bool, error) {
	b, err := ex.ReadFile(ctx, node, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// unitProps reads properties of a unit with systemctl show; a unit
// systemd does not know has LoadState=not-found.
func unitProps(ctx context.Context, ex *nodeexec.Pool, node, unit string, props ...string) (map[string]string, error) {
	res, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "show", "-p", strings.Join(props, ","), unit))
	if err != nil {
		return nil, err
	}
	out := parseSystemctlShow(string(res.Stdout))
	for _, p := range props {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("node %s: systemctl show %s did not report %s: %q", node, unit, p, res.Stdout)
		}
	}
	return out, nil
}

// daemonReload makes systemd load changed unit files and drop-ins.
func daemonReload(ctx context.Context, ex *nodeexec.Pool, node string) error {
	_, err := ex.Run(ctx, node, nodeexec.Cmd("systemctl", "daemon-reload"))
	return err
}
