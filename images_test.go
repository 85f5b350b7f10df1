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
	read := <-(&Release{}).tagCheck(ctx, frontend)
	require.NoError(t, read.err)
	assert.Equal(t, want, read.held, "every tag of the frontend's repository holds the image")
	read = <-(&Release{}).tagCheck(ctx, targets[1])
	assert.ErrorContains(t, read.err, host+"/team/app-backend:1.4.0 is not in the registry")

	assert.Nil(t, (&Release{RegistryService: &dagger.Service{}}).tagCheck(ctx, frontend), "a registry service is always pushed to")
}
