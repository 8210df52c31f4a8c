package adopt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Render returns every file of the result by name: the generated .tf files,
// imports.tf (one import block per object, Terraform ≥ 1.5 / OpenTofu ≥
// 1.6) and ADOPTION.md (what was adopted, what was not and why).
func (res *Result) Render() map[string][]byte {
	out := map[string][]byte{}
	for name, f := range res.Files {
		out[name] = hclwrite.Format(f.Bytes())
	}
	imports := hclwrite.NewEmptyFile()
	body := imports.Body()
	comment(body, "One import block per adopted object. After the first apply they are no-ops; delete this file then\n"+
		"(or keep it: Terraform skips imports of objects already in state).")
	for _, im := range res.Imports {
		b := block(body, "import")
		setExpr(b, "to", im.To)
		set(b, "id", im.ID)
	}
	out["imports.tf"] = hclwrite.Format(imports.Bytes())
	out["ADOPTION.md"] = res.report()
	return out
}

// TypeCount is how many objects of one resource type were imported.
type TypeCount struct {
	Type string
	N    int
}

// Counts are the imports per resource type, sorted by type: what the
// report and pve-adopt's summary list.
func (res *Result) Counts() []TypeCount {
	counts := map[string]int{}
	for _, im := range res.Imports {
		typ, _, _ := strings.Cut(im.To, ".")
		counts[typ]++
	}
	out := make([]TypeCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, TypeCount{Type: t, N: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// report is ADOPTION.md.
func (res *Result) report() []byte {
	var b bytes.Buffer
	b.WriteString("# Adoption report\n\n")
	fmt.Fprintf(&b, "%d objects adopted (imports.tf):\n\n", len(res.Imports))
	for _, c := range res.Counts() {
		fmt.Fprintf(&b, "- `%s`: %d\n", c.Type, c.N)
	}
	b.WriteString("\nNext: `terraform init`, then `terraform plan` — it must show only imports (0 to add, 0 to change, 0 to\n" +
		"destroy). `terraform apply` records them in state and changes nothing on the cluster.\n")
	if len(res.Skipped) == 0 {
		b.WriteString("\nEverything the adoption found is in the configuration.\n")
		return b.Bytes()
	}
	b.WriteString("\n## Not in the configuration\n\nThese exist on the cluster and stay as they are; Terraform does not manage them.\n\n")
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "- **%s**: %s\n", s.Object, s.Reason)
	}
	return b.Bytes()
}

// WriteDir writes the rendered files into dir (created if missing). It
// refuses to overwrite a file that exists, unless overwrite.
func (res *Result) WriteDir(dir string, overwrite bool) error {
	files := res.Render()
	if !overwrite {
		for name := range files {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return fmt.Errorf("%s exists: adopt into an empty directory, or pass -force to overwrite", filepath.Join(dir, name))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
