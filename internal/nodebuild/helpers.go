package nodebuild

import (
	"fmt"
	"maps"

	"dagger/lowcode-pipeline/internal/steplimit"
)

// The module's commands in the Node.js containers (Helpers installs them in
// steplimit.Dir), so that the engine's progress and a failed step show
// `withExec lowcode-pipeline-build dist/web npm run build:draw`, not the text
// of a script.
const (
	InstallHelper = "lowcode-pipeline-install"
	BuildHelper   = "lowcode-pipeline-build"
)

// OutputMode is the mode every build output is given (chmod's words): what
// the frontend image needs to serve it under an arbitrary UID in group root,
// without a RUN of its own to set it.
const OutputMode = "u=rwX,go=rX"

// SystemCABundle is where Debian, Alpine and Wolfi keep the system's CA
// bundle, in which the engine installs the CAs it is given (Dagger's custom
// CA certificates: tests/engine-facts.md, fact 23). Node.js reads only its
// own CA list, so npm behind a proxy that re-signs TLS, or a registry signed
// by a private CA, fails with SELF_SIGNED_CERT_IN_CHAIN even when the engine
// has the CA (seen on an engine): the helpers hand the bundle to Node.js as
// NODE_EXTRA_CA_CERTS, unless the image or the user set that already.
const SystemCABundle = "/etc/ssl/certs/ca-certificates.crt"

// caLine is the helpers' shell line that does it; a missing bundle (another
// distribution) leaves Node.js as it is, with no warning.
const caLine = `if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f ` + SystemCABundle + ` ]; then export NODE_EXTRA_CA_CERTS=` + SystemCABundle + `; fi`

// installScript checks the image's Node.js, then runs the install within the
// project's time limit, in one exec: no exec of its own runs before the
// install (a separate `node --version` cost 1.8 s on a cold engine).
const installScript = `#!/bin/sh
# %[1]s IMAGE COMMAND...: checks IMAGE's Node.js (%[2]d or above), then runs COMMAND within %[3]s (lowcode-pipeline, internal/nodebuild)
image=$1; shift
%[5]s
v=$(node -p process.versions.node) || { printf '%%s\n' "lowcode-pipeline: node image $image: no node command" >&2; exit 3; }
if [ "${v%%%%.*}" -lt %[2]d ]; then
  printf '%%s\n' "lowcode-pipeline: node image $image has Node.js v$v: the platform needs %[2]d or above (the reference uses node:24); set --node-image" >&2
  exit 3
fi
exec %[4]s "$@"
`

// buildScript runs a build step within the project's time limit and, in the
// same exec, fails it when it exited 0 but left its output missing or empty,
// or, with --holds, without a folder of its own in it, naming it, then gives
// the output OutputMode.
const buildScript = `#!/bin/sh
# %[1]s DIR [--holds SUBDIR] COMMAND...: runs COMMAND within %[3]s, checks that it wrote DIR (and DIR/SUBDIR), and makes DIR %[2]s (lowcode-pipeline, internal/nodebuild)
dir=$1; shift
holds=
if [ "${1:-}" = --holds ]; then holds=$2; shift 2; fi
%[5]s
%[6]s
%[4]s "$@" || exit $?
if [ ! -d "./$dir" ] || [ -z "$(ls -A "./$dir")" ]; then
  printf '%%s\n' "lowcode-pipeline: $what exited 0 but left $dir missing or empty: the step must write its output there" >&2
  exit 4
fi
if [ -n "$holds" ] && { [ ! -d "./$dir/$holds" ] || [ -z "$(ls -A "./$dir/$holds")" ]; }; then
  printf '%%s\n' "lowcode-pipeline: $what exited 0 but left no $dir/$holds: the project's own code as data, from its snapshot folder, would not be deployed" >&2
  exit 4
fi
chmod -R %[2]s "./$dir"
`

// Helpers are the scripts the Node.js containers run, by command name, to
// install in steplimit.Dir: the install's, the builds', and the time limits
// they and the toolkit's snapshot run under.
func Helpers() map[string]string {
	limit := steplimit.Format(steplimit.Project)
	within := steplimit.Name(steplimit.Project)
	files := map[string]string{
		InstallHelper: fmt.Sprintf(installScript, InstallHelper, MinNodeMajor, limit, within, caLine),
		BuildHelper:   fmt.Sprintf(buildScript, BuildHelper, OutputMode, limit, within, steplimit.DescribeCommand, caLine),
	}
	maps.Copy(files, steplimit.Files())
	return files
}

// CheckedInstall is the install command (InstallCommand), run after a check
// of the image's Node.js, in the same exec; an old Node.js exits 3 with the
// reason on stderr. It has the time limit of a project's step.
func CheckedInstall(image string, files []string) []string {
	return append([]string{InstallHelper, image}, InstallCommand(files)...)
}

// CheckedBuild runs a build step and, in the same exec, fails it when it
// exited 0 but left dir missing or empty, naming the step, and makes dir
// readable by group and others, writable by its owner only (OutputMode),
// whatever modes the tool wrote: the images copy it as it is, and the web
// server may run under any user of group root. The step has the time limit
// of a project's step, and stays lazy: nothing runs until its output is used.
func CheckedBuild(cmd []string, dir string) []string {
	return append([]string{BuildHelper, dir}, cmd...)
}

// CheckedBuildHolding is CheckedBuild that also fails the step when it left
// dir without a non-empty folder sub: the code as data's step, whose
// toolkit exits 0 having found none of the project's own code as data. No
// sub (a project without a name) is CheckedBuild.
func CheckedBuildHolding(cmd []string, dir, sub string) []string {
	if sub == "" {
		return CheckedBuild(cmd, dir)
	}
	return append([]string{BuildHelper, dir, "--holds", sub}, cmd...)
}
