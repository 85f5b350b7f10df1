package results

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"dagger/lowcode-pipeline/internal/devtools/schemagen"
)

// schema is the module's API as the engine serves it (tests/ keeps it).
func schema(t *testing.T) *ast.Schema {
	t.Helper()
	s, err := schemagen.LoadSDL("../../tests", "dagger-core.v0.21.8.graphql", "lowcode-pipeline.graphql")
	require.NoError(t, err)
	return s
}

// keysMatch checks that every key of the JSON document is a field of the
// GraphQL type, nested objects and lists of objects included.
func keysMatch(t *testing.T, s *ast.Schema, typeName string, doc any, path string) {
	t.Helper()
	def := s.Types[typeName]
	require.NotNil(t, def, "type %s", typeName)
	obj, ok := doc.(map[string]any)
	require.True(t, ok, "%s is an object", path)
	for key, v := range obj {
		f := def.Fields.ForName(key)
		if !assert.NotNil(t, f, "%s.%s: no field %q on %s: the JSON a script reads must use the API's names", path, key, key, typeName) {
			continue
		}
		inner := f.Type.Name()
		if s.Types[inner].Kind != ast.Object {
			continue
		}
		if v == nil { // an empty list or object: null in JSON
			continue
		}
		items, isList := v.([]any)
		if !isList {
			items = []any{v}
		}
		for _, item := range items {
			keysMatch(t, s, inner, item, path+"."+key)
		}
	}
}

func TestEveryResultsJSONUsesTheAPIsFieldNames(t *testing.T) {
	s := schema(t)
	ref := PushedImage{Ref: "r/a:1@sha256:00", Repository: "r/a", Tag: "1", Digest: "sha256:00"}
	for _, tc := range []struct {
		graphqlType string
		value       any
	}{
		{"LowcodePipelineReceipt", Receipt{Status: 200, Images: []string{"r/a:1"}, Warnings: []string{"w"}}},
		{"LowcodePipelineSnapshot", Snapshot{Entries: []SnapshotDir{{Name: "n", OutputDir: "d", Files: 2}}}},
		{"LowcodePipelineDelivery", Delivery{Release: Release{Frontend: []PushedImage{ref}}, Receipt: Receipt{Status: 200}, Steps: []StepTime{{"build", 1}}}},
		{"LowcodePipelineRelease", Release{Frontend: []PushedImage{ref}, Backend: []PushedImage{ref}, CodeAsData: []PushedImage{ref}}},
		{"LowcodePipelineSnapshotReport", SnapshotReport{Entries: []SnapshotEntry{{Name: "n", Commit: "c"}}}},
		{"LowcodePipelinePlan", Plan{Images: []PlanImage{{Image: "i"}}, Backends: []PlanBackend{{Name: "api"}}, Warnings: []string{"w"}}},
		{"LowcodePipelineBuild", Build{HasCodeAsData: true, DrawVersion: "1"}},
	} {
		t.Run(tc.graphqlType, func(t *testing.T) {
			var doc any
			require.NoError(t, json.Unmarshal([]byte(JSON(tc.value)), &doc))
			if tc.graphqlType == "LowcodePipelineBuild" {
				delete(doc.(map[string]any), "outputs") // the directories themselves are fields; their names are not
			}
			keysMatch(t, s, tc.graphqlType, doc, tc.graphqlType)
		})
	}
}

func TestTextSaysWhatAPersonNeeds(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
		not  []string
	}{
		{"a delivered receipt", Receipt{Status: 200, Message: "success", Url: "https://hooks.example.com/acme/prod", PayloadSha256: "ab12",
			Images: []string{"r/front:1@sha256:01", "r/api:1@sha256:02"}, SentAt: "2026-11-26T05:00:00Z", DurationMs: 42, ConnectAttempts: 1}.Text(),
			[]string{"deployed: 200 success", "webhook:  https://hooks.example.com/acme/prod", "sha256 ab12", "images:   r/front:1@sha256:01",
				"          r/api:1@sha256:02", "in 42 ms, 1 connection attempt"}, []string{"dry run"}},
		{"a 200 whose message is not success shows it and the warning", Receipt{Status: 200, Message: "deployment rejected: quota exceeded",
			Warnings: []string{`the answer's message is "deployment rejected: quota exceeded", not "success"`}, ConnectAttempts: 2}.Text(),
			[]string{"deployed: 200 deployment rejected: quota exceeded", "warning: the answer's message", "2 connection attempts"}, nil},
		{"a release", Release{Frontend: []PushedImage{{Ref: "r/front:1@sha256:01"}, {Ref: "r/front:latest@sha256:01"}},
			Backend: []PushedImage{{Ref: "r/api:1@sha256:02"}}, Signed: true, Sboms: []string{"frontend.spdx.json"}}.Text(),
			[]string{"frontend    r/front:1@sha256:01\n            r/front:latest@sha256:01\nbackend     r/api:1@sha256:02\n", "signed with cosign", "SBOMs: frontend.spdx.json"},
			[]string{"codeasdata"}},
		{"a release says how this run left each tag", Release{Frontend: []PushedImage{{Ref: "r/front:1@sha256:01", Outcome: "pushed"}},
			Backend: []PushedImage{{Ref: "r/api:2@sha256:02", Outcome: "tagged"}, {Ref: "r/api:latest@sha256:02", Outcome: "unchanged"}}}.Text(),
			[]string{"frontend    pushed    r/front:1@sha256:01\nbackend     tagged    r/api:2@sha256:02\n            unchanged r/api:latest@sha256:02\n"}, nil},
		{"an empty release", Release{}.Text(), []string{"no image was published"}, nil},
		{"a snapshot report", SnapshotReport{Entries: []SnapshotEntry{
			{Name: "Orders", OutputDir: "codeasdata/orders", Branch: "main", Outcome: "pushed", Commit: "0123456789abcdef0123"},
			{Name: "Local", OutputDir: "codeasdata/local", Branch: "dev", Outcome: "not attempted"}}}.Text(),
			[]string{"[0] Orders: codeasdata/orders → main: pushed (0123456789ab)\n", "[1] Local: codeasdata/local → dev: not attempted\n"}, nil},
		{"a build", Build{Outputs: []string{"dist/web", "dist/node"}, DrawVersion: "2.14.0"}.Text(),
			[]string{"outputs: dist/web, dist/node", "draw_version 2.14.0"}, nil},
		{"a snapshot", Snapshot{Entries: []SnapshotDir{{Name: "Orders", OutputDir: "codeasdata/orders", Files: 2, Pushed: true},
			{Name: "Local", OutputDir: "codeasdata/local", Files: 1}}}.Text(),
			[]string{"[0] Orders: codeasdata/orders, 2 files (git section: push commits it)\n", "[1] Local: codeasdata/local, 1 file\n"}, nil},
		{"a delivery: the release, then the receipt", Delivery{Release: Release{Frontend: []PushedImage{{Ref: "r/front:1@sha256:01"}}},
			Receipt: Receipt{Status: 200, Message: "success", ConnectAttempts: 1}}.Text(),
			[]string{"frontend    r/front:1@sha256:01\ndeployed: 200 success\n"}, []string{"steps:"}},
		{"a delivery says where its time went, last", Delivery{Receipt: Receipt{Status: 200, Message: "success", ConnectAttempts: 1},
			Steps: []StepTime{{"build", 6840}, {"publish", 4125}, {"payload", 3}, {"deploy", 212}}}.Text(),
			[]string{"\nsteps:    build 6.8 s · publish 4.1 s · payload 0.0 s · deploy 0.2 s\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				assert.Contains(t, tc.text, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, tc.text, n)
			}
			assert.True(t, strings.HasSuffix(tc.text, "\n"), "ends in a line feed, as a terminal wants")
		})
	}
}

// A value a server or a file wrote cannot add a line to a Text, move the
// cursor or colour it: its control characters are shown as escapes, and
// each Text has exactly the lines it would have without them.
func TestTextShowsWhatAServerOrAFileWroteWithoutObeyingIt(t *testing.T) {
	const forged = "ok\r\n::error::forged\x1b[2K\u009b1A\xff"
	const shown = `ok\r\n::error::forged\x1b[2K\u009b1A\xff`
	for _, tc := range []struct {
		name  string
		text  string
		lines int
	}{
		{"a receipt's message", Receipt{Status: 200, Message: forged, ConnectAttempts: 1}.Text(), 5},
		{"a receipt's address, images and warnings", Receipt{Status: 200, Url: forged, Images: []string{forged}, Warnings: []string{forged}}.Text(), 6},
		{"a snapshot report's entry", SnapshotReport{Entries: []SnapshotEntry{{Name: forged, OutputDir: forged, Branch: forged, Outcome: "failed: " + forged}}}.Text(), 1},
		{"a snapshot's entry", Snapshot{Entries: []SnapshotDir{{Name: forged, OutputDir: forged, Files: 1}}}.Text(), 1},
		{"a build's design-tool version and warnings", Build{Outputs: []string{"dist/web"}, DrawVersion: forged, Warnings: []string{forged}}.Text(), 3},
		{"a delivery's receipt", Delivery{Receipt: Receipt{Status: 200, Message: forged}}.Text(), 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, tc.text, shown)
			assert.Equal(t, tc.lines, strings.Count(tc.text, "\n"), "no line but the Text's own:\n%s", tc.text)
			assert.False(t, strings.ContainsFunc(strings.ReplaceAll(tc.text, "\n", ""), func(r rune) bool { return !unicode.IsPrint(r) }),
				"nothing but printable characters and the Text's own line feeds: %q", tc.text)
			assert.True(t, utf8.ValidString(tc.text))
		})
	}
	assert.Contains(t, Receipt{Status: 200, Message: forged}.Text(), "deployed: 200 "+shown+"\n", "the summary's first line stays the receipt's")
}

// A result's JSON is printed to a terminal: a value from a file or a server
// holding characters a terminal acts on reaches it escaped, the document
// meaning the same.
func TestJSONIsPrintableAndMeansTheSame(t *testing.T) {
	entry := SnapshotEntry{Name: "home\u202eexe.txt \u009b2J\u0085\x7f"}
	out := JSON(entry)
	for _, r := range []rune{'\u202e', '\u009b', '\u0085', '\x7f'} {
		assert.NotContains(t, out, string(r))
	}
	var back SnapshotEntry
	require.NoError(t, json.Unmarshal([]byte(out), &back))
	assert.Equal(t, entry, back)
}
