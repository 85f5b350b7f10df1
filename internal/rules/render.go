package rules

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Table renders the plan for a terminal: one row per backend, then the
// images that reach nothing, then errors and warnings. Every name, image and
// line is fielderr.Printable: --backend names and patterns are the user's,
// and a tab or an ESC of theirs would break the columns or the terminal.
func (p *Plan) Table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tIMAGE\tRULES")
	for _, a := range p.Backends {
		if len(a.Images) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\n", fielderr.Printable(a.Backend))
			continue
		}
		for _, im := range a.Images {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", fielderr.Printable(a.Backend), fielderr.Printable(im), joinInts(a.Rules))
		}
	}
	for _, r := range p.Images {
		if len(r.Backends) == 0 {
			fmt.Fprintf(tw, "-\t%s\t%s\n", fielderr.Printable(r.Image), joinInts(r.Rules))
		}
	}
	tw.Flush()
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "  - %s\n", fielderr.Printable(l))
		}
	}
	section("errors", p.Errors)
	section("warnings", p.Warnings)
	return b.String()
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
