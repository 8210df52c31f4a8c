package nodeexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// File is a file to write on a node.
type File struct {
	Path    string // absolute, clean
	Content []byte
	// Secret scrubs Content from errors (Content is never logged anyway).
	Secret bool
	Mode   fs.FileMode // permission bits; 0 means 0644
	Owner  string      // "" means root
	Group  string      // "" means root
	// MakeDirs creates missing parent directories (0755, root:root); an
	// existing parent keeps its mode and owner.
	MakeDirs bool
}

// CheckPath refuses paths a file operation must not take: relative or
// unclean paths, "/", and control characters.
func CheckPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is not absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean (it should be %q)", p, path.Clean(p))
	case p == "/":
		return errors.New("path is /")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path %q contains a control character", p)
		}
	}
	return nil
}

// WriteFile writes f on node so that readers see the old or the new file,
// never a part: install(1) creates a temporary file beside f.Path from
// standard input (the content never becomes an argument, so no quoting or
// size limit applies to it) with the mode and owner set, then mv(1)
// renames it over f.Path.
func (p *Pool) WriteFile(ctx context.Context, node string, f File) error {
	if err := CheckPath(f.Path); err != nil {
		return err
	}
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	owner, group := f.Owner, f.Group
	if owner == "" {
		owner = "root"
	}
	if group == "" {
		group = "root"
	}
	dir, base := path.Split(f.Path)
	dir = strings.TrimSuffix(dir, "/")
	if f.MakeDirs && dir != "" {
		// install -d sets the mode and owner of the directory even when it
		// exists (coreutils does not preserve existing directories there,
		// unlike mkdir -p), which would open up a directory such as
		// /etc/ssl/private: run it only for a missing one.
		exists, err := p.isDir(ctx, node, dir)
		if err != nil {
			return err
		}
		if !exists {
			if _, err := p.Run(ctx, node, Cmd("install", "-d", "-m", "0755", "-o", "root", "-g", "root", "--", dir)); err != nil {
				return err
			}
		}
	}
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		return err
	}
	tmp := dir + "/." + base + ".tmp-" + hex.EncodeToString(suffix)
	install := Cmd("install", "-m", fmt.Sprintf("%04o", uint32(mode)), "-o", owner, "-g", group, "-T", "/dev/stdin", tmp)
	if f.Secret {
		install.SecretInput(Secret(f.Content))
	} else {
		install.Input(f.Content)
	}
	if _, err := p.Run(ctx, node, install); err != nil {
		_, _ = p.Run(context.WithoutCancel(ctx), node, Cmd("rm", "-f", "--", tmp))
		return err
	}
	if _, err := p.Run(ctx, node, Cmd("mv", "-f", "-T", "--", tmp, f.Path)); err != nil {
		_, _ = p.Run(context.WithoutCancel(ctx), node, Cmd("rm", "-f", "--", tmp))
		return err
	}
	return nil
}

// isDir reports whether dir is a directory on node (false when it does
// not exist; an error when something else is there).
func (p *Pool) isDir(ctx context.Context, node, dir string) (bool, error) {
	res, err := p.Run(ctx, node, Cmd("stat", "-c", "%F", "--", dir))
	if err != nil {
		if isNotExist(err) {
			return false, nil
		}
		return false, err
	}
	if kind := strings.TrimSpace(string(res.Stdout)); kind != "directory" {
		return false, fmt.Errorf("node %s: %s is a %s, not a directory", node, dir, kind)
	}
	return true, nil
}

// ReadFile returns the content of a file on node; a missing file is an
// error wrapping fs.ErrNotExist.
func (p *Pool) ReadFile(ctx context.Context, node, filePath string) ([]byte, error) {
	if err := CheckPath(filePath); err != nil {
		return nil, err
	}
	res, err := p.Run(ctx, node, Cmd("cat", "--", filePath))
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return nil, err
	}
	return res.Stdout, nil
}

// FileInfo is what stat reports about a file.
type FileInfo struct {
	Mode         fs.FileMode // permission bits
	Owner, Group string
	Size         int64
}

// StatFile returns a file's mode, owner and size; a missing file is an
// error wrapping fs.ErrNotExist.
func (p *Pool) StatFile(ctx context.Context, node, filePath string) (*FileInfo, error) {
	if err := CheckPath(filePath); err != nil {
		return nil, err
	}
	res, err := p.Run(ctx, node, Cmd("stat", "-c", "%a %U %G %s", "--", filePath))
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return nil, err
	}
	fields := strings.Fields(string(res.Stdout))
	if len(fields) != 4 {
		return nil, fmt.Errorf("node %s: unexpected stat output %q", node, res.Stdout)
	}
	mode, err1 := strconv.ParseUint(fields[0], 8, 32)
	size, err2 := strconv.ParseInt(fields[3], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("node %s: unexpected stat output %q", node, res.Stdout)
	}
	return &FileInfo{Mode: fs.FileMode(mode).Perm(), Owner: fields[1], Group: fields[2], Size: size}, nil
}

// RemoveFile removes a file on node; a missing file is not an error.
func (p *Pool) RemoveFile(ctx context.Context, node, filePath string) error {
	if err := CheckPath(filePath); err != nil {
		return err
	}
	_, err := p.Run(ctx, node, Cmd("rm", "-f", "--", filePath))
	return err
}

func isNotExist(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Err == nil && strings.Contains(e.Stderr, "No such file or directory")
}
