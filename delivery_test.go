package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
	"dagger/lowcode-pipeline/internal/results"
	"dagger/lowcode-pipeline/internal/secret"
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

// targetsOf are where a delivery checked with the token and payload will push.
func targetsOf(c deliveryFlags, token string, base []byte) ([]images.Target, error) {
	spec, err := checkDelivery(c, secret.New(token), nil, base)
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
	targets, err := targetsOf(c, testToken, nil)
	require.NoError(t, err, "the reference default payload")
	assert.Equal(t, []images.Kind{images.Frontend, images.Backend}, kinds(targets), "no code-as-data image without code as data")
	assert.Equal(t, []string{"registry.example.com/team/app-frontend:1.4.0", "registry.example.com/team/app-frontend:latest"}, targets[0].Refs())
	_, err = targetsOf(c, testToken, []byte(`{"backends":{"images":[],"deployRules":[{"source":"/backend:","target":"^api$"}]},"codeAsData":{"updateMode":"auto"}}`))
	assert.NoError(t, err, "a payload of the repository's")
	c.build.codeAsData, c.build.toolkit = CodeAsDataKindBricks, "@vendor/cli"
	targets, err = targetsOf(c, testToken, nil)
	require.NoError(t, err, "with the code-as-data image")
	assert.Equal(t, images.Kinds, kinds(targets))
	c.publish.repository, c.publish.registryService = "localhost:5000/app-{kind}", &dagger.Service{}
	_, err = targetsOf(c, testToken, nil)
	assert.NoError(t, err, "a registry service named localhost, as demo runs it")
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
			[]string{`--webhook-url http://localhost:8080/acme/dev: "localhost:8080" names this machine`}},
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
			targets, err := targetsOf(c, tc.token, base)
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
