package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// P2 (issue #65): --backend names are the user's; the table a terminal
// shows escapes what would clear the line, colour it, reverse it or break
// its columns, and what a terminal draws as nothing.
func TestPlanTableIsPrintable(t *testing.T) {
	name := "api\x1b[2K\u202e\tx"
	p, err := Build(Input{Images: []string{imgA}, Rules: []Rule{{".*", "^api"}, {"zz", ".*"}}, Backends: []string{name, "b\u009bc"}})
	require.NoError(t, err)
	table := p.Table()
	for _, line := range strings.Split(table, "\n") {
		assert.Equal(t, fielderr.Printable(line), line)
	}
	assert.Regexp(t, `(?m)^api\\x1b\[2K\\u202e\\tx\s+`+regexpQuote(imgA)+`\s+0$`, table, "the name escaped, in its column")
	assert.Regexp(t, `(?m)^b\\u009bc\s+-\s+-$`, table)
	assert.Contains(t, table, `zz`, "a warning repeating a pattern")
}

// A pattern holding a character Printable escapes is refused, saying the
// escape to write: the payload's json, sent byte for byte, would carry it to
// every terminal that prints it (round-20 probe F1).
func TestAPatternHoldingAnUnprintableCharacterIsRefused(t *testing.T) {
	for pattern, escape := range map[string]string{
		"\u202e.*": `\u202E`, ".*\u3164": `\u3164`, "a\u009bb": `\u009B`, "x\U0001D159": `\uD834\uDD59`,
	} {
		_, errs := CompileRules("backends.deployRules", []Rule{{pattern, ".*"}})
		require.Len(t, errs, 1, "%q", pattern)
		assert.Equal(t, "backends.deployRules[0].source", errs[0].Path)
		assert.Contains(t, errs[0].Message, "which a terminal acts on or draws as nothing: write the escape "+escape+" in its place")
		assert.Equal(t, fielderr.Printable(errs[0].Message), errs[0].Message)
	}
	_, errs := CompileRules("backends.deployRules", []Rule{{`\u202e.*`, ".*"}})
	assert.Empty(t, errs, "the escape is a pattern's own")
}
