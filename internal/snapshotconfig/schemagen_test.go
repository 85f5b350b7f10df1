package snapshotconfig

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// repoSchemaDescription is the description of git.repo in
// schema/snapshot-config.schema.json: what an editor shows beside it.
const repoSchemaDescription = "The repository's https address, e.g. https://git.example.com/team/code.git, without a placeholder, which nothing fills in: " +
	"the template's (<token>, <repository_url>), a variable ($GIT_TOKEN, ${GIT_TOKEN}, $(GIT_TOKEN), ${{ secrets.GIT_TOKEN }}, $git_token, $$GIT_TOKEN, $env:GIT_TOKEN), " +
	"a token as a log masks it or a pipeline templates it (***, __GIT_TOKEN__, #{GIT_TOKEN}#), " +
	"a README's stand-in (YOUR_TOKEN, TOKEN, password, ghp_xxxx…, /:org, /ORG/, /REPO.git, /your-org), " +
	"an HTML-escaped or percent-encoded < or > (&lt;org&gt;, %3Corg%3E) or a URI template's {owner}, in the user-info also percent-encoded, as git decodes it; " +
	"and without a character no one sees (U+200B, U+FEFF, U+2060: a format or default-ignorable character), which git keeps. " +
	"The spec also allows a token as https://<token>@…, but pass it as a secret instead (push --git-token env://GIT_TOKEN). " +
	"This pattern is written from the pipeline's own check, which refuses the same addresses, but for two things only the pattern refuses: " +
	"white space or a control character anywhere in the address (write a space as %20), and a port without a host name; " +
	"and two only the check refuses: an address in [ ] that is not an IPv6 address, and a character no one sees past U+FFFF (U+E0001)."

// repoSchemaPattern is the JSON Schema pattern (an ECMAScript regular
// expression) of git.repo in schema/snapshot-config.schema.json, written
// from the expressions checkRepo reads placeholders with: an https address
// whose user-info holds only what an address carries, whose port is 1 to
// 65535, with no query, fragment, or @ after the host, and no placeholder
// where checkPlaceholders looks for one. A user name or password is read
// as git reads it, percent-decoded: each character of a placeholder may be
// written %XX.
func repoSchemaPattern() string {
	user := ecmaWriter{raw: userinfoRaw(":"), encoded: true} // up to the first ':'
	token := ecmaWriter{raw: userinfoRaw(""), encoded: true}
	address := ecmaWriter{raw: func(c byte) bool { return c > ' ' && c < 0x7f && c != '?' && c != '#' }}
	const (
		lastAt         = `@[^/?#@]*(?:[/?#]|$)` // the @ that ends the user-info
		userinfo       = `(?:[^/?#]*@)?(?![^/?#]*@)`
		hostUnlessPort = `(?:(?=[^/?#:]*(?::[0-9]*)?(?:[/?#]|$))|[^/?#]*(?=[/?#]|$))` // withoutPortLike
	)
	inUserinfo := `(?!https://(?:` + token.must(powerShellText) + `|` + user.must(placeholderPartText) + `(?::[^/?#]*)?|[^/?#:]*:` +
		token.must(placeholderPartText) + `)` + lastAt + `)`
	inAddress := `(?!https://` + userinfo + hostUnlessPort + `[^?#]*?(?:` + address.must(addressPlaceholderText) + `))`
	unseen := `(?![\s\S]*` + invisibleClass() + `)`
	userinfoChars := `(?:` + ecmaClass(userinfoRaw("")) + `|%[0-9A-Fa-f]{2})*@`
	const (
		// as Go's url.Parse reads a host: %XX only past ASCII (or %25), an
		// IPv6 address in brackets, with a zone after %25
		hostChar = `[0-9A-Za-z\-._~!$&'()*+,;=<>"]|[^\x00-\x9f\s]|%[89A-Fa-f][0-9A-Fa-f]|%25`
		host     = `(?:\[[0-9A-Fa-f:.]*(?:%25(?:[0-9A-Za-z\-._~]|%[0-9A-Fa-f]{2})*)?\]|(?:` + hostChar + `)+)`
		port     = `0*(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])`
		path     = `/(?:[^?#@%\s\x00-\x1f\x7f-\x9f]|%[0-9A-Fa-f]{2})*`
	)
	return `^` + unseen + inUserinfo + inAddress + `https://(?:` + userinfoChars + `)?` + host + `(?::(?:` + port + `)?)?(?:` + path + `)?$`
}

// invisibleClass is an ECMAScript class of the characters checkInvisible
// refuses up to U+FFFF; past it, a pattern read without the u flag sees two
// halves of a surrogate pair, so those are the check's alone.
func invisibleClass() string {
	var b strings.Builder
	b.WriteString("[")
	for r := rune(0); r <= 0xffff; r++ {
		if !invisible(r) {
			continue
		}
		end := r
		for end+1 <= 0xffff && invisible(end+1) {
			end++
		}
		fmt.Fprintf(&b, `\u%04X`, r)
		if end > r {
			fmt.Fprintf(&b, `-\u%04X`, end)
		}
		r = end
	}
	b.WriteString("]")
	return b.String()
}

// userinfoRaw is which characters a user-info may carry as they are, but
// for those in except: not '%', which starts an escape.
func userinfoRaw(except string) func(byte) bool {
	return func(c byte) bool {
		return userinfoChar(rune(c)) && !strings.ContainsRune(except, rune(c))
	}
}

// ecmaWriter writes a Go regular expression over text as a reader decodes
// it as an ECMAScript one over the text as written: each character as it is
// (when raw allows it), or, when encoded, as %XX of each of its UTF-8
// bytes, either case. A class holding every character past ASCII is read
// byte by byte, which is exact only repeated, as it is written there.
type ecmaWriter struct {
	raw     func(byte) bool
	encoded bool
}

func (w ecmaWriter) must(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	if err := w.write(&b, re, false); err != nil {
		panic(fmt.Sprintf("%s: %v", expr, err))
	}
	return b.String()
}

func (w ecmaWriter) write(b *strings.Builder, re *syntax.Regexp, repeated bool) error {
	group := func(sub *syntax.Regexp, repeated bool) error {
		b.WriteString("(?:")
		err := w.write(b, sub, repeated)
		b.WriteString(")")
		return err
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
	case syntax.OpNoMatch:
		b.WriteString("(?!)")
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			class := []rune{r, r}
			for f := unicode.SimpleFold(r); re.Flags&syntax.FoldCase != 0 && f != r; f = unicode.SimpleFold(f) {
				class = append(class, f, f)
			}
			if err := w.class(b, class, false); err != nil {
				return err
			}
		}
	case syntax.OpCharClass:
		return w.class(b, re.Rune, repeated)
	case syntax.OpAnyChar:
		return w.class(b, []rune{0, unicode.MaxRune}, repeated)
	case syntax.OpAnyCharNotNL:
		return w.class(b, []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}, repeated)
	case syntax.OpCapture:
		return group(re.Sub[0], repeated)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if err := w.write(b, sub, false); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if err := w.write(b, sub, repeated); err != nil {
				return err
			}
		}
		b.WriteString(")")
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		repeated := re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpRepeat && re.Max < 0
		if err := group(re.Sub[0], repeated); err != nil {
			return err
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			fmt.Fprintf(b, "{%d,", re.Min)
			if re.Max >= 0 {
				fmt.Fprint(b, re.Max)
			}
			b.WriteString("}")
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	default:
		return fmt.Errorf("%s is not written in ECMAScript here", re.Op)
	}
	return nil
}

// class writes a class of runes (pairs of bounds, as syntax keeps them).
func (w ecmaWriter) class(b *strings.Builder, ranges []rune, repeated bool) error {
	var ascii, raw [utf8.RuneSelf]bool
	var beyond []rune // past ASCII, when not all of it
	high := covers(ranges, utf8.RuneSelf, unicode.MaxRune)
	for i := 0; i < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			switch {
			case r < utf8.RuneSelf:
				ascii[r] = true
				raw[r] = w.raw(byte(r))
			case high:
			case len(beyond) == 16:
				return fmt.Errorf("a class with many characters past ASCII, not all, is not written here")
			default:
				beyond = append(beyond, r)
			}
		}
	}
	if high && !repeated {
		return fmt.Errorf("a class past ASCII is written byte by byte, only repeated")
	}
	var alts []string
	switch {
	case !w.encoded && high: // every character the class holds or raw refuses
		var not [utf8.RuneSelf]bool
		for c := range not {
			not[c] = !raw[c]
		}
		alts = append(alts, "[^"+classBody(not)+"]")
	case slices.Contains(raw[:], true):
		alts = append(alts, ecmaClass(func(c byte) bool { return raw[c] }))
	}
	if w.encoded {
		var bytes [256]bool
		for c := range bytes {
			bytes[c] = c < utf8.RuneSelf && ascii[c] || c >= utf8.RuneSelf && high
		}
		if enc := percentEncoded(bytes); enc != "" {
			alts = append(alts, enc)
		}
	}
	for _, r := range beyond {
		if !w.encoded {
			alts = append(alts, string(r))
			continue
		}
		var enc strings.Builder
		for _, c := range []byte(string(r)) {
			enc.WriteString(percentEncoded(oneByte(c)))
		}
		alts = append(alts, enc.String())
	}
	switch len(alts) {
	case 0:
		b.WriteString("(?!)")
	case 1:
		b.WriteString(alts[0])
	default:
		b.WriteString("(?:" + strings.Join(alts, "|") + ")")
	}
	return nil
}

// covers reports whether ranges hold every rune from lo to hi.
func covers(ranges []rune, lo, hi rune) bool {
	for i := 0; i < len(ranges); i += 2 {
		if ranges[i] <= lo && ranges[i+1] >= lo {
			if ranges[i+1] >= hi {
				return true
			}
			lo = ranges[i+1] + 1
		}
	}
	return false
}

func oneByte(c byte) (set [256]bool) {
	set[c] = true
	return set
}

// percentEncoded is %XX for each byte in set, either case, or "" for none.
func percentEncoded(set [256]bool) string {
	n := 0
	for _, in := range set {
		if in {
			n++
		}
	}
	switch {
	case n == 0:
		return ""
	case n == len(set):
		return "%[0-9A-Fa-f]{2}"
	case n > len(set)/2: // shorter said as what it is not
		var not [256]bool
		for c, in := range set {
			not[c] = !in
		}
		return "%(?!" + hexPairs(not) + ")[0-9A-Fa-f]{2}"
	}
	return "%" + hexPairs(set)
}

// hexPairs matches the two hexadecimal digits of each byte in set.
func hexPairs(set [256]bool) string {
	var alts []string
	for hi := range 16 {
		var lows [16]bool
		for lo := range lows {
			lows[lo] = set[hi<<4|lo]
		}
		if !slices.Contains(lows[:], true) {
			continue
		}
		alts = append(alts, hexDigit(func(d int) bool { return d == hi })+hexDigit(func(d int) bool { return lows[d] }))
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// hexDigit is a class of the hexadecimal digits whose values in holds.
func hexDigit(in func(int) bool) string {
	return ecmaClass(func(c byte) bool {
		d := strings.IndexByte("0123456789abcdef", c)
		if d < 0 {
			d = strings.IndexByte("0123456789ABCDEF", c)
		}
		return d >= 0 && in(d)
	})
}

// ecmaClass is a character or a class of the ASCII characters in holds.
func ecmaClass(in func(byte) bool) string {
	var set [utf8.RuneSelf]bool
	n, last := 0, byte(0)
	for c := range set {
		if set[c] = in(byte(c)); set[c] {
			n, last = n+1, byte(c)
		}
	}
	switch {
	case n == 1 && strings.IndexByte(`^$\.*+?()[]{}|/`, last) >= 0:
		return `\` + string(last)
	case n == 1 && (last < ' ' || last == 0x7f):
		return fmt.Sprintf(`\x%02x`, last)
	case n == 1:
		return string(last)
	}
	return "[" + classBody(set) + "]"
}

// classBody writes set inside a class, in runs: a-z, 0-9.
func classBody(set [utf8.RuneSelf]bool) string {
	var b strings.Builder
	char := func(c int) {
		switch {
		case strings.IndexByte(`\]-[^`, byte(c)) >= 0:
			b.WriteString(`\` + string(rune(c)))
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(byte(c))
		}
	}
	for c := 0; c < len(set); c++ {
		if !set[c] {
			continue
		}
		end := c
		for end+1 < len(set) && set[end+1] {
			end++
		}
		char(c)
		if end >= c+2 {
			b.WriteString("-")
			char(end)
			c = end
		}
	}
	return b.String()
}
