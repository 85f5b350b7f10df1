// Package snapshotconfig reads and checks the snapshot configuration file
// (typically res/snapshot-config.json) and renders commit messages.
package snapshotconfig

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"dagger/lowcode-pipeline/internal/fielderr"
	"dagger/lowcode-pipeline/internal/gitref"
	"dagger/lowcode-pipeline/internal/jsontree"
	"dagger/lowcode-pipeline/internal/loopback"
	"dagger/lowcode-pipeline/internal/redact"
)

// DefaultPath is where projects keep the file.
const DefaultPath = "res/snapshot-config.json"

// OtherConfigs are the files beside it a project may keep other snapshot
// configurations in, whose tokens are scrubbed too (ScrubIfConfig).
const OtherConfigs = "res/**/*.json"

// Entry is one snapshot job.
type Entry struct {
	Snapshooter Snapshooter `json:"snapshooter"`
	Git         *Git        `json:"git,omitempty"`
	// Index is the entry's position in the file, for messages.
	Index int `json:"-"`
}

type Snapshooter struct {
	Name      string   `json:"name"`
	RootTags  []string `json:"rootTags"`
	Exclude   []string `json:"exclude,omitempty"`
	OutputDir string   `json:"outputDir"`
}

type Git struct {
	Repo          string `json:"repo"`
	Branch        string `json:"branch"`
	CommitMessage string `json:"commitMessage"`
}

// ErrNoGit says a configuration has nothing to commit.
var ErrNoGit = errors.New("no entry has a git section: nothing to push (use snapshot to only write the files)")

// Pushed are the entries with a git section, the ones a push commits; it
// fails with ErrNoGit when there are none, and names every git.repo on
// loopback: git runs in a container of the engine, whose loopback has no
// repository (tests/engine-facts.md, facts 22, 24). Only a push refuses it:
// snapshot alone does no git work.
func Pushed(entries []Entry) ([]Entry, error) {
	var out []Entry
	var errs fielderr.List
	for _, e := range entries {
		if e.Git == nil {
			continue
		}
		out = append(out, e)
		if u, err := url.Parse(e.Git.Repo); err == nil && loopback.Host(u.Host) {
			errs.Addf(fmt.Sprintf("[%d].git.repo", e.Index), "%s names this machine, but git runs in a container of the engine, whose loopback has no repository: "+
				"give an address the engine reaches; nothing was pushed", redact.Quote(e.Git.Repo))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, ErrNoGit
	}
	return out, nil
}

// Remote splits git.repo into the address to clone (no credentials) and the
// credentials the spec allows in its user-info: https://<token>@… gives the
// token alone, https://<user>:<token>@… the user name git must send with it.
func (g *Git) Remote() (cloneURL, username, token string) {
	u, err := url.Parse(g.Repo)
	if err != nil {
		return g.Repo, "", ""
	}
	if u.User != nil {
		token = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			username, token = token, pw
		}
		u.User = nil
	}
	return u.String(), username, token
}

// tagPattern is a platform identifier as the vendor writes it: 20
// lower-case hexadecimal characters (018a88a4d5312b1501c6).
var tagPattern = regexp.MustCompile(`^[0-9a-f]{20}$`)

// Parse reads the file strictly and reports every problem with its entry
// index and field.
func Parse(data []byte) ([]Entry, error) {
	tree, err := jsontree.Parse(data)
	if err != nil {
		return nil, err
	}
	var errs fielderr.List
	arr, ok := tree.([]any)
	if !ok {
		errs.Addf("", "the file must be a JSON array of snapshot entries, got %s", jsontree.TypeName(tree))
		return nil, errs
	}
	if len(arr) == 0 {
		errs.Addf("", "no snapshot entries: the array is empty")
	}
	entries := make([]Entry, len(arr))
	for i, v := range arr {
		entries[i].Index = i
		p := fmt.Sprintf("[%d]", i)
		obj := object(&errs, p, v, "snapshooter", "git")
		if obj == nil {
			continue
		}
		if sv, ok := obj.Fields["snapshooter"]; ok {
			entries[i].Snapshooter = snapshooter(&errs, p+".snapshooter", sv)
		} else {
			errs.Addf(p+".snapshooter", "required: {\"name\", \"rootTags\", \"outputDir\"}")
		}
		if gv, ok := obj.Fields["git"]; ok {
			entries[i].Git = gitSection(&errs, p+".git", gv)
		}
	}
	checkOutputDirs(&errs, entries)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return entries, nil
}

func object(errs *fielderr.List, p string, v any, known ...string) *jsontree.Object {
	obj, ok := v.(*jsontree.Object)
	if !ok {
		errs.Addf(p, "must be an object, got %s", jsontree.TypeName(v))
		return nil
	}
	for _, k := range obj.Keys {
		if !slices.Contains(known, k) {
			errs.Addf(fielderr.Join(p, k), "unknown key; allowed here: %s", strings.Join(known, ", "))
		}
	}
	return obj
}

func str(errs *fielderr.List, obj *jsontree.Object, p, key, what string) string {
	v, ok := obj.Fields[key]
	p = fielderr.Join(p, key)
	if !ok {
		errs.Addf(p, "required: %s", what)
		return ""
	}
	s, ok := v.(string)
	switch {
	case !ok:
		errs.Addf(p, "must be a string (%s), got %s", what, jsontree.TypeName(v))
	case s == "":
		errs.Addf(p, "must not be empty: %s", what)
		return "" // one problem a field: the field's own rules need not say it again
	case strings.TrimSpace(s) == "":
		errs.Addf(p, "%s is white space alone, which no one sees: write %s", fielderr.Quote(s), what)
		return ""
	}
	return s
}

// shownStr is str for a value the snapshot's report and log show (a name, a
// folder, a commit message), which holds no login. git.repo's own check says
// where its token goes (checkRepo); a branch holds no ':' (git's ref rules),
// so no user:password, and release/v1@2 is a name: both read str.
func shownStr(errs *fielderr.List, obj *jsontree.Object, p, key, what string) string {
	s := str(errs, obj, p, key, what)
	if fielderr.HoldsLogin(s) {
		errs.Addf(fielderr.Join(p, key), "%s holds a login (user:password@host), which the snapshot's report and log would show: write %s without it (a git token goes only in --git-token)", fielderr.Quote(s), what)
		return ""
	}
	return s
}

func snapshooter(errs *fielderr.List, p string, v any) Snapshooter {
	var s Snapshooter
	obj := object(errs, p, v, "name", "rootTags", "exclude", "outputDir")
	if obj == nil {
		return s
	}
	s.Name = shownStr(errs, obj, p, "name", "the label of the snapshot job")
	if err := checkControls(s.Name, false); err != nil {
		errs.Addf(p+".name", "%s: %v", fielderr.Quote(s.Name), err)
	}
	if rv, ok := obj.Fields["rootTags"]; ok {
		s.RootTags = tags(errs, p+".rootTags", rv)
		if s.RootTags != nil && len(s.RootTags) == 0 {
			errs.Addf(p+".rootTags", "must list at least one root folder or project identifier")
		}
	} else {
		errs.Addf(p+".rootTags", "required: the identifiers (strings of 20 hexadecimal characters) of the root folders or projects to save")
	}
	if ev, ok := obj.Fields["exclude"]; ok {
		s.Exclude = tags(errs, p+".exclude", ev)
	}
	s.OutputDir = shownStr(errs, obj, p, "outputDir", "the directory, relative to the repository, where patch files are written")
	if s.OutputDir != "" {
		if err := checkOutputDir(s.OutputDir); err != nil {
			errs.Addf(p+".outputDir", "%s: %v", fielderr.Quote(s.OutputDir), err)
		}
	}
	return s
}

func tags(errs *fielderr.List, p string, v any) []string {
	arr, ok := v.([]any)
	if !ok {
		errs.Addf(p, "must be an array of identifiers (strings of 20 hexadecimal characters), got %s", jsontree.TypeName(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	seen := map[string]bool{}
	for i, e := range arr {
		ep := fielderr.Index(p, i)
		switch t := e.(type) {
		case string:
			if lower := strings.ToLower(t); lower != t && tagPattern.MatchString(lower) {
				errs.Addf(ep, "%s: write the identifier in lower case, as the platform does: %q", fielderr.Quote(t), lower)
			} else if !tagPattern.MatchString(t) {
				errs.Addf(ep, "%s is not an identifier: want exactly 20 hexadecimal characters (0-9, a-f), e.g. 018a88a4d5312b1501c6", fielderr.Quote(t))
			} else if seen[t] {
				errs.Addf(ep, "%s is listed twice", t)
			}
			seen[t] = true
			out = append(out, t)
		default:
			if n, isNum := e.(interface{ String() string }); isNum && jsontree.TypeName(e) == "number" {
				errs.Addf(ep, "the number %s must be written as a string (\"…\"): identifiers are 20 hexadecimal characters, and as JSON numbers lose digits past 2^53", fielderr.Cut(n.String(), fielderr.MaxValue))
			} else {
				errs.Addf(ep, "must be a string of 20 hexadecimal characters, got %s", jsontree.TypeName(e))
			}
			out = append(out, "") // keeps the count: the error above already fails the file
		}
	}
	return out
}

func checkOutputDir(dir string) error {
	if err := checkControls(dir, false); err != nil {
		return err
	}
	clean := path.Clean(dir)
	switch {
	case strings.ContainsRune(dir, utf8.RuneError):
		return fmt.Errorf("holds U+FFFD, which is what invalid UTF-8 in the file becomes: write the folder's name in UTF-8")
	case strings.HasPrefix(dir, ":"):
		return fmt.Errorf("must not start with \":\" (git would read it as pathspec magic)")
	case strings.ContainsAny(dir, "*?[]"):
		return fmt.Errorf("must not hold * ? [ or ] (a folder, not a pattern)")
	case slices.ContainsFunc(strings.Split(clean, "/"), func(c string) bool { return strings.HasPrefix(c, "-") }):
		return fmt.Errorf("no folder in it may start with \"-\" (commands would read it as an option)")
	case strings.Contains(dir, `\`):
		return fmt.Errorf("use forward slashes")
	case path.IsAbs(dir):
		return fmt.Errorf("must be relative to the repository folder, not absolute")
	case clean == ".":
		return fmt.Errorf("must be a folder inside the repository, not the repository itself (the snapshot replaces the folder's contents)")
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return fmt.Errorf("must stay inside the repository (no ..)")
	case slices.ContainsFunc(strings.Split(clean, "/"), readsAsGit):
		return fmt.Errorf("must not be inside .git, in any spelling a file system may read as .git (letter case, ignorable characters, full-width or dotless letters, trailing dots or spaces, GIT~1, an NTFS stream after :)")
	}
	return nil
}

// checkControls refuses a control character (C0, DEL, C1) in a value that
// a summary, a log or git log prints: a terminal acts on it (ESC and CSI,
// U+009B, start escape sequences; BS, CR and DEL rewrite what was printed;
// BEL rings). A commit message's lines keep their line feeds.
// Nor a character fielderr.Printable escapes (a bidirectional override,
// one a terminal draws as nothing): the snapshot's fields hold the value as
// it is, and `dagger call … entries name` prints a field raw.
func checkControls(s string, lines bool) error {
	i := strings.IndexFunc(s, func(r rune) bool { return !(lines && r == '\n') && fielderr.Unprintable(r) })
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	if !unicode.IsControl(r) {
		return fmt.Errorf("holds U+%04X, a character that reorders text or that a terminal draws as nothing or as a plain space, which the snapshot's fields would show as it is: remove it", r)
	}
	allowed := "no control character (C0, DEL or C1): a terminal printing it would act on it"
	if lines {
		allowed = "line feeds alone are allowed, no other control character (C0, DEL or C1): a terminal printing it would act on it"
	}
	return fmt.Errorf("holds the control character U+%04X; %s", r, allowed)
}

// maxBranchPart is the longest part of a branch name (between its "/") a
// clone can hold: git keeps a branch as a file of that name, and takes its
// lock as the name plus ".lock", within a file system's 255 bytes.
const maxBranchPart = 255 - len(".lock")

// checkBranchParts refuses a branch whose part is longer than a file name
// can be, which git's name rules take but no checkout can create.
func checkBranchParts(branch string) error {
	for _, part := range strings.Split(branch, "/") {
		if len(part) > maxBranchPart {
			return fmt.Errorf("a part of it is %d bytes; git keeps a branch as a file, and a file name holds at most %d with git's .lock: shorten it", len(part), maxBranchPart)
		}
	}
	return nil
}

// readsAsGit: a folder name that git, or a case- or Unicode-folding file
// system, may take for .git (fsName; Windows also answers to 8.3 names).
func readsAsGit(name string) bool {
	// NTFS reads name:stream (.git::$INDEX_ALLOCATION) as name, and so does
	// git's own check of such a name (core.protectNTFS)
	name, _, _ = strings.Cut(name, ":")
	n := fsName(name)
	return n == ".git" || strings.HasPrefix(n, "git~") && len(n) > 4 && strings.Trim(n[4:], "0123456789") == ""
}

// fsName is a folder name as a case- or Unicode-folding file system reads
// it: macOS's ignores case, Unicode normalization (é and e + U+0301) and
// zero-width characters (HFS+); Windows' ignores case and trailing dots and
// spaces. Compatibility forms (full-width letters) and the dotted and
// dotless i are folded too, to be safe. Two names with one fsName may be one
// folder on a checkout.
func fsName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFKC.String(name) {
		switch {
		case unicode.Is(unicode.Cf, r): // zero-width and other format characters
		case r == 'ı' || r == 'İ':
			b.WriteRune('i')
		default:
			b.WriteRune(r)
		}
	}
	return norm.NFKC.String(cases.Fold().String(strings.TrimRight(b.String(), ". ")))
}

// checkOutputDirs refuses two entries writing the same folder, or one inside
// another's: each snapshot replaces its folder whole. Names are compared as
// a case- or Unicode-folding file system reads them (fsName): "Snapshot" and
// "snapshot" are one folder on a macOS or Windows checkout. Sorted by path
// plus "/", a folder's descendants follow it, so one pass with a stack of
// ancestors finds every overlap in O(n log n).
func checkOutputDirs(errs *fielderr.List, entries []Entry) {
	type dir struct {
		key   string // the cleaned path's names, each as fsName reads it, and "/"
		index int
	}
	var dirs []dir
	for i, e := range entries {
		if e.Snapshooter.OutputDir != "" {
			names := strings.Split(path.Clean(e.Snapshooter.OutputDir), "/")
			for j, n := range names {
				names[j] = fsName(n)
			}
			dirs = append(dirs, dir{strings.Join(names, "/") + "/", i})
		}
	}
	slices.SortStableFunc(dirs, func(a, b dir) int { return strings.Compare(a.key, b.key) })
	var ancestors []dir
	var found []fielderr.Error
	for _, d := range dirs {
		for len(ancestors) > 0 && !strings.HasPrefix(d.key, ancestors[len(ancestors)-1].key) {
			ancestors = ancestors[:len(ancestors)-1]
		}
		if len(ancestors) > 0 {
			a := ancestors[len(ancestors)-1]
			later, earlier := max(a.index, d.index), min(a.index, d.index)
			found = append(found, fielderr.Error{Path: fmt.Sprintf("[%d].snapshooter.outputDir", later),
				Message: overlap(path.Clean(entries[later].Snapshooter.OutputDir), earlier, path.Clean(entries[earlier].Snapshooter.OutputDir))})
		}
		ancestors = append(ancestors, d)
	}
	slices.SortStableFunc(found, func(a, b fielderr.Error) int { return strings.Compare(a.Path, b.Path) })
	*errs = append(*errs, found...)
}

// overlap says that later's folder is earlier's, or holds it or is inside
// it, and why when the names differ only as a file system reads them.
func overlap(later string, earlier int, earlierDir string) string {
	msg := fmt.Sprintf("%s overlaps entry [%d]'s %s", fielderr.Quote(later), earlier, fielderr.Quote(earlierDir))
	if a, b := later+"/", earlierDir+"/"; !strings.HasPrefix(a, b) && !strings.HasPrefix(b, a) {
		msg += " on a macOS or Windows checkout, where a name's letter case, Unicode normalization and trailing dots do not count"
	}
	return msg + ": each entry needs its own folder"
}

func gitSection(errs *fielderr.List, p string, v any) *Git {
	g := &Git{}
	obj := object(errs, p, v, "repo", "branch", "commitMessage")
	if obj == nil {
		return g
	}
	g.Repo = str(errs, obj, p, "repo", "the https address of the repository, https://<repository_url>.git")
	if g.Repo != "" {
		if err := checkRepo(g.Repo); err != nil {
			errs.Addf(p+".repo", "%v", err)
		}
	}
	g.Branch = str(errs, obj, p, "branch", "the branch to clone and push")
	if g.Branch != "" {
		err := gitref.CheckBranch(g.Branch)
		if err == nil { // git takes C1 controls: it reads bytes
			err = checkControls(g.Branch, false)
		}
		if err == nil {
			err = checkBranchParts(g.Branch)
		}
		if err != nil {
			errs.Addf(p+".branch", "%s: %v", fielderr.Quote(g.Branch), err)
		}
	}
	g.CommitMessage = shownStr(errs, obj, p, "commitMessage", "the commit message template ({date} and {folder} are replaced)")
	if err := checkControls(g.CommitMessage, true); err != nil {
		errs.Addf(p+".commitMessage", "%s: %v", fielderr.Quote(g.CommitMessage), err)
	}
	return g
}

// DateLayout is {date}: yyyy.MM.dd HH:mm:ss, on the 24-hour clock as the
// platform's toolkit renders it (the interface's "hh" would lose whether it
// was morning or afternoon), every field zero-padded, in UTC: a CI runner's
// local time zone is nobody's.
const DateLayout = "2006.01.02 15:04:05"

// RenderMessage replaces every {date} with now in UTC formatted as
// DateLayout, and every {folder} with the outputDir value.
func RenderMessage(template string, now time.Time, folder string) string {
	return strings.NewReplacer("{date}", now.UTC().Format(DateLayout), "{folder}", folder).Replace(template)
}

// CodeAsData is the folder buildCodeAsData reads the project's own code as
// data from (its --snapshot.dir), and what says so.
type CodeAsData struct {
	Dir  string
	From string // "res/snapshot-config.json [0].snapshooter.outputDir", or the toolkit's default
}

// CodeAsDataFolders are the folders that may hold the project's code as
// data: each entry's outputDir, or defaultDir when there is no
// configuration (entries nil).
func CodeAsDataFolders(entries []Entry, defaultDir string) []string {
	if entries == nil {
		return []string{defaultDir}
	}
	dirs := make([]string, len(entries))
	for i, e := range entries {
		dirs[i] = path.Clean(e.Snapshooter.OutputDir)
	}
	return dirs
}

// FindCodeAsData picks the folder buildCodeAsData reads, from what the
// project holds of CodeAsDataFolders (files: how many entries each holds,
// absent when it is missing): the one entry's outputDir that the project
// holds (an entry with a git section may write another repository), or
// defaultDir without a configuration (config is its path). A folder
// missing or empty, or several, is refused: the toolkit would build the
// image without the project's own code as data and exit 0.
func FindCodeAsData(config string, entries []Entry, defaultDir string, files map[string]int) (CodeAsData, error) {
	const fix = "write it with `dagger call snapshot … changes export --path .` and commit it, or name the folder with `--code-as-data-arg=--snapshot.dir=<folder>`"
	if entries == nil {
		found := CodeAsData{Dir: defaultDir, From: fmt.Sprintf("the toolkit's default, as the project has no %s", config)}
		if files[defaultDir] == 0 {
			return CodeAsData{}, fmt.Errorf("the project's own code as data is read from %s/ (%s), which is missing or empty: buildCodeAsData would build an image without it; %s",
				defaultDir, found.From, fix)
		}
		return found, nil
	}
	var held []CodeAsData
	var named, each []string
	for i, dir := range CodeAsDataFolders(entries, defaultDir) {
		named = append(named, fielderr.Quote(dir))
		if files[dir] > 0 {
			held = append(held, CodeAsData{Dir: dir, From: fmt.Sprintf("%s [%d].snapshooter.outputDir", config, i)})
			each = append(each, fmt.Sprintf("[%d] %s", i, fielderr.Quote(dir)))
		}
	}
	switch len(held) {
	case 1:
		return held[0], nil
	case 0:
		return CodeAsData{}, fmt.Errorf("%s: the project holds none of its entries' outputDirs (%s), or only empty ones: buildCodeAsData would build an image without the project's own code as data; %s",
			config, fielderr.Cut(strings.Join(named, ", "), fielderr.MaxValue), fix)
	}
	return CodeAsData{}, fmt.Errorf("%s: the project holds several entries' outputDirs (%s): buildCodeAsData reads one folder; name it with `--code-as-data-arg=--snapshot.dir=<folder>`",
		config, fielderr.Cut(strings.Join(each, ", "), fielderr.MaxValue))
}

// File is one JSON file of a configuration folder.
type File struct {
	Path string
	Data []byte
}

// ParseFolder reads a configuration given as a folder of JSON files, as
// the toolkit reads a --snapshot.config that names a folder: every file,
// in path order, its entries numbered on from the previous file's, so that
// [i] names one entry of the whole. Each file's problems are named with its
// path; an outputDir is each entry's own across the files.
func ParseFolder(folder string, files []File) ([]Entry, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: a folder with no .json file: no snapshot entries", fielderr.Cut(fielderr.Printable(folder), fielderr.MaxPath))
	}
	var all []Entry
	var errs []error
	for _, f := range files {
		entries, err := Parse(f.Data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", fielderr.Cut(fielderr.Printable(f.Path), fielderr.MaxPath), err))
			continue
		}
		for _, e := range entries {
			e.Index = len(all)
			all = append(all, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var overlaps fielderr.List
	checkOutputDirs(&overlaps, all)
	if err := overlaps.Err(); err != nil {
		return nil, fmt.Errorf("%s (its files' entries numbered on in path order): %w", fielderr.Cut(fielderr.Printable(folder), fielderr.MaxPath), err)
	}
	return all, nil
}

// FolderFile is the one file the toolkit finds in a configuration folder
// (ParseFolder): the module's configuration made of the folder's entries.
const FolderFile = "snapshot-config.json"
