package images

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/imageref"
)

// The build arguments the module's own Dockerfiles (docker/) read, and the
// project's may: each checked as what it is.
const (
	ArgFrontendBase   = "FRONTEND_BASE_IMAGE"     // the vendor's frontend base image at tag stable
	ArgWebUser        = "WEB_USER"                // the web server's user, owner of the files
	ArgDocumentRoot   = "DOCUMENT_ROOT"           // where the web server serves files from
	ArgBackendBase    = "BACKEND_BASE_IMAGE"      // the backend's runtime; default derived from --node-image
	ArgCodeAsDataBase = "CODE_AS_DATA_BASE_IMAGE" // the code-as-data image's base
)

var argName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// webUser is what COPY --chown takes as a user: a name as useradd allows
// it (shadow-utils: up to 32 bytes, a trailing $ for machine accounts) or
// a numeric id.
var webUser = bounded{32, regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*\$?$`)}

// Args is --build-arg, checked (ParseBuildArgs): each argument once, in
// order, a document root cleaned. It is a Build's state between calls, so
// it keeps the flags' own spelling, NAME=VALUE.
type Args []string

// ParseBuildArgs checks --build-arg NAME=VALUE, all problems at once: base
// images name one version (a tag, a digest or both), the web user is one
// user, the document root an absolute folder, SOURCES_PATH is not the
// user's, no name twice.
func ParseBuildArgs(user []string) (Args, error) {
	var errs []error
	out := Args{}
	given := map[string]bool{}
	for i, a := range user {
		name, value, ok := strings.Cut(a, "=")
		flag := fmt.Sprintf("--build-arg[%d] %s", i, fielderr.Quote(a))
		switch {
		case !ok || !argName.MatchString(name):
			errs = append(errs, fmt.Errorf("%s: want NAME=VALUE, e.g. %s=registry.example.com/vendor/frontend:stable", flag, ArgFrontendBase))
			continue
		case name == "SOURCES_PATH":
			errs = append(errs, fmt.Errorf("%s: SOURCES_PATH is fixed by the interface (dist/web, dist/node, dist/codeAsData for the three images)", flag))
			continue
		case given[name]:
			errs = append(errs, fmt.Errorf("%s: %s is given twice", flag, name))
			continue
		}
		given[name] = true
		if err := checkArg(name, value); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
			continue
		}
		if name == ArgDocumentRoot {
			value = path.Clean(value)
		}
		out = append(out, name+"="+value)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// For are the build arguments the image of kind k gets: SOURCES_PATH exactly
// as the interface says, then the user's, then BACKEND_BASE_IMAGE as
// backendBase (--node-image's, nodebuild.Image.Slim) when not given.
func (a Args) For(k Kind, backendBase string) [][2]string {
	args := [][2]string{{"SOURCES_PATH", k.SourcesPath()}}
	backend := false
	for _, kv := range a {
		name, value, _ := strings.Cut(kv, "=")
		backend = backend || name == ArgBackendBase
		args = append(args, [2]string{name, value})
	}
	if !backend {
		args = append(args, [2]string{ArgBackendBase, backendBase})
	}
	return args
}

func checkArg(name, value string) error {
	switch name {
	case ArgFrontendBase, ArgBackendBase, ArgCodeAsDataBase:
		return imageref.ValidateDeployable(value)
	case ArgWebUser:
		if !webUser.match(value) {
			return errors.New("one user name or numeric id (letters, digits, '.', '_', '-', not starting with '.' or '-', up to 32), without a group (the group is root)")
		}
	case ArgDocumentRoot:
		if !path.IsAbs(value) || path.Clean(value) == "/" {
			return errors.New("an absolute folder other than /")
		}
	}
	return nil
}

// ParseCreated reads --created: an RFC 3339 time (git log -1 --format=%cI)
// or Unix seconds ($SOURCE_DATE_EPOCH), from 1970 (a layer's file times
// and the Unix epoch default start there) to the end of year 9999 (the last
// an RFC 3339 time, and so the image config's created, can write).
func ParseCreated(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	var t time.Time
	if unixSeconds.MatchString(s) {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil || secs > lastCreated.Unix() {
			return time.Time{}, createdOutOfRange(s)
		}
		t = time.Unix(secs, 0)
	} else {
		var err error
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return time.Time{}, fmt.Errorf("--created %s: give the commit time as RFC 3339 (git log -1 --format=%%cI) or Unix seconds ($SOURCE_DATE_EPOCH)", fielderr.Quote(s))
		}
	}
	if t.Before(time.Unix(0, 0)) || t.After(lastCreated) {
		return time.Time{}, createdOutOfRange(s)
	}
	return t.UTC(), nil
}

var unixSeconds = regexp.MustCompile(`^[0-9]+$`)

// lastCreated is the last time RFC 3339 can write.
var lastCreated = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

func createdOutOfRange(s string) error {
	return fmt.Errorf("--created %s: a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z is allowed: give the commit time (git log -1 --format=%%cI)", fielderr.Quote(s))
}

// CheckNativeAddons refuses to put native addons (*.node files, built for
// the engine's platform) into a backend image of another platform. Platforms
// are compared as CheckPlatforms does, a variant written out or not: the
// engine reports its own normalized (containerd's Normalize writes
// linux/arm64, not linux/arm64/v8), so this only keeps the two checks alike.
func CheckNativeAddons(addons []string, engine string, platforms []string) error {
	if len(addons) == 0 {
		return nil
	}
	var foreign []string
	for _, p := range platforms {
		if p != "" && CanonicalPlatform(p) != CanonicalPlatform(engine) {
			foreign = append(foreign, p)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	shown := addons
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(addons)-5))
	}
	return fmt.Errorf("dist/node holds native addons built for %s (%s); they would not run in the backend image for %s: publish for %s only (--platform %s), or bundle the backend without native addons",
		engine, fielderr.Printable(strings.Join(shown, ", ")), strings.Join(foreign, ", "), engine, CanonicalPlatform(engine)) // the project's file names
}

// CheckPlatforms compares the platforms an image has with those asked for,
// before it is pushed, and names what is missing or more. Variants a
// platform is written with or without (linux/arm64/v8, linux/amd64/v1) match.
func CheckPlatforms(image string, asked, have []string) error {
	var problems []string
	seen := map[string]bool{}
	for _, h := range have {
		seen[CanonicalPlatform(h)] = true
	}
	want := map[string]bool{}
	for _, p := range asked {
		want[CanonicalPlatform(p)] = true
		if !seen[CanonicalPlatform(p)] {
			problems = append(problems, p+" is missing")
		}
	}
	for _, h := range have {
		if !want[CanonicalPlatform(h)] {
			problems = append(problems, h+" was not asked for")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the %s image has %s, asked %s: %s; check that every base image exists for each --platform; nothing was pushed",
			image, orNone(strings.Join(have, ", ")), strings.Join(asked, ", "), strings.Join(problems, "; "))
	}
	return nil
}

// CanonicalPlatform drops the variant a platform is the same without
// (os/arch[/variant]).
func CanonicalPlatform(p string) string {
	switch p {
	case "linux/arm64/v8":
		return "linux/arm64"
	case "linux/amd64/v1":
		return "linux/amd64"
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
