package pve

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// APT repositories of a node (/nodes/{node}/apt/repositories). PVE can add
// a standard repository by handle and enable or disable an existing entry
// by file path and index; it cannot remove entries. Writers take the
// common digest of the last read and fail when the files changed since.

// APTRepositories is GET /nodes/{node}/apt/repositories.
type APTRepositories struct {
	Digest        string // common digest of all files, hex
	Files         []APTFile
	StandardRepos []APTStandardRepo
	Errors        []APTError
	Infos         []APTInfo
}

// APTFile is one parsed file in /etc/apt.
type APTFile struct {
	Path, FileType, Digest string // FileType "list" or "sources"; Digest hex
	Repositories           []APTRepository
}

// APTRepository is one entry (line or deb822 stanza) of a file.
type APTRepository struct {
	Types, URIs, Suites, Components []string
	Enabled                         bool
	Comment                         string
}

// APTStandardRepo is a repository PVE knows by handle on this node's
// release. Status is nil when it is not configured, else whether its entry
// is enabled.
type APTStandardRepo struct {
	Handle, Name, Description string
	Status                    *bool
}

// APTError is a file PVE could not parse.
type APTError struct{ Path, Error string }

// APTInfo is a note about one entry (origin, warnings).
type APTInfo struct {
	Path, Kind, Message, Property string
	Index                         int64
}

// Find returns the file at path, or nil.
func (r *APTRepositories) Find(path string) *APTFile {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}

// Standard returns the standard repository with handle, or nil.
func (r *APTRepositories) Standard(handle string) *APTStandardRepo {
	for i := range r.StandardRepos {
		if r.StandardRepos[i].Handle == handle {
			return &r.StandardRepos[i]
		}
	}
	return nil
}

type aptWire struct {
	Digest flexString `json:"digest"`
	Files  []struct {
		Path         flexString      `json:"path"`
		FileType     flexString      `json:"file-type"`
		Digest       json.RawMessage `json:"digest"`
		Repositories []struct {
			Types      []string   `json:"Types"`
			URIs       []string   `json:"URIs"`
			Suites     []string   `json:"Suites"`
			Components []string   `json:"Components"`
			Enabled    flexBool   `json:"Enabled"`
			Comment    flexString `json:"Comment"`
		} `json:"repositories"`
	} `json:"files"`
	Errors []struct {
		Path  flexString `json:"path"`
		Error flexString `json:"error"`
	} `json:"errors"`
	Infos []struct {
		Path     flexString `json:"path"`
		Index    flexInt    `json:"index"`
		Kind     flexString `json:"kind"`
		Message  flexString `json:"message"`
		Property flexString `json:"property"`
	} `json:"infos"`
	Standard []struct {
		Handle      flexString      `json:"handle"`
		Name        flexString      `json:"name"`
		Description flexString      `json:"description"`
		Status      json.RawMessage `json:"status"`
	} `json:"standard-repos"`
}

// digestHex accepts a file digest as PVE sends it (an array of bytes) or
// as a hex string.
func digestHex(raw json.RawMessage) string {
	var bytes []int
	if json.Unmarshal(raw, &bytes) == nil {
		s := make([]byte, 0, 2*len(bytes))
		for _, b := range bytes {
			s = fmt.Appendf(s, "%02x", b&0xff)
		}
		return string(s)
	}
	var s flexString
	_ = json.Unmarshal(raw, &s)
	return string(s)
}

// APTRepositories reads the node's repository files and standard
// repositories.
//
//pve:operation GET /nodes/{node}/apt/repositories
func (c *Client) APTRepositories(ctx context.Context, node string) (*APTRepositories, error) {
	var w aptWire
	if err := c.Get(ctx, "/nodes/"+node+"/apt/repositories", nil, &w); err != nil {
		return nil, err
	}
	out := &APTRepositories{Digest: string(w.Digest)}
	for _, f := range w.Files {
		af := APTFile{Path: string(f.Path), FileType: string(f.FileType), Digest: digestHex(f.Digest)}
		for _, r := range f.Repositories {
			af.Repositories = append(af.Repositories, APTRepository{
				Types: r.Types, URIs: r.URIs, Suites: r.Suites, Components: r.Components,
				Enabled: bool(r.Enabled), Comment: string(r.Comment),
			})
		}
		out.Files = append(out.Files, af)
	}
	for _, e := range w.Errors {
		out.Errors = append(out.Errors, APTError{Path: string(e.Path), Error: string(e.Error)})
	}
	for _, i := range w.Infos {
		out.Infos = append(out.Infos, APTInfo{Path: string(i.Path), Index: int64(i.Index), Kind: string(i.Kind), Message: string(i.Message), Property: string(i.Property)})
	}
	for _, s := range w.Standard {
		sr := APTStandardRepo{Handle: string(s.Handle), Name: string(s.Name), Description: string(s.Description)}
		if len(s.Status) > 0 && string(s.Status) != "null" {
			var b flexBool
			if err := json.Unmarshal(s.Status, &b); err != nil {
				return nil, fmt.Errorf("standard repository %s: status: %w", sr.Handle, err)
			}
			v := bool(b)
			sr.Status = &v
		}
		out.StandardRepos = append(out.StandardRepos, sr)
	}
	return out, nil
}

// AddStandardAPTRepository adds the standard repository handle, or enables
// it where it is already configured. digest ("" to skip the check) is the
// common digest of the last read.
//
//pve:operation PUT /nodes/{node}/apt/repositories
func (c *Client) AddStandardAPTRepository(ctx context.Context, node, handle, digest string) error {
	p := Params{}
	p.Set("handle", handle)
	if digest != "" {
		p.Set("digest", digest)
	}
	return c.Put(ctx, "/nodes/"+node+"/apt/repositories", p, nil)
}

// SetAPTRepositoryEnabled enables or disables the entry at index (from 0)
// of the file at path. digest ("" to skip the check) is the common digest
// of the last read.
//
//pve:operation POST /nodes/{node}/apt/repositories
func (c *Client) SetAPTRepositoryEnabled(ctx context.Context, node, path string, index int64, enabled bool, digest string) error {
	p := Params{}
	p.Set("path", path)
	p.Set("index", strconv.FormatInt(index, 10))
	p.SetBool("enabled", enabled)
	if digest != "" {
		p.Set("digest", digest)
	}
	return c.Post(ctx, "/nodes/"+node+"/apt/repositories", p, nil)
}
