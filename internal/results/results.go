// Package results renders what each delivery step did, for a person (Text:
// one screen) and for a script (JSON, with the GraphQL field names as keys).
//
// `dagger call` v0.21.8 prints an object result as its ID
// (tests/engine-facts.md), so every result object of the module carries these
// two renderings as fields, computed when the object is made: reading a field
// costs no module call.
//
// Every value a Text shows that a server or a file wrote (a webhook's
// message, an entry's name or outputDir, a warning) is fielderr.Printable:
// a Text reaches a terminal or a CI log, where a line feed or an ESC
// sequence of the value's own could forge a line.
package results

import (
	"encoding/json"
	"fmt"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// PushedImage is one pushed image under one tag.
type PushedImage struct {
	Ref        string `json:"ref"`
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	Digest     string `json:"digest"`
	Outcome    string `json:"outcome"`
}

// Release is the images a publish pushed.
type Release struct {
	Frontend   []PushedImage `json:"frontend"`
	Backend    []PushedImage `json:"backend"`
	CodeAsData []PushedImage `json:"codeAsData"`
	Signed     bool          `json:"signed"`
	Sboms      []string      `json:"sboms,omitempty"` // file names in the sboms directory
}

// Text lists each image's references, one a line.
func (r Release) Text() string {
	var b strings.Builder
	for _, group := range []struct {
		kind string
		refs []PushedImage
	}{{"frontend", r.Frontend}, {"backend", r.Backend}, {"codeasdata", r.CodeAsData}} {
		for i, ref := range group.refs {
			label := ""
			if i == 0 {
				label = group.kind
			}
			if ref.Outcome != "" {
				fmt.Fprintf(&b, "%-11s %-9s %s\n", label, ref.Outcome, ref.Ref)
			} else {
				fmt.Fprintf(&b, "%-11s %s\n", label, ref.Ref)
			}
		}
	}
	if r.Signed {
		b.WriteString("signed with cosign\n")
	}
	if len(r.Sboms) > 0 {
		b.WriteString("SBOMs: " + strings.Join(r.Sboms, ", ") + "\n")
	}
	if b.Len() == 0 {
		return "no image was published\n"
	}
	return b.String()
}

// Receipt is one deployment request.
type Receipt struct {
	Status          int      `json:"status"`
	Message         string   `json:"message"`
	Url             string   `json:"url"`
	PayloadSha256   string   `json:"payloadSha256"`
	Images          []string `json:"images"`
	SentAt          string   `json:"sentAt"`
	DurationMs      int      `json:"durationMs"`
	ConnectAttempts int      `json:"connectAttempts"`
	Warnings        []string `json:"warnings"`
}

// Text says what was sent where and what came back, the warnings last.
func (r Receipt) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deployed: %d %s\n", r.Status, fielderr.Printable(r.Message))
	fmt.Fprintf(&b, "webhook:  %s\n", fielderr.Printable(r.Url))
	fmt.Fprintf(&b, "payload:  sha256 %s\n", r.PayloadSha256)
	if len(r.Images) == 0 {
		b.WriteString("images:   none\n")
	}
	for i, im := range r.Images {
		label := ""
		if i == 0 {
			label = "images:"
		}
		fmt.Fprintf(&b, "%-9s %s\n", label, fielderr.Printable(im))
	}
	fmt.Fprintf(&b, "sent at %s in %d ms, %s\n", r.SentAt, r.DurationMs, plural(r.ConnectAttempts, "connection attempt"))
	b.WriteString(warnings(r.Warnings))
	return b.String()
}

// SnapshotEntry is what snapshot-push did for one entry.
type SnapshotEntry struct {
	Name         string `json:"name"`
	OutputDir    string `json:"outputDir"`
	Branch       string `json:"branch"`
	Outcome      string `json:"outcome"`
	Changed      bool   `json:"changed"`
	Commit       string `json:"commit"`
	PushAttempts int    `json:"pushAttempts"`
}

// SnapshotReport is what snapshot-push did.
type SnapshotReport struct {
	Entries []SnapshotEntry `json:"entries"`
}

// Text is one line an entry: where it went and what happened.
func (r SnapshotReport) Text() string {
	if len(r.Entries) == 0 {
		return "no entry has a git section\n"
	}
	var b strings.Builder
	for i, e := range r.Entries {
		fmt.Fprintf(&b, "[%d] %s: %s → %s: %s", i, fielderr.Printable(e.Name), fielderr.Printable(e.OutputDir), fielderr.Printable(e.Branch), fielderr.Printable(e.Outcome))
		if e.Commit != "" {
			fmt.Fprintf(&b, " (%s)", short(e.Commit))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// PlanImage is one backend image of a plan.
type PlanImage struct {
	Image    string   `json:"image"`
	Rules    []int    `json:"rules"`
	Backends []string `json:"backends"`
}

// PlanBackend is one backend of a plan.
type PlanBackend struct {
	Name   string   `json:"name"`
	Images []string `json:"images"`
	Rules  []int    `json:"rules"`
}

// Plan is where each backend image goes; its text is rules.Plan.Table.
type Plan struct {
	Images   []PlanImage   `json:"images"`
	Backends []PlanBackend `json:"backends"`
	Warnings []string      `json:"warnings"`
}

// Build is what a build makes. Its outputs are built when first used
// (exported, or made into images), concurrently off one install.
type Build struct {
	Outputs       []string `json:"-"` // dist/web (npm run build:draw), …
	HasCodeAsData bool     `json:"hasCodeAsData"`
	DrawVersion   string   `json:"drawVersion"`
	Warnings      []string `json:"warnings"` // what the user may want to change: an unpinned install
}

// Text names the outputs and the design-tool version, the warnings last.
func (b Build) Text() string {
	s := "outputs: " + fielderr.Printable(strings.Join(b.Outputs, ", ")) + "\n" // the project's declared inputs among them
	if b.DrawVersion != "" {
		s += "draw_version " + fielderr.Printable(b.DrawVersion) + "\n"
	}
	return s + warnings(b.Warnings)
}

func warnings(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "warning: %s\n", fielderr.Printable(w))
	}
	return b.String()
}

// SnapshotDir is one entry's outputDir as the toolkit wrote it.
type SnapshotDir struct {
	Name      string `json:"name"`
	OutputDir string `json:"outputDir"`
	Files     int    `json:"files"`
	Pushed    bool   `json:"pushed"` // it has a git section: push commits it
}

// Snapshot is what the toolkit's snapshot wrote.
type Snapshot struct {
	Entries []SnapshotDir `json:"entries"`
}

// Text is one line an entry.
func (s Snapshot) Text() string {
	var b strings.Builder
	for i, e := range s.Entries {
		fmt.Fprintf(&b, "[%d] %s: %s, %s", i, fielderr.Printable(e.Name), fielderr.Printable(e.OutputDir), plural(e.Files, "file"))
		if e.Pushed {
			b.WriteString(" (git section: push commits it)")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Delivery is a whole run: the images pushed, the deployment sent, and
// where the call's time went.
type Delivery struct {
	Build   Build      `json:"build"`
	Release Release    `json:"release"`
	Receipt Receipt    `json:"receipt"`
	Steps   []StepTime `json:"steps"`
}

// StepTime is how long one step of a delivery took in its call: what a CI
// log shows of where a run's time went, without the engine's progress.
type StepTime struct {
	Step string `json:"step"`
	Ms   int64  `json:"ms"`
}

// Text is the release, then the receipt, then the steps' times, then the
// build's warnings.
func (d Delivery) Text() string {
	s := d.Release.Text() + d.Receipt.Text()
	if len(d.Steps) > 0 {
		times := make([]string, len(d.Steps))
		for i, st := range d.Steps {
			times[i] = fmt.Sprintf("%s %.1f s", st.Step, float64(st.Ms)/1000)
		}
		s += "steps:    " + strings.Join(times, " · ") + "\n"
	}
	return s + warnings(d.Build.Warnings)
}

// JSON is v as indented JSON, ending in a line feed, for a terminal as much
// as for jq.
func JSON(v any) string {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil { // only plain data reaches here
		panic(err)
	}
	// a value read from a file or a server may hold U+202E or U+009B, which
	// JSON allows raw in a string: escaped, they mean the same
	return fielderr.PrintableJSON(out) + "\n"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
