// Command releasecheck checks the release configuration for what the Terraform registry needs,
// in place of "goreleaser check" (GoReleaser is a large build for one check):
//
//	go run -C tools/releasecheck . ../..     (make lint runs it)
//
// It reads <repo>/.goreleaser.yml strictly (an unknown or misspelt key fails, as it does for
// GoReleaser; only the keys the file uses are known here), <repo>/terraform-registry-manifest.json
// and <repo>/main.go, and fails unless:
//   - the manifest is {"version":1,"metadata":{"protocol_versions":["6.0"]}} and main.go serves
//     protocol 6 (tf6server), so the two agree;
//   - the build is static (CGO_ENABLED=0), sets main.version, names the binary
//     terraform-provider-pve_v<version> and covers linux, darwin, windows and freebsd on amd64 and arm64;
//   - archives are zips named terraform-provider-pve_<version>_<os>_<arch>;
//   - checksums are sha256 in terraform-provider-pve_<version>_SHA256SUMS, which includes the manifest
//     as terraform-provider-pve_<version>_manifest.json, and the checksum file is signed (detached);
//   - the release carries the manifest under the same name.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

const (
	project      = "terraform-provider-pve"
	manifestFile = "terraform-registry-manifest.json"
	manifestName = "{{ .ProjectName }}_{{ .Version }}_manifest.json"
)

type extraFile struct {
	Glob         string `yaml:"glob"`
	NameTemplate string `yaml:"name_template"`
}

type goreleaser struct {
	Version     int    `yaml:"version"`
	ProjectName string `yaml:"project_name"`
	Builds      []struct {
		Env          []string `yaml:"env"`
		ModTimestamp string   `yaml:"mod_timestamp"`
		Flags        []string `yaml:"flags"`
		Ldflags      []string `yaml:"ldflags"`
		Goos         []string `yaml:"goos"`
		Goarch       []string `yaml:"goarch"`
		Ignore       []struct {
			Goos   string `yaml:"goos"`
			Goarch string `yaml:"goarch"`
		} `yaml:"ignore"`
		Binary string `yaml:"binary"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
	} `yaml:"archives"`
	Checksum struct {
		ExtraFiles   []extraFile `yaml:"extra_files"`
		NameTemplate string      `yaml:"name_template"`
		Algorithm    string      `yaml:"algorithm"`
	} `yaml:"checksum"`
	Signs []struct {
		Artifacts string   `yaml:"artifacts"`
		Args      []string `yaml:"args"`
	} `yaml:"signs"`
	Release struct {
		ExtraFiles []extraFile `yaml:"extra_files"`
	} `yaml:"release"`
	Changelog struct {
		Disable bool `yaml:"disable"`
	} `yaml:"changelog"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: releasecheck <repository root>")
		os.Exit(2)
	}
	if err := check(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "releasecheck: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("releasecheck: .goreleaser.yml and terraform-registry-manifest.json are as the registry needs (protocol 6)")
}

func check(root string) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	// The manifest, and main.go serving the protocol it names.
	raw, err := os.ReadFile(filepath.Join(root, manifestFile))
	if err != nil {
		return err
	}
	var manifest struct {
		Version  int `json:"version"`
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&manifest); err != nil {
		return fmt.Errorf("%s: %w", manifestFile, err)
	}
	if manifest.Version != 1 {
		fail("%s: version is %d, want 1", manifestFile, manifest.Version)
	}
	if !slices.Equal(manifest.Metadata.ProtocolVersions, []string{"6.0"}) {
		fail("%s: metadata.protocol_versions is %q, want [\"6.0\"]", manifestFile, manifest.Metadata.ProtocolVersions)
	}
	mainGo, err := os.ReadFile(filepath.Join(root, "main.go"))
	if err != nil {
		return err
	}
	if !bytes.Contains(mainGo, []byte(`"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"`)) {
		fail("main.go does not serve plugin protocol 6 (tf6server), which the manifest announces")
	}
	if !bytes.Contains(mainGo, []byte("var version = ")) {
		fail("main.go has no package variable version for -X main.version")
	}

	// .goreleaser.yml, strictly.
	raw, err = os.ReadFile(filepath.Join(root, ".goreleaser.yml"))
	if err != nil {
		return err
	}
	var g goreleaser
	ydec := yaml.NewDecoder(bytes.NewReader(raw))
	ydec.KnownFields(true)
	if err := ydec.Decode(&g); err != nil {
		return errors.Join(append(errs, fmt.Errorf(".goreleaser.yml: %w", err))...)
	}
	if g.Version != 2 {
		fail(".goreleaser.yml: version is %d, want 2 (GoReleaser v2)", g.Version)
	}
	if g.ProjectName != project {
		fail(".goreleaser.yml: project_name is %q, want %q (the registry requires the repository and archives to be named so)", g.ProjectName, project)
	}

	if len(g.Builds) != 1 {
		fail(".goreleaser.yml: %d builds, want 1", len(g.Builds))
	} else {
		b := g.Builds[0]
		if !slices.Contains(b.Env, "CGO_ENABLED=0") {
			fail(".goreleaser.yml: builds[0].env lacks CGO_ENABLED=0 (a static binary)")
		}
		if !slices.ContainsFunc(b.Ldflags, func(s string) bool { return strings.Contains(s, "-X main.version={{ .Version }}") }) {
			fail(".goreleaser.yml: builds[0].ldflags do not set -X main.version={{ .Version }}")
		}
		if b.Binary != "{{ .ProjectName }}_v{{ .Version }}" {
			fail(".goreleaser.yml: builds[0].binary is %q, want \"{{ .ProjectName }}_v{{ .Version }}\"", b.Binary)
		}
		for _, goos := range []string{"linux", "darwin", "windows", "freebsd"} {
			if !slices.Contains(b.Goos, goos) {
				fail(".goreleaser.yml: builds[0].goos lacks %s", goos)
			}
		}
		for _, arch := range []string{"amd64", "arm64"} {
			if !slices.Contains(b.Goarch, arch) {
				fail(".goreleaser.yml: builds[0].goarch lacks %s", arch)
			}
			for _, ig := range b.Ignore {
				if ig.Goarch == arch && (ig.Goos == "linux" || ig.Goos == "darwin") {
					fail(".goreleaser.yml: builds[0].ignore drops %s/%s", ig.Goos, arch)
				}
			}
		}
	}

	if len(g.Archives) != 1 {
		fail(".goreleaser.yml: %d archives, want 1", len(g.Archives))
	} else {
		a := g.Archives[0]
		if !slices.Equal(a.Formats, []string{"zip"}) {
			fail(".goreleaser.yml: archives[0].formats is %q, want [zip]", a.Formats)
		}
		if a.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
			fail(".goreleaser.yml: archives[0].name_template is %q, want \"{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}\"", a.NameTemplate)
		}
	}

	if g.Checksum.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS" {
		fail(".goreleaser.yml: checksum.name_template is %q, want \"{{ .ProjectName }}_{{ .Version }}_SHA256SUMS\"", g.Checksum.NameTemplate)
	}
	if g.Checksum.Algorithm != "sha256" {
		fail(".goreleaser.yml: checksum.algorithm is %q, want sha256", g.Checksum.Algorithm)
	}
	if !hasManifest(g.Checksum.ExtraFiles) {
		fail(".goreleaser.yml: checksum.extra_files lacks %s as %q (the registry checks the manifest's checksum)", manifestFile, manifestName)
	}
	if !hasManifest(g.Release.ExtraFiles) {
		fail(".goreleaser.yml: release.extra_files lacks %s as %q", manifestFile, manifestName)
	}
	signed := false
	for _, s := range g.Signs {
		if s.Artifacts == "checksum" && slices.Contains(s.Args, "--detach-sign") &&
			slices.Contains(s.Args, "${signature}") && slices.Contains(s.Args, "${artifact}") {
			signed = true
		}
	}
	if !signed {
		fail(".goreleaser.yml: no signs entry detach-signs the checksum file (the registry needs SHA256SUMS.sig)")
	}
	return errors.Join(errs...)
}

func hasManifest(files []extraFile) bool {
	return slices.Contains(files, extraFile{Glob: manifestFile, NameTemplate: manifestName})
}
