package drawversion

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstalledVersion(t *testing.T) {
	for _, tc := range []struct{ name, out, want, err string }{
		{name: "a registry package", out: `{"dependencies":{"@vendor/draw":{"version":"2.14.3","resolved":"https://registry.example/x.tgz"}}}`, want: "2.14.3"},
		{name: "a pre-release", out: `{"dependencies":{"@vendor/draw":{"version":"3.0.0-beta.2"}}}`, want: "3.0.0-beta.2"},
		{name: "not installed", out: `{"name":"app"}`, err: `design-tool package "@vendor/draw" is not installed`},
		{name: "missing", out: `{"dependencies":{"@vendor/draw":{"missing":true,"required":"^2"}}}`, err: "is not installed"},
		{name: "an odd version", out: `{"dependencies":{"@vendor/draw":{"version":"latest"}}}`, err: `has version "latest"`},
		{name: "a version longer than npm writes (round-21 probe F2)", out: `{"dependencies":{"@vendor/draw":{"version":"1.0.0-` + strings.Repeat("a", 300) + `"}}}`,
			err: `which is not a version npm writes`},
		{name: "not JSON", out: `npm ERR!`, err: "reading `npm ls @vendor/draw --json`"},
		{name: "a workspace's dependency, as npm lists it under the workspace",
			out: `{"dependencies":{"web":{"version":"1.0.0","resolved":"file:../packages/web","dependencies":{"@vendor/draw":{"version":"2.14.0"}}}}}`, want: "2.14.0"},
		{name: "two workspaces on the same version",
			out: `{"dependencies":{"web":{"dependencies":{"@vendor/draw":{"version":"2.14.0"}}},"admin":{"dependencies":{"@vendor/draw":{"version":"2.14.0"}}}}}`, want: "2.14.0"},
		{name: "two versions: which built the project is unknown",
			out: `{"dependencies":{"@vendor/draw":{"version":"2.14.0"},"admin":{"dependencies":{"@vendor/draw":{"version":"2.13.1"}}}}}`,
			err: `design-tool package "@vendor/draw" is installed in 2 versions ("2.13.1" by admin; "2.14.0" by the project)`},
		{name: "a workspace's name shown printable, without a login (round-16 probes F2, F2b)",
			out: `{"dependencies":{"@vendor/draw":{"version":"2.14.0"},"ws\u001b]0;pwned\u0007\u202e":{"dependencies":{"@vendor/draw":{"version":"2.13.1"}}},` +
				`"https://ci:s3cretPassw0rd@git.example.com/x":{"dependencies":{"@vendor/draw":{"version":"2.13.0"}}}}}`,
			err: `("2.13.0" by …@git.example.com/x; "2.13.1" by ws\x1b]0;pwned\a\u202e; "2.14.0" by the project)`},
		{name: "a workspace missing it, another has it",
			out: `{"dependencies":{"web":{"dependencies":{"@vendor/draw":{"missing":true}}},"admin":{"dependencies":{"@vendor/draw":{"version":"2.14.0"}}}}}`, want: "2.14.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := InstalledVersion("@vendor/draw", []byte(tc.out))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCheckPackageName(t *testing.T) {
	for _, ok := range []string{"draw-standin", "@vendor/draw", "a.b_c~d", "a..b"} {
		assert.NoError(t, CheckPackageName("--draw-package", ok))
	}
	for _, bad := range []string{"", "Draw", "@vendor", "../x", "a b", "-x", strings.Repeat("a", 215)} {
		assert.ErrorContains(t, CheckPackageName("--draw-package", bad), ": not an npm package name", bad)
	}
	err := CheckPackageName("--draw-package", strings.Repeat("A", 100_000))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300, "a huge value is cut in the error")
}

func FuzzCheckPackageName(f *testing.F) {
	for _, s := range []string{"draw-standin", "@vendor/draw", "Draw", "@a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckPackageName("--draw-package", name)
		if err != nil {
			assert.Less(t, len(err.Error()), 400, "the error echoes a cut of the value")
			assert.True(t, strings.HasPrefix(err.Error(), "--draw-package "), "the error names the flag")
			return
		}
		// what is accepted is one npm argument that names a package, and
		// is what npm ls and the installed package.json's path are made of
		assert.LessOrEqual(t, len(name), 214)
		for _, segment := range strings.Split(name, "/") {
			assert.NotContains(t, []string{"", ".", ".."}, segment, "no path segment that leaves node_modules/<name>")
		}
		assert.False(t, strings.HasPrefix(name, "-"), "not an option")
		assert.Equal(t, strings.ToLower(name), name)
		assert.LessOrEqual(t, strings.Count(name, "/"), 1)
		assert.Equal(t, strings.Count(name, "/") == 1, strings.HasPrefix(name, "@"), "a scope, and only a scope, has a slash")
	})
}

func FuzzInstalledVersion(f *testing.F) {
	f.Add([]byte(`{"dependencies":{"p":{"version":"1.2.3"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := InstalledVersion("p", data)
		if err == nil && !semverish.MatchString(v) {
			t.Fatalf("accepted version %q", v)
		}
	})
}

func TestManifestVersion(t *testing.T) {
	for _, tc := range []struct{ name, data, want, err string }{
		{name: "a registry package", data: `{"name":"@vendor/draw","version":"2.14.3","main":"index.js"}`, want: "2.14.3"},
		{name: "an alias keeps the real package's name", data: `{"name":"@vendor/real-draw","version":"3.0.0-beta.2"}`, want: "3.0.0-beta.2"},
		{name: "no version", data: `{"name":"@vendor/draw"}`, err: `design-tool package "@vendor/draw" is installed without a version`},
		{name: "an odd version", data: `{"version":"latest"}`, err: `has version "latest", which is not a version npm writes`},
		{name: "a long odd version is cut", data: `{"version":"1.0.0 ` + strings.Repeat("x", 500) + `"}`, err: "… (506 bytes)"},
		{name: "not JSON", data: `<html>`, err: "reading node_modules/@vendor/draw/package.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ManifestVersion("@vendor/draw", []byte(tc.data))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.Less(t, len(err.Error()), 300)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzManifestVersion(f *testing.F) {
	f.Add([]byte(`{"name":"p","version":"1.2.3"}`))
	f.Add([]byte(`{"version":"1.2.3-rc.1+build.5"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ManifestVersion("p", data)
		if err == nil && !semverish.MatchString(v) {
			t.Fatalf("accepted version %q", v)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Fatalf("error of %d bytes", len(err.Error()))
		}
	})
}
