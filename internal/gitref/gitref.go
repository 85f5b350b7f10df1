// Package gitref holds git's rules for a branch name: the one place the
// configuration check and the git step ask whether git takes a name as a
// branch, so that a name git refuses, or one git lets through where it
// should not (a branch called HEAD pushed to an empty remote), never
// reaches a clone or a push.
package gitref

import (
	"fmt"
	"strings"

	"dagger/lowcode-pipeline/internal/fielderr"
)

// Allowed says in a few words what a branch name may be, for an error.
const Allowed = "a name `git check-ref-format --branch` accepts, e.g. main or snapshots/main"

// CheckBranch refuses a name git would not create as a branch, saying which
// of git's rules it breaks: `git check-ref-format --branch <name>` run
// outside a repository (builtin/check-ref-format.c, check_branch_ref and
// refs.c's check_refname_format and check_refname_component), plus "@"
// alone, which git accepts there but reads as HEAD wherever a revision goes
// (gitrevisions(7)), so no command could name that branch. The verdict is
// git's for every other name (TestCheckBranchAgreesWithGit, FuzzCheckBranch).
func CheckBranch(name string) error {
	why := breaks(name)
	if why == "" {
		return nil
	}
	return fmt.Errorf("not a branch name git accepts (%s): %s", why, Allowed)
}

// breaks is the first of git's rules name breaks, or "".
func breaks(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case strings.HasPrefix(name, "-"):
		return `it starts with "-", which git reads as an option`
	case name == "HEAD":
		return "HEAD names the commit checked out, never a branch"
	case name == "@":
		return `"@" alone is git's shorthand for HEAD`
	}
	if i := strings.IndexFunc(name, badRune); i >= 0 {
		return fmt.Sprintf("it holds %s: no space, control character, or any of ~ ^ : ? * [ \\", fielderr.Quote(name[i:i+1]))
	}
	switch {
	case strings.Contains(name, ".."):
		return `it holds ".."`
	case strings.Contains(name, "@{"):
		return `it holds "@{"`
	case strings.HasSuffix(name, "."):
		return `it ends with "."`
	}
	for _, c := range strings.Split(name, "/") {
		switch {
		case c == "":
			return `a folder of it is empty: no "/" at the start or the end, no "//"`
		case strings.HasPrefix(c, "."):
			return fmt.Sprintf("its part %s starts with \".\"", fielderr.Quote(c))
		case strings.HasSuffix(c, ".lock"):
			return fmt.Sprintf("its part %s ends with \".lock\", the suffix of git's lock files", fielderr.Quote(c))
		}
	}
	return ""
}

// badRune is refs.c's refname_disposition 4 (an ASCII control character,
// DEL, space, ~ ^ : ? [ \) and 5 ('*', refused outside refspec patterns).
// Bytes from 0x80 are git's 0, accepted: git reads bytes, not characters.
func badRune(r rune) bool {
	return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r)
}
