// Package drawversion reads the version of the design-tool package that
// labels the images (draw_version): the package name a flag gives, checked
// as npm would, and the version installed, from the package's own
// package.json or from npm ls's tree (a workspace's dependency included).
package drawversion

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// npm's package-name rule: an optional @scope/, then a lower-case name.
var packageName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// CheckPackageName refuses what npm would not accept as a package name.
func CheckPackageName(flag, name string) error {
	if len(name) > 214 || !packageName.MatchString(name) {
		return fmt.Errorf("%s %s: not an npm package name (lower-case, optionally @scope/name, up to 214 bytes)", flag, fielderr.Quote(name))
	}
	return nil
}

// ListCommand asks npm which version of pkg is installed.
func ListCommand(pkg string) []string {
	return []string{"npm", "ls", pkg, "--json", "--depth=0"}
}

// lsNode is a package in `npm ls --json`'s tree.
type lsNode struct {
	Version      string            `json:"version"`
	Missing      bool              `json:"missing"`
	Dependencies map[string]lsNode `json:"dependencies"`
}

// InstalledVersion reads pkg's version out of `npm ls <pkg> --json` output:
// the project's own dependency, or a workspace's (npm lists a workspace's
// dependencies under it, even at --depth=0). Installed in several versions,
// pkg cannot say which design tool built the project: an error names them.
func InstalledVersion(pkg string, npmLsJSON []byte) (string, error) {
	var tree struct {
		lsNode
		Error *struct {
			Summary string `json:"summary"`
		} `json:"error"`
	}
	if err := json.Unmarshal(npmLsJSON, &tree); err != nil {
		return "", fmt.Errorf("reading `npm ls %s --json`: %w", pkg, err)
	}
	found := map[string][]string{} // version → who depends on it
	var walk func(by string, n lsNode, depth int)
	walk = func(by string, n lsNode, depth int) {
		for name, dep := range n.Dependencies {
			if name == pkg && !dep.Missing {
				found[dep.Version] = append(found[dep.Version], by)
			}
			if depth < maxListDepth {
				walk(name, dep, depth+1)
			}
		}
	}
	walk("the project", tree.lsNode, 0)
	versions := slices.Sorted(maps.Keys(found))
	switch len(versions) {
	case 0:
		return "", fmt.Errorf("design-tool package %q is not installed: add it to package.json, or set --draw-package to the package that builds the project", pkg)
	case 1:
		return checkVersion(pkg, versions[0])
	}
	var each []string
	for _, v := range versions {
		users := found[v]
		slices.Sort(users)
		users = slices.Compact(users)
		for i, u := range users {
			users[i] = fielderr.Printable(fielderr.WithoutLogins(u)) // npm's names of the project's packages
		}
		each = append(each, fmt.Sprintf("%s by %s", fielderr.Quote(v), strings.Join(users, ", ")))
	}
	if len(each) > 5 {
		each = append(each[:5], fmt.Sprintf("%d more", len(each)-5))
	}
	return "", fmt.Errorf("design-tool package %q is installed in %d versions (%s): the images' draw_version label takes one; have every workspace depend on the same version", pkg, len(versions), fielderr.Cut(strings.Join(each, "; "), 400))
}

// maxListDepth bounds the walk of `npm ls`'s tree: the project, its
// workspaces and their dependencies are all --depth=0 lists.
const maxListDepth = 3

// InstalledManifest is where npm installs a direct dependency's own
// package.json, relative to the project: at the top of node_modules, where
// `npm ls --depth=0` reads its version too.
func InstalledManifest(pkg string) string {
	return "node_modules/" + pkg + "/package.json"
}

// ManifestVersion reads the version out of an installed package's own
// package.json (InstalledManifest): the version `npm ls` reports, with no
// npm process to start.
func ManifestVersion(pkg string, data []byte) (string, error) {
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("reading %s: %w", InstalledManifest(pkg), err)
	}
	return checkVersion(pkg, m.Version)
}

func checkVersion(pkg, version string) (string, error) {
	switch {
	case version == "":
		return "", fmt.Errorf("design-tool package %q is installed without a version", pkg)
	case len(version) > maxVersion || !semverish.MatchString(version):
		return "", fmt.Errorf("design-tool package %q has version %s, which is not a version npm writes", pkg, fielderr.Quote(version))
	}
	return version, nil
}

var semverish = regexp.MustCompile(`^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$`)

// maxVersion is the longest version npm writes (semver's MAX_LENGTH): the
// version is a label of every image, a line of the build's summary.
const maxVersion = 256

// ErrNoDrawPackage says the images cannot be labelled.
var ErrNoDrawPackage = errors.New("no design-tool package set: pass --draw-package <package> so the images carry draw_version")
