package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/nodebuild"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/secret"
	"dagger/lowcode-pipeline/internal/snapshotconfig"
)

// A delivery whose flags are right, as a CI passes them.
func goodDelivery() deliveryFlags {
	return deliveryFlags{
		build: buildFlags{drawPackage: "@vendor/draw"},
		publish: publishFlags{repository: "registry.example.com/team/app-{kind}", tag: []string{"1.4.0", "latest"},
			registryUsername: "ci", registryPassword: &dagger.Secret{}, created: "2026-11-20T10:00:00Z", label: []string{"org.opencontainers.image.revision=abc123"}},
		deploy: deployFlags{url: "https://hooks.example.com/acme/prod", connectAttempts: defaultConnectAttempts},
	}
}

// A package.json as the vendor's template has it: the design tool and the
// toolkit in its devDependencies; and one that names neither.
const (
	templateManifest = `{"name":"@olympeio/community","scripts":{"build:draw":"npx webpack --config-name draw","build:node":"npx webpack --config-name node"},
		"devDependencies":{"@olympeio/draw":"2.9.2","@olympeio/toolkit":"1.1.0"}}`
	plainManifest = `{"name":"app","scripts":{"build:draw":"x","build:node":"y"}}`
)

// projectOf is what readProject finds of a project with manifest as its
// package.json, its code as data in snapshot/ (with no snapshot
// configuration) when the build makes code as data.
func projectOf(t *testing.T, manifest string, c deliveryFlags) *projectFacts {
	t.Helper()
	m, err := nodebuild.ParseManifest([]byte(manifest))
	require.NoError(t, err)
	p := &projectFacts{manifest: m}
	if c.build.codeAsData != "" && c.build.codeAsData != CodeAsDataKindNone && !nodebuild.GivesSnapshotDir(c.build.codeAsDataArg) {
		p.folders = map[string]int{nodebuild.DefaultSnapshotDir: 1}
	}
	return p
}

// targetsOf are where a delivery checked with the token and payload will
// push, for a project with no tool of the platform's in its package.json.
func targetsOf(t *testing.T, c deliveryFlags, token string, base []byte) ([]images.Target, error) {
	t.Helper()
	spec, err := checkDelivery(c, projectOf(t, plainManifest, c), secret.New(token), nil, base)
	if err != nil {
		return nil, err
	}
	return spec.publish.targets, nil
}

func TestDeliveryCheckPassesGoodFlags(t *testing.T) {
	c := goodDelivery()
	kinds := func(targets []images.Target) (kinds []images.Kind) {
		for _, target := range targets {
			kinds = append(kinds, target.Kind)
		}
		return kinds
	}
	targets, err := targetsOf(t, c, testToken, nil)
	require.NoError(t, err, "the reference default payload")
	assert.Equal(t, []images.Kind{images.Frontend, images.Backend}, kinds(targets), "no code-as-data image without code as data")
	assert.Equal(t, []string{"registry.example.com/team/app-frontend:1.4.0", "registry.example.com/team/app-frontend:latest"}, targets[0].Refs())
	_, err = targetsOf(t, c, testToken, []byte(`{"backends":{"images":[],"deployRules":[{"source":"/backend:","target":"^api$"}]},"codeAsData":{"updateMode":"auto"}}`))
	assert.NoError(t, err, "a payload of the repository's")
	c.build.codeAsData, c.build.toolkit = CodeAsDataKindBricks, "@vendor/cli"
	targets, err = targetsOf(t, c, testToken, nil)
	require.NoError(t, err, "with the code-as-data image")
	assert.Equal(t, images.Kinds, kinds(targets))
	c.publish.repository, c.publish.registryService = "localhost:5000/app-{kind}", &dagger.Service{}
	_, err = targetsOf(t, c, testToken, nil)
	assert.NoError(t, err, "a registry service named localhost, as demo runs it")
}

func TestTheProjectsOwnToolsAreUsedUnlessAFlagNamesOthers(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, draw, toolkit string
		wantDraw                      string
		wantCodeAsData                []string
	}{
		{"the vendor's template: both from its devDependencies, npx runs the installed toolkit", templateManifest, "", "", "@olympeio/draw",
			[]string{"npx", "--yes", "@olympeio/toolkit", "buildCodeAsData", "--codeAsData.mode", "all", "--snapshot.dir", "snapshot"}},
		{"flags name other packages", templateManifest, "@vendor/draw", "@vendor/cli@3.1.0", "@vendor/draw",
			[]string{"npx", "--yes", "@vendor/cli@3.1.0", "buildCodeAsData", "--codeAsData.mode", "all", "--snapshot.dir", "snapshot"}},
		{"a project that names neither, with flags", plainManifest, "draw-standin", "platform-cli-standin", "draw-standin",
			[]string{"npx", "--yes", "platform-cli-standin", "buildCodeAsData", "--codeAsData.mode", "all", "--snapshot.dir", "snapshot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := goodDelivery()
			c.build.drawPackage, c.build.toolkit, c.build.codeAsData = tc.draw, tc.toolkit, CodeAsDataKindProject
			spec, err := checkDelivery(c, projectOf(t, tc.manifest, c), secret.New(testToken), nil, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.wantDraw, spec.build.drawPackage)
			assert.Equal(t, tc.wantCodeAsData, spec.build.codeAsData)
		})
	}
}

func TestAProjectWithoutThePlatformsToolsNeedsTheirFlags(t *testing.T) {
	c := goodDelivery()
	c.build.drawPackage, c.build.codeAsData = "", CodeAsDataKindProject
	_, err := checkDelivery(c, projectOf(t, plainManifest, c), secret.New(testToken), nil, nil)
	require.Error(t, err)
	assert.ErrorContains(t, err, "draw_version is unknown: package.json does not depend on @olympeio/draw")
	assert.ErrorContains(t, err, "--toolkit: required: package.json does not depend on @olympeio/toolkit")
}

func TestCodeAsDataIsReadFromTheFolderTheProjectHolds(t *testing.T) {
	config := []snapshotconfig.Entry{{Snapshooter: snapshotconfig.Snapshooter{Name: "app", OutputDir: "code/asdata"}}}
	for _, tc := range []struct {
		name    string
		entries []snapshotconfig.Entry
		folders map[string]int
		args    []string
		want    []string // buildCodeAsData's arguments after the mode
		err     string
	}{
		{"the toolkit's default, without a configuration", nil, map[string]int{"snapshot": 2}, nil, []string{"--snapshot.dir", "snapshot"}, ""},
		{"the configuration's outputDir", config, map[string]int{"code/asdata": 1}, nil, []string{"--snapshot.dir", "code/asdata"}, ""},
		{"the user's own --snapshot.dir, looked for nowhere", nil, nil, []string{"--snapshot.dir=elsewhere"}, []string{"--snapshot.dir=elsewhere"}, ""},
		{"the default folder missing", nil, map[string]int{}, nil, nil, "snapshot/ (the toolkit's default, as the project has no res/snapshot-config.json), which is missing or empty"},
		{"the configuration's outputDir empty", config, map[string]int{"code/asdata": 0}, nil, nil, `res/snapshot-config.json: the project holds none of its entries' outputDirs ("code/asdata")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := goodDelivery()
			c.build.toolkit, c.build.codeAsData, c.build.codeAsDataArg = "cli", CodeAsDataKindProject, tc.args
			p := projectOf(t, plainManifest, c)
			p.entries, p.folders = tc.entries, tc.folders
			spec, err := checkDelivery(c, p, secret.New(testToken), nil, nil)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorContains(t, err, "--code-as-data-arg=--snapshot.dir=<folder>", "the way out is named")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, spec.build.codeAsData[6:])
		})
	}
}

func TestDeliveryCheckRefusesBeforeTheBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*deliveryFlags)
		token string
		base  string
		want  []string
	}{
		{"a bad tag", func(c *deliveryFlags) { c.publish.tag = []string{"bad tag"} }, testToken, "", []string{`--tag: "bad tag" is not a valid tag`}},
		{"no {kind} in the repository", func(c *deliveryFlags) { c.publish.repository = "registry.example.com/app" }, testToken, "", []string{"{kind}"}},
		{"a bad creation time", func(c *deliveryFlags) { c.publish.created = "yesterday" }, testToken, "", []string{`--created "yesterday"`}},
		{"a bad label", func(c *deliveryFlags) { c.publish.label = []string{"no-equals"} }, testToken, "", []string{"--label[0]", "want KEY=VALUE"}},
		{"no design-tool package to label the images", func(c *deliveryFlags) { c.build.drawPackage = "" }, testToken, "", []string{"set --draw-package"}},
		{"a payload with an unknown key", func(*deliveryFlags) {}, testToken, `{"noDowntim":{"promotionMode":"auto"}}`, []string{"--payload:", `noDowntim: unknown key (did you mean "noDowntime"?)`}},
		{"a payload that is not JSON", func(*deliveryFlags) {}, testToken, `{"frontend":`, []string{"--payload:"}},
		{"a payload that names an image of its own", func(*deliveryFlags) {}, testToken,
			`{"backends":{"images":["registry.example.com/team/app-backend:1.3.0"],"deployRules":[{"source":".*","target":".*"}]}}`,
			[]string{"--payload: starting payload: backends.images[0]:", "is named in the starting payload"}},
		{"a registry on loopback, not a service", func(c *deliveryFlags) { c.publish.repository = "localhost:5000/app-{kind}" }, testToken, "",
			[]string{`--repository "localhost:5000/app-{kind}": "localhost:5000" names this machine`, "--registry-service"}},
		{"plain http", func(c *deliveryFlags) { c.deploy.url = "http://hooks.example.com/acme/prod" }, testToken, "", []string{"uses plain http"}},
		{"a webhook on loopback", func(c *deliveryFlags) { c.deploy.url, c.deploy.allowHTTP = "http://localhost:8080/acme/dev", true }, testToken, "",
			[]string{`--webhook-url http://localhost:8080: "localhost:8080" names this machine`}},
		{"a token read from a file with its newline", func(*deliveryFlags) {}, testToken + "\n", "", []string{"contains a line break"}},
		{"every step's problems at once", func(c *deliveryFlags) {
			c.build.buildArg, c.build.codeAsDataArg, c.deploy.url = []string{"SOURCES_PATH=x"}, []string{"--x"}, "https://localhost/acme/prod"
		}, testToken, `{"frontend":`, []string{"--build-arg[0]", "--code-as-data-arg", "--payload:", "names this machine"}},
		{"every problem at once", func(c *deliveryFlags) {
			c.publish.tag, c.publish.created, c.deploy.url = []string{"bad tag"}, "yesterday", "ftp://x/y"
		}, testToken, "",
			[]string{"--tag", "--created", "scheme must be https"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := goodDelivery()
			tc.edit(&c)
			var base []byte
			if tc.base != "" {
				base = []byte(tc.base)
			}
			targets, err := targetsOf(t, c, tc.token, base)
			require.Error(t, err)
			assert.Nil(t, targets, "nothing to push, so no tag to read")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), testToken)
		})
	}
}

func TestInStepTimesEachStepInItsSpan(t *testing.T) {
	rec := recordSpans(t)
	var steps []results.StepTime
	_, err := inStep(context.Background(), &steps, "build", func(context.Context) (int, error) {
		time.Sleep(30 * time.Millisecond)
		return 1, nil
	})
	require.NoError(t, err)
	_, err = inStep(context.Background(), &steps, "publish", func(context.Context) (int, error) { return 2, nil })
	require.NoError(t, err)
	require.Len(t, steps, 2)
	assert.Equal(t, []string{"build", "publish"}, []string{steps[0].Step, steps[1].Step}, "in the order they ran")
	assert.GreaterOrEqual(t, steps[0].Ms, int64(30), "a step's time holds all of its work")
	spans := rec.Ended()
	require.Len(t, spans, 2)
	assert.Equal(t, "build", spans[0].Name(), "each step still has its span")
}
