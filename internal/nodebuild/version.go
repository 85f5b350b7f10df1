package nodebuild

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// npm's package-name rule: an optional @scope/, then a lower-case name.
var packageName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// CheckPackageName refuses what npm would not accept as a package name.
func CheckPackageName(flag, name string) error {
	if len(name) > 214 || !packageName.MatchString(name) {
		return fmt.Errorf("%s: %q is not an npm package name (lower-case, optionally @scope/name)", flag, name)
	}
	return nil
}

// ListCommand asks npm which version of pkg is installed.
func ListCommand(pkg string) []string {
	return []string{"npm", "ls", pkg, "--json", "--depth=0"}
}

// InstalledVersion reads pkg's version out of `npm ls <pkg> --json` output.
func InstalledVersion(pkg string, npmLsJSON []byte) (string, error) {
	var tree struct {
		Dependencies map[string]struct {
			Version string `json:"version"`
			Missing bool   `json:"missing"`
		} `json:"dependencies"`
		Error *struct {
			Summary string `json:"summary"`
		} `json:"error"`
	}
	if err := json.Unmarshal(npmLsJSON, &tree); err != nil {
		return "", fmt.Errorf("reading `npm ls %s --json`: %w", pkg, err)
	}
	dep, ok := tree.Dependencies[pkg]
	switch {
	case !ok || dep.Missing:
		return "", fmt.Errorf("design-tool package %q is not installed: add it to package.json, or set --draw-package to the package that builds the project", pkg)
	}
	return checkVersion(pkg, dep.Version)
}

// InstalledManifest is where npm installs a direct dependency's own
// package.json, relative to the project: at the top of node_modules, where
// `npm ls --depth=0` reads its version too.
func InstalledManifest(pkg string) string {
	return "node_modules/" + pkg + "/" + ManifestFile
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
	case !semverish.MatchString(version):
		return "", fmt.Errorf("design-tool package %q has version %s, which is not a version npm writes", pkg, fielderr.Quote(version))
	}
	return version, nil
}

var semverish = regexp.MustCompile(`^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$`)

// ErrNoDrawPackage says the images cannot be labelled.
var ErrNoDrawPackage = errors.New("no design-tool package set: pass --draw-package <package> so the images carry draw_version")
