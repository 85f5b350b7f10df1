package rules

import (
	"strconv"
	"unicode"
	"unicode/utf16"
)

// groupName reads the name of (?<name>…) or \k<name> as JavaScript does (a
// RegExpIdentifierName): identifier characters, any of them written as
// \uXXXX, \u{X…} or an escaped surrogate pair, so that (?<\u0061b>…) is the
// group ab. ok is false for what JavaScript refuses.
func groupName(raw []rune) (name string, ok bool) {
	var out []rune
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			var n int
			if c, n = nameEscape(raw[i:]); n == 0 {
				return "", false
			}
			i += n
		} else {
			i++
		}
		if !identifierChar(c, len(out) == 0) {
			return "", false
		}
		out = append(out, c)
	}
	return string(out), len(out) > 0
}

// nameEscape reads \uXXXX (with the \uXXXX of its low surrogate after a high
// one) or \u{X…} at the start of s: the character and the runes read, or 0.
func nameEscape(s []rune) (rune, int) {
	if len(s) < 2 || s[1] != 'u' {
		return 0, 0
	}
	if len(s) > 2 && s[2] == '{' {
		end := 3
		for end < len(s) && s[end] != '}' {
			end++
		}
		v, err := strconv.ParseUint(string(s[3:min(end, len(s))]), 16, 32)
		if end == len(s) || end == 3 || err != nil || v > unicode.MaxRune || !isHex(s[3:end]) {
			return 0, 0
		}
		return rune(v), end + 1
	}
	hi, ok := hex4(s[2:])
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(hi) && hi < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if lo, ok := hex4(s[8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return utf16.DecodeRune(hi, lo), 12
		}
	}
	return hi, 6
}

func hex4(s []rune) (rune, bool) {
	if len(s) < 4 || !isHex(s[:4]) {
		return 0, false
	}
	v, _ := strconv.ParseUint(string(s[:4]), 16, 32)
	return rune(v), true
}

func isHex(s []rune) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// identifierChar is ECMAScript's IdentifierStartChar (first) or
// IdentifierPartChar: $, _, and Unicode's ID_Start or ID_Continue (as Go's
// Unicode tables have them), with ZWNJ and ZWJ after the first.
func identifierChar(r rune, first bool) bool {
	switch {
	case r == '$' || r == '_':
		return true
	case unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space):
		return false
	case unicode.In(r, unicode.L, unicode.Nl, unicode.Other_ID_Start):
		return true
	case first:
		return false
	}
	return r == 0x200C || r == 0x200D || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue)
}
