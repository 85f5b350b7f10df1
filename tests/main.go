// Engine-level tests of lowcode-pipeline
//
// Each +check function loads the module under test from this repository,
// serves it in the session and calls its functions as a user would. Run them
// with `dagger check -m tests`. They need a Dagger engine; the pure Go tests
// (scripts/test) need none. Every GraphQL query they send is declared with
// gql at package level, so that queries_test.go validates all of them against
// the module's SDL and the core API without an engine.
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

// query is one GraphQL query a check sends, to the module at dir in the
// repository ("." is lowcode-pipeline, "examples/go" its Go example).
type query struct{ name, text, dir string }

// queries are every query the checks send, in declaration order.
var queries []*query

// gql declares a query to lowcode-pipeline; call it only at package level.
func gql(name, text string) *query {
	q := &query{name: name, text: text, dir: "."}
	queries = append(queries, q)
	return q
}

// gqlExample declares a query to examples/go, the module that chains
// lowcode-pipeline from Go; call it only at package level.
func gqlExample(name, text string) *query {
	q := gql(name, text)
	q.dir = "examples/go"
	return q
}

var serveOnce sync.Map

// served is the outcome of serving one module of the repository.
type served struct {
	once sync.Once
	err  error
}

// run serves the module q is for once per session, then sends q and
// decodes its data into out.
func (t *Tests) run(ctx context.Context, q *query, vars map[string]any, out any) error {
	v, _ := serveOnce.LoadOrStore(q.dir, &served{})
	s := v.(*served)
	s.once.Do(func() {
		s.err = t.Repo.AsModule(dagger.DirectoryAsModuleOpts{SourceRootPath: q.dir}).Serve(ctx)
	})
	if s.err != nil {
		return fmt.Errorf("serve the module in %s: %w", q.dir, s.err)
	}
	resp := &graphql.Response{Data: out}
	if err := dag.GraphQLClient().MakeRequest(ctx, &graphql.Request{Query: q.text, Variables: vars}, resp); err != nil {
		return fmt.Errorf("query %s: %w", q.name, err)
	}
	return nil
}

// fails sends q and checks that it fails with every one of wants.
func (t *Tests) fails(ctx context.Context, q *query, vars map[string]any, wants ...string) error {
	var out json.RawMessage
	err := t.run(ctx, q, vars, &out)
	if err == nil {
		return fmt.Errorf("query %s: expected an error containing %q, got %s", q.name, wants, out)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			return fmt.Errorf("error %q does not contain %q", err, w)
		}
	}
	return nil
}

// example is the variables of a query over examples/app.
func (t *Tests) example(ctx context.Context) (map[string]any, error) {
	id, err := t.Repo.Directory("examples/app").ID(ctx)
	return map[string]any{"source": id}, err
}

// sameJSON compares two JSON documents as data, never as text.
func sameJSON(got, want string) error {
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("not JSON: %w: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return err
	}
	gn, _ := json.Marshal(g)
	wn, _ := json.Marshal(w)
	if string(gn) != string(wn) {
		return fmt.Errorf("JSON differs\n got %s\nwant %s", gn, wn)
	}
	return nil
}
