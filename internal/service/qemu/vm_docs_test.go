package qemu

import (
	"os"
	"strings"
	"testing"
)

// The page of pve_vm ends with the credentials pve_vm's data source also states; its prose lives in
// templates/ (scripts/docs.sh), so this keeps it in step with credsNote.
func TestVMDocsQuoteCredentials(t *testing.T) {
	prose, err := os.ReadFile("../../../templates/resources/vm.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prose), credsNote) {
		t.Errorf("templates/resources/vm.md.tmpl does not quote credsNote: %s", credsNote)
	}
}
