// Engine-level tests of lowcode-pipeline
//
// Each +check function loads the module under test from this repository,
// serves it in the session and calls its functions as a user would. Run them
// with `dagger check -m tests`. They need a Dagger engine; the pure Go tests
// (scripts/test) need none.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/Khan/genqlient/graphql"

	"dagger/tests/internal/dagger"
)

type Tests struct {
	// The lowcode-pipeline repository
	Repo *dagger.Directory
}

func New(
	// The lowcode-pipeline repository
	// +defaultPath="/"
	// +ignore=["**/node_modules", "**/dist", ".git"]
	repo *dagger.Directory,
) *Tests {
	return &Tests{Repo: repo}
}

var serveOnce sync.Map

// query serves the module under test once per session, then runs a GraphQL
// query against it and decodes data into out.
func (t *Tests) query(ctx context.Context, q string, vars map[string]any, out any) error {
	once, _ := serveOnce.LoadOrStore("module", &sync.Once{})
	var serveErr error
	once.(*sync.Once).Do(func() { serveErr = t.Repo.AsModule().Serve(ctx) })
	if serveErr != nil {
		return fmt.Errorf("serve lowcode-pipeline: %w", serveErr)
	}
	resp := &graphql.Response{Data: out}
	return dag.GraphQLClient().MakeRequest(ctx, &graphql.Request{Query: q, Variables: vars}, resp)
}

// expectFailure runs q and checks that it fails with every one of wants.
func (t *Tests) expectFailure(ctx context.Context, q string, vars map[string]any, wants ...string) error {
	var out json.RawMessage
	err := t.query(ctx, q, vars, &out)
	if err == nil {
		return fmt.Errorf("expected an error containing %q, got %s", wants, out)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			return fmt.Errorf("error %q does not contain %q", err, w)
		}
	}
	return nil
}
