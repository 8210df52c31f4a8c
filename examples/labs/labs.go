// Package labs holds the lab files shipped with the provider
// (<name>/lab.json, described in README.md), so pvesim can start from one
// by name (-lab-name) and use the reference lab as its default.
package labs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed */lab.json
var files embed.FS

// Get returns the lab file of a shipped lab.
func Get(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("no shipped lab %q; the labs are %s", name, strings.Join(Names(), ", "))
	}
	b, err := files.ReadFile(path.Join(name, "lab.json"))
	if err != nil {
		return nil, fmt.Errorf("no shipped lab %q; the labs are %s", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Names lists the shipped labs, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
