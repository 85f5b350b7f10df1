package rules

import (
	"dagger/lowcode-pipeline/internal/fielderr"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Rule maps images whose reference matches Source to backends whose name
// matches Target.
type Rule struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Input is what a plan is made from: the payload's images and rules, and the
// names of the instance's backends.
type Input struct {
	Images      []string
	Rules       []Rule
	Backends    []string
	PlanTimeout time.Duration // for all the matching; zero means DefaultPlanTimeout
}

// ImageRoute says where one image goes and through which rules (indexes into
// the payload's deployRules).
type ImageRoute struct {
	Image    string   `json:"image"`
	Rules    []int    `json:"rules"`
	Backends []string `json:"backends"`
}

// BackendAssignment says what one backend receives. More than one image is a
// conflict, reported in Plan.Errors.
type BackendAssignment struct {
	Backend string   `json:"backend"`
	Images  []string `json:"images"`
	Rules   []int    `json:"rules"`
}

// Plan is the outcome of applying the deploy rules.
type Plan struct {
	Images   []ImageRoute        `json:"images"`
	Backends []BackendAssignment `json:"backends"`
	Errors   []string            `json:"errors"`
	Warnings []string            `json:"warnings"`
}

// OK reports whether the plan can be deployed as it is.
func (p *Plan) OK() bool { return len(p.Errors) == 0 }

// CompiledRule is a rule whose two patterns compiled.
type CompiledRule struct {
	Rule
	source, target *matcher
}

// CompileRules compiles every rule, reporting each bad pattern under
// path[i].source or path[i].target.
func CompileRules(path string, rs []Rule) ([]CompiledRule, fielderr.List) {
	var errs fielderr.List
	out := make([]CompiledRule, len(rs))
	for i, r := range rs {
		out[i].Rule = r
		for _, f := range []struct {
			name, pattern string
			dst           **matcher
		}{{"source", r.Source, &out[i].source}, {"target", r.Target, &out[i].target}} {
			re, err := Compile(f.pattern)
			if err == nil {
				err = checkShown(f.pattern)
			}
			if err != nil {
				errs.Addf(fielderr.Join(fielderr.Index(path, i), f.name), "invalid regular expression %s: %v", fielderr.Quote(f.pattern), err)
				continue
			}
			*f.dst = newMatcher(f.pattern, re)
		}
	}
	return out, errs
}

// checkShown refuses a pattern holding a character fielderr.Printable
// escapes (a control, a bidirectional override, one drawn as nothing): the
// payload's json, which deploy sends byte for byte, would carry it as it
// is to every terminal that prints it. The escape stands for it.
func checkShown(pattern string) error {
	i := strings.IndexFunc(pattern, fielderr.Unprintable)
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(pattern[i:])
	escape := fmt.Sprintf(`\u%04X`, r)
	if hi, lo := utf16.EncodeRune(r); r > 0xffff {
		escape = fmt.Sprintf(`\u%04X\u%04X`, hi, lo) // its UTF-16 halves, as a pattern without the u flag reads it
	}
	return fmt.Errorf("it holds U+%04X, which a terminal acts on or draws as nothing: write the escape %s in its place", r, escape)
}

// Build applies the rules: each image goes to the union of the targets of all
// rules whose source matches it, each distinct image tested once per rule.
// Rule and backend-name problems, and matching past the plan's time limit,
// are returned as the error; deployment problems (conflicts, images that
// reach no backend) are in Plan.Errors.
func Build(in Input) (*Plan, error) {
	if err := checkBackends(in.Backends); err != nil {
		return nil, err
	}
	compiled, errs := CompileRules("backends.deployRules", in.Rules)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	images := uniqueImages(in.Images)
	limit := in.PlanTimeout
	if limit <= 0 {
		limit = DefaultPlanTimeout
	}
	b := &budget{deadline: time.Now().Add(limit), limit: limit, images: len(images), rules: len(compiled)}
	targets, err := matchTargets(compiled, in.Backends, b)
	if err != nil {
		return nil, err
	}
	sources, err := matchSources(compiled, images, b)
	if err != nil {
		return nil, err
	}
	return assemble(in, images, sources, targets), nil
}

func checkBackends(names []string) error {
	var errs fielderr.List
	if len(names) == 0 {
		errs.Addf("backends", "no backend names given: a plan needs the names of the instance's backends")
	}
	seen := map[string]bool{}
	for i, n := range names {
		switch {
		case n == "":
			errs.Addf(fielderr.Index("backends", i), "empty backend name")
		case strings.TrimSpace(n) == "":
			errs.Addf(fielderr.Index("backends", i), "backend %s is white space alone: write the backend's name", fielderr.Quote(n))
		case fielderr.HoldsLogin(n):
			errs.Addf(fielderr.Index("backends", i), "backend %s holds a login (user:password@host), which the plan shows: write the backend's name", fielderr.Quote(n))
		case seen[n]:
			errs.Addf(fielderr.Index("backends", i), "backend %s is listed twice", fielderr.Quote(n))
		}
		seen[n] = true
	}
	return errs.Err()
}

// matchTargets computes, once per rule, the backends its target matches.
func matchTargets(rs []CompiledRule, backends []string, b *budget) ([][]bool, error) {
	out := make([][]bool, len(rs))
	subjects := make([]subject, len(backends))
	for j, name := range backends {
		subjects[j] = newSubject(name)
	}
	for i, r := range rs {
		out[i] = make([]bool, len(backends))
		for j := range backends {
			ok, err := r.target.match(subjects[j], b.left())
			if err == nil {
				err = b.check()
			}
			if err != nil {
				return nil, b.exceeded()
			}
			out[i][j] = ok
		}
	}
	return out, nil
}

// matchSources tests every rule's source against every image, spread over the
// machine's cores: this is the images × rules part of a plan.
func matchSources(rs []CompiledRule, images []string, b *budget) ([][]int, error) {
	out := make([][]int, len(images))
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	stop := make(chan struct{})
	for range max(1, min(runtime.GOMAXPROCS(0), len(images))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				subj := newSubject(images[i])
				for k, r := range rs {
					ok, err := r.source.match(subj, b.left())
					if err == nil && r.source.kind == notLiteral {
						err = b.check()
					}
					if err != nil {
						err = b.exceeded()
						mu.Lock()
						if firstErr == nil {
							firstErr = err
							close(stop)
						}
						mu.Unlock()
						return
					}
					if ok {
						out[i] = append(out[i], k)
					}
				}
				b.done.Add(1)
			}
		}()
	}
feed:
	for i := range images {
		select {
		case next <- i:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	return out, firstErr
}

func uniqueImages(images []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, im := range images {
		if !seen[im] {
			seen[im] = true
			out = append(out, im)
		}
	}
	return out
}

func assemble(in Input, images []string, sources [][]int, targets [][]bool) *Plan {
	p := &Plan{Images: []ImageRoute{}, Backends: []BackendAssignment{}, Errors: []string{}, Warnings: []string{}}
	byBackend := make([]BackendAssignment, len(in.Backends))
	for j, b := range in.Backends {
		byBackend[j] = BackendAssignment{Backend: b, Images: []string{}, Rules: []int{}}
	}
	ruleUsed := make([]bool, len(in.Rules))
	for i, im := range images {
		route := ImageRoute{Image: im, Rules: sources[i], Backends: []string{}}
		if route.Rules == nil {
			route.Rules = []int{}
		}
		for j, b := range in.Backends {
			var via []int
			for _, k := range route.Rules {
				if targets[k][j] {
					via = append(via, k)
				}
			}
			if len(via) == 0 {
				continue
			}
			route.Backends = append(route.Backends, b)
			byBackend[j].Images = append(byBackend[j].Images, im)
			byBackend[j].Rules = mergeSorted(byBackend[j].Rules, via)
		}
		for _, k := range route.Rules {
			ruleUsed[k] = true
		}
		switch {
		case len(route.Rules) == 0:
			p.Errors = append(p.Errors, fmt.Sprintf("image %s reaches no backend: no rule's source matches it", fielderr.Quote(im)))
		case len(route.Backends) == 0:
			p.Errors = append(p.Errors, fmt.Sprintf("image %s reaches no backend: rules %v match it but their targets match none of %s", fielderr.Quote(im), route.Rules, quoteAll(in.Backends)))
		}
		p.Images = append(p.Images, route)
	}
	for _, a := range byBackend {
		switch {
		case len(a.Images) > 1:
			p.Errors = append(p.Errors, fmt.Sprintf("backend %s would receive %d different images: %s (through rules %v)", fielderr.Quote(a.Backend), len(a.Images), quoteAll(a.Images), a.Rules))
		case len(a.Images) == 0:
			p.Warnings = append(p.Warnings, fmt.Sprintf("backend %s receives no image", fielderr.Quote(a.Backend)))
		}
	}
	for k, used := range ruleUsed {
		if !used {
			p.Warnings = append(p.Warnings, fmt.Sprintf("rule %d (source %s) matches no image", k, fielderr.Quote(in.Rules[k].Source)))
		}
	}
	p.Backends = byBackend
	return p
}

func mergeSorted(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// budget is a plan's time limit for matching. Every pattern that could
// backtrack without end is refused when compiled, so the limit is a
// backstop: only a slow machine or a huge plan reaches it, and its error
// says so rather than blame a rule.
type budget struct {
	deadline      time.Time
	limit         time.Duration
	images, rules int
	done          atomic.Int64 // images matched against every rule
}

// left is what remains of the plan's time, at least a nanosecond.
func (b *budget) left() time.Duration { return max(time.Until(b.deadline), time.Nanosecond) }

// check fails once the deadline has passed.
func (b *budget) check() error {
	if time.Now().Before(b.deadline) {
		return nil
	}
	return errPastPlan
}

// exceeded is the plan's time-limit error.
func (b *budget) exceeded() error {
	return fmt.Errorf("the plan ran past its time limit (--plan-timeout %s) with %d of its %d images matched against its %d rules: the machine was slower or the plan larger than the limit allows (no rule can take time without end: such patterns are refused); give a longer --plan-timeout",
		b.limit, b.done.Load(), b.images, b.rules)
}

// ErrorSummary lists the plan's errors, the first fielderr.MaxProblems of them.
func (p *Plan) ErrorSummary() string {
	shown := min(len(p.Errors), fielderr.MaxProblems)
	lines := make([]string, shown)
	for i, e := range p.Errors[:shown] {
		lines[i] = "  - " + fielderr.Cut(e, 4*fielderr.MaxValue)
	}
	if len(p.Errors) > shown {
		lines = append(lines, fmt.Sprintf("  … and %d more", len(p.Errors)-shown))
	}
	return strings.Join(lines, "\n")
}

// Err is nil for a deployable plan, and otherwise ErrPlan with the plan's
// errors listed.
func (p *Plan) Err() error {
	if p.OK() {
		return nil
	}
	return fmt.Errorf("%w:\n%s", ErrPlan, p.ErrorSummary())
}

// ErrPlan is wrapped by errors about a plan that cannot be deployed.
var ErrPlan = errors.New("the deploy rules do not give a deployable plan")

// quoteAll is ss as a list of quoted values, each shown as fielderr.Quote
// shows it.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fielderr.Quote(s)
	}
	return "[" + strings.Join(q, " ") + "]"
}
