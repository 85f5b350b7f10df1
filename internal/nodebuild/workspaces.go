package nodebuild

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
)

// Workspace is one npm workspace of the project: its folder and package.json.
type Workspace struct {
	Dir      string
	Manifest *Manifest
}

// Workspaces is what the install knows of the project's npm workspaces:
// Listed when every pattern of package.json's "workspaces" was listed
// (WorkspaceGlobs), and then each workspace found.
type Workspaces struct {
	Listed bool
	Each   []Workspace
}

// WorkspaceGlobs pick the project's workspaces out of a listing of every
// package.json (WorkspaceManifests): one "<pattern>/package.json" per
// pattern of package.json's "workspaces" (an array, or {"packages": [...]}
// as npm also reads it). ok is false when a
// pattern is not a plain path with * in its folder names (a negation, **,
// braces, a character class, a path outside the project), or "workspaces"
// is of another shape: npm's own matching of those is not reproduced, and
// the install then takes the whole project.
func (m *Manifest) WorkspaceGlobs() (globs []string, ok bool) {
	if !m.hasWorkspaces() {
		return nil, true
	}
	var patterns []string
	if err := json.Unmarshal(m.Workspaces, &patterns); err != nil {
		var object struct {
			Packages []string `json:"packages"`
		}
		if err := json.Unmarshal(m.Workspaces, &object); err != nil || object.Packages == nil {
			return nil, false
		}
		patterns = object.Packages
	}
	for _, p := range patterns {
		p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if !plainPattern(p) {
			return nil, false
		}
		globs = append(globs, path.Join(p, ManifestFile))
	}
	slices.Sort(globs)
	return slices.Compact(globs), true
}

// plainPattern says whether p is a relative path inside the project whose
// only wildcard is * within a folder name, which a listing matches as npm
// does (* never matches /).
func plainPattern(p string) bool {
	if p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p || strings.ContainsAny(p, `!?[]{}\`) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || strings.Contains(seg, "**") || seg == "node_modules" || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

// AnyManifest is the pattern of a listing that finds every package.json of
// the project, from which WorkspaceManifests picks the workspaces': one walk
// of the project, however many patterns "workspaces" has.
const AnyManifest = "**/" + ManifestFile

// WorkspaceManifests are the files, of those a listing found, that globs
// (WorkspaceGlobs) match, * standing for any characters but / as in npm's
// patterns; sorted.
func WorkspaceManifests(globs, files []string) []string {
	var out []string
	for _, f := range files {
		if slices.ContainsFunc(globs, func(g string) bool { ok, err := path.Match(g, f); return err == nil && ok }) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WorkspaceDir is the folder of the workspace whose package.json a listing
// of WorkspaceGlobs found at file; false for a path npm would not take as a
// workspace (a hidden folder, which npm's * does not match) or none.
func WorkspaceDir(file string) (string, bool) {
	dir, name := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	if name != ManifestFile || dir == "" || !plainPattern(dir) || strings.Contains(dir, "*") {
		return "", false
	}
	return dir, true
}

// needsFiles says whether npm's install reads more of this workspace than
// its package.json: an install-time script (npm runs a workspace's with its
// files), or a command it links into node_modules/.bin (npm links only a
// file that is there, so with package.json alone the command would be
// missing from the build).
func (m *Manifest) needsFiles() bool {
	for _, name := range installTimeScripts {
		if strings.TrimSpace(m.Scripts[name]) != "" {
			return true
		}
	}
	bin := strings.TrimSpace(string(m.Bin))
	return (bin != "" && bin != "null" && bin != "{}" && bin != `""`) || m.Directories.Bin != ""
}
