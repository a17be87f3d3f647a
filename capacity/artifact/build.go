package artifact

import (
	"runtime/debug"
	"strings"
)

// modulePath is the path of this module, as its go.mod declares it.
const modulePath = "github.com/anvilbench/anvil"

// RecordBuild sets r's ModuleVersion, VCSRevision, VCSModified and
// GoVersion to those of the running binary, from
// runtime/debug.ReadBuildInfo: the build of this module it was linked
// with (the main module, or a dependency of the user's module, a replaced
// one by its replacement's version), the vcs.revision and vcs.modified
// stamps of a build of a checkout (go build stamps them, go test never
// does), else the revision a pseudo-version carries. What the binary does
// not say stays nil: an artifact never claims a version it cannot show.
func (r *RunSummary) RecordBuild() {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if bi.GoVersion != "" {
		r.GoVersion = new(bi.GoVersion)
	}
	mod := &bi.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				mod = d
				break
			}
		}
	}
	if mod == nil {
		return
	}
	if mod.Replace != nil {
		mod = mod.Replace
	}
	if mod.Version != "" {
		r.ModuleVersion = new(mod.Version)
	}
	if mod == &bi.Main {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r.VCSRevision = new(s.Value)
			case "vcs.modified":
				r.VCSModified = new(s.Value == "true")
			}
		}
	}
	if r.VCSRevision == nil {
		if rev, ok := pseudoRevision(mod.Version); ok {
			r.VCSRevision = &rev
		}
	}
}

// pseudoRevision is the revision prefix of a pseudo-version
// (v0.0.0-20261201221049-e02e9a91af51, v1.2.4-0.20261201221049-e02e9a91af51,
// with an optional +incompatible): its last dash-separated part when that
// is 12 lowercase hex digits after a 14-digit time.
func pseudoRevision(v string) (string, bool) {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 15 {
		return "", false
	}
	rev, stamp := v[i+1:], v[i-14:i]
	if len(rev) != 12 || strings.Trim(rev, "0123456789abcdef") != "" || strings.Trim(stamp, "0123456789") != "" {
		return "", false
	}
	return rev, true
}

// BuildLabels are r's build as two labels: the module version, and the
// VCS revision with " (modified)" after it when the checkout had
// uncommitted changes; "" for what r does not record (a nil r records
// nothing). Package reporters writes them as the .bench configuration
// keys anvil-version and anvil-revision.
func (r *RunSummary) BuildLabels() (version, revision string) {
	if r == nil {
		return "", ""
	}
	if r.ModuleVersion != nil {
		version = *r.ModuleVersion
	}
	if r.VCSRevision != nil {
		revision = *r.VCSRevision
		if r.VCSModified != nil && *r.VCSModified {
			revision += " (modified)"
		}
	}
	return version, revision
}
