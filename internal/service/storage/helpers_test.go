package storage_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// errorRE lets a space match Terraform's line wrapping.
func errorRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

// simOnly skips tests that create backends only the simulator has (NFS
// servers, external Ceph, LINSTOR) unless PVE_ACC_STORAGE opts in.
func simOnly(t *testing.T, e *acctest.Env) {
	t.Helper()
	if e.Sim == nil && !strings.EqualFold(getenv("PVE_ACC_STORAGE"), "1") {
		t.Skip("creates storages on backends the simulator provides; set PVE_ACC_STORAGE=1 to run against a cluster that has them")
	}
}

// checkStorage asserts what PVE's storage.cfg reports for id.
func checkStorage(e *acctest.Env, id string, check func(*pve.StorageConfig) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		sc, err := e.Client.StorageConfig(context.Background(), id)
		if err != nil {
			return fmt.Errorf("read storage %s from PVE: %w", id, err)
		}
		if err := check(sc); err != nil {
			return fmt.Errorf("storage %s: %w (PVE has %+v)", id, err, sc)
		}
		return nil
	}
}

// wantOptions checks keys of a storage.
func wantOptions(want map[string]string) func(*pve.StorageConfig) error {
	return func(sc *pve.StorageConfig) error {
		for k, v := range want {
			got := sc.Options[k]
			switch k {
			case "content":
				got = strings.Join(sc.Content, ",")
			case "nodes":
				got = strings.Join(sc.Nodes, ",")
			case "type":
				got = sc.Type
			case "disable":
				got = fmt.Sprint(sc.Disable)
			}
			if got != v {
				return fmt.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		return nil
	}
}

// checkStoragesGone asserts PVE no longer has the storages.
func checkStoragesGone(e *acctest.Env, ids ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, id := range ids {
			if _, err := e.Client.StorageConfig(context.Background(), id); !errors.Is(err, pve.ErrNotFound) {
				return fmt.Errorf("storage %s after destroy: %w", id, err)
			}
		}
		return nil
	}
}

// updateStorage changes a storage behind Terraform's back.
func updateStorage(t *testing.T, e *acctest.Env, id string, p pve.Params) {
	t.Helper()
	if err := e.RootClient(t).UpdateStorage(context.Background(), id, p); err != nil {
		t.Fatalf("change storage %s outside Terraform: %v", id, err)
	}
}
