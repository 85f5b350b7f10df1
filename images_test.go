package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/dagger"
	"dagger/lowcode-pipeline/internal/images"
)

func TestTagCheckReadsEveryTagOfTheTargetAndNeverAServicesRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	targets, err := images.PublishRequest{Repository: host + "/team/app-{kind}", Tags: []string{"1.4.0", "latest"}}.Targets()
	require.NoError(t, err)
	frontend := targets[0]
	img, err := random.Image(512, 2)
	require.NoError(t, err)
	for _, ref := range frontend.Refs() {
		tag, err := name.NewTag(ref)
		require.NoError(t, err)
		require.NoError(t, remote.Write(tag, img))
	}
	want, err := img.Digest()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := <-tagCheck(ctx, frontend, "", nil, nil)
	require.NoError(t, read.err)
	assert.Equal(t, want, read.held, "every tag of the frontend's repository holds the image")
	read = <-tagCheck(ctx, targets[1], "", nil, nil)
	assert.ErrorContains(t, read.err, host+"/team/app-backend:")
	assert.ErrorContains(t, read.err, " is not in the registry", "neither of the backend's tags is there")

	assert.Nil(t, tagCheck(ctx, frontend, "", nil, &dagger.Service{}), "a registry service is always pushed to")
}

func TestDeliverReadsTheTagsOfEveryImageItWillPush(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := goodDelivery()
	c.repository, c.tag = host+"/team/app-{kind}", []string{"1.4.0"}
	for _, tc := range []struct {
		name  string
		edit  func(*deliveryCheck)
		kinds []images.Kind
	}{
		{"no code as data", func(*deliveryCheck) {}, []images.Kind{images.Frontend, images.Backend}},
		{"with code as data", func(c *deliveryCheck) { c.codeAsData, c.toolkit = CodeAsDataKindProject, "@vendor/cli" }, images.Kinds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			tc.edit(&c)
			targets, err := c.check(testToken, nil, nil)
			require.NoError(t, err)
			checks := readTags(ctx, targets, c.registryUsername, nil, nil)
			require.Len(t, checks, len(tc.kinds))
			for _, kind := range tc.kinds {
				require.Contains(t, checks, kind)
				read := <-checks[kind]
				assert.ErrorContains(t, read.err, host+"/team/app-"+string(kind)+":1.4.0 is not in the registry")
			}
			assert.Empty(t, readTags(ctx, targets, c.registryUsername, nil, &dagger.Service{}), "a registry service is always pushed to")
		})
	}
}
