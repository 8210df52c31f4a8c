package node

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The page of pve_node_file lists the paths the resource refuses; its prose
// lives in templates/ (scripts/docs.sh), so this keeps it in step with deniedPaths.
func TestFileDocsListDeniedPaths(t *testing.T) {
	prose, err := os.ReadFile("../../../templates/resources/node_file.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	for _, d := range deniedPaths {
		name := d.path
		if d.prefix {
			name += "*"
		}
		fmt.Fprintf(&list, "\n- `%s` %s.", name, d.why)
	}
	if want := "lock the provider out:\n" + list.String() + "\n\n"; !strings.Contains(string(prose), want) {
		t.Errorf("templates/resources/node_file.md.tmpl does not list deniedPaths as:%s", want)
	}
}
