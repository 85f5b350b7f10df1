// Prints Node's own verdicts on deploy-rule patterns: for each pattern,
// whether `new RegExp(pattern)` accepts it and, if so, what `.test(input)`
// says for every input (a string of 0 and 1, one per input). The Go tests
// compare internal/rules with this output
// (node-verdicts.json), which is committed. Regenerate with Node 24, the
// platform's runtime: scripts/node-verdicts.
const inputs = [
  '', 'a', 'ab', 'Ab', 'abc', 'aaa', 'k', 'k<n>', 'p{L}', 'u'.repeat(41), 'A', 'x]',
  'api', 'legacy', 'backend-1', 'backend-12', 'worker',
  'registry.example.com/team/api:1.4.0', 'registry.example.com/team/jobs:1.4.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  '😀', 'x😀y', 'café', 'cafe', 'é', '\u2028', '\u2029', 'a\nb', 'a\rb', '\n', '\t', ' ', '\u00a0', '\ufeff', '٣', '7',
  'a-b', 'a{b}', '{', '$', '^', '\\', '\x08', '\x01', 'ſ', 'K', 'é'.normalize('NFD'),
  // letters whose case-insensitive matching JavaScript (without the u flag) does its own way
  '\u212a' /* Kelvin sign */, 's', 'S', 'ς', 'σ', 'Σ', 'İ', 'i', 'I', 'ı', '\u212b' /* Angstrom sign */, 'å', 'Å',
  'θ', 'ϑ', 'Θ', 'ϴ', '\u00b5' /* micro sign */, 'μ', 'Μ', 'ß', 'ẞ', 'ᾀ', 'ᾈ', 'ǅ', 'ǆ', 'Ǆ', 'ÿ', 'Ÿ', 'aA', 'xx',
  // for back-references: which group \N means
  'aba', 'abb', 'baa', 'x-y-x', 'x-y-y',
  // for groups in a repeated part: what a back-reference finds after it
  'abab', 'zaacbbbcac', 'r.io/apib:1', 'r.io/apibapi:1', 'ab-cd-cd',
];

const handPicked = [
  // UTF-16 code units, not code points
  '^.$', '^.{2}$', '^[😀]$', '^[\\s\\S]$', '^\\ud83d\\ude00$', '^\\ud83d', '\\ude00$', '^[^a]$', '^😀+$', '^(?:😀)+$', '[😀-😂]',
  // line terminators and ASCII words
  '^.$', 'a.b', '^[^]$', 'caf\\b', 'caf\\B', '\\bé', '^\\w+$', '^\\W$', '\\d', '^\\s$', '^\\S$',
  // Annex B syntax JavaScript accepts
  '[^]', '[]', 'x[]', '[]]', '\\a', '\\e', '\\z', '\\A', '\\Z', '\\G', '\\Q', '\\y', '\\q', '\\k', '\\k<n>', '\\p{L}', '\\P{L}', '\\u{41}', '^\\u{41}$',
  '[a-\\d]', '[\\d-z]', 'a{99999999999}', 'a{1,99999999999}', '(?<$>a)\\k<$>', '(?<ñ>a)', '(?<_1>a)\\k<_1>', '\\1(a)', '(a)\\2', '\\8', '\\9', '\\08', '\\101', '\\0',
  '[\\101]', '[\\b]', '\\cA', '\\c1', '[\\c1]', '\\c', '\\x4', '\\x41', '\\u004', '\\u0041', 'a{', 'a{1', 'a{,2}', '{', '}', ']', 'x{2}', 'x{2,}', 'x{2,3}', 'x{3,2}',
  '(?=a)*', '(?=a)+b', '(?!a)?', '\\-', '\\/', '[\\-]', '[a\\-z]', '[-a]', '[a-]', '[z-a]', '[😀-a]',
  // syntax JavaScript rejects
  '(?<n>a)(?<n>b)', '(?<n>a)|(?<n>b)', '((?<n>a)|(?<n>b))', '(?<n>a)((?<n>b))', '(?<=a)*', '(?<!a)+', '^*', '$*', '\\b*', '\\B+', 'a**', 'a++', '*', '+a', '?', '{1}', '(', ')', 'a)', '[', '[a', 'a\\', '\\k<x>(?<n>a)', '(?<n>a)\\k', '(?<1>a)', '(?<a b>c)',
  // other engines' syntax
  '(?i)api', '(?>a)', '(?#c)', '(?(1)a)', "(?'n'a)", '(?P<n>a)', '\\p{L}+', '[a-z--[aeiou]]', '\\Aapi', 'api\\z',
  // modifiers (ES2025)
  '(?i:a)b', '(?i:A)', '^(?s:.)$', '(?m:^b)', '(?m:a$)', '(?-i:a)', '(?i-:a)', '(?ii:a)', '(?x:a)', '(?-:a)', '(?i:(?-i:a))',
  // deploy rules as written in payloads
  '.*', '^(?!legacy$).*', '^(?!api$)', '/api:', '/jobs:', '^backend-\\d+$', '^backend-1$', 'registry\\.example\\.com/team/(api|jobs):', ':1\\.4\\.0$', '@sha256:[0-9a-f]{64}$', '^(?<name>[a-z]+)-\\k<name>?',
  '(?<=/)api', '(?<!x)api', '(?<=^|/)jobs:', 'é', '^é$', 'é$',
  // case-insensitive parts: ECMAScript's Canonicalize, not Unicode's simple folding
  '(?i:[a-z])', '^(?i:[^a-z])$', '^(?i:[\\u0100-\\u017f])$', '^(?i:[\\w])$', '^(?i:\\W)$', '^(?i:[^\\W])$', '^(?i:[\\d-k])$',
  '^(?i:[k-l])$', '^(?i:[\\u212a-\\u212b])$', '^(?i:\\x6b)$', '^(?i:\\u212a)$', '^(?i:\\153)$', '^(?i:\\q)$', '^(?i:\\k)$',
  '^(?i:k(?-i:k))$', '^(?i:(?-i:k)k)$', '(?i:(a)\\1)', '(?i:(?<n>a)\\k<n>)', '^(?i:.)$', '^(?i:[^])$', '^(?i:😀)$',
  // group names written with escapes
  '(?<\\u0061b>x)\\k<ab>', '(?<ab>x)\\k<\\u0061b>', '(?<\\u{61}b>x)\\k<ab>', '(?<a\\u{0041}>x)\\k<aA>', '(?<\\ud835\\udc9c>x)', '(?<𝒜>x)\\k<\\ud835\\udc9c>',
  '(?<ab>x)(?<\\u0061b>y)', '(?<\\u0020>x)', '(?<a\\u00a0>x)', '(?<\\u0030>x)', '(?<a\\u0030>x)', '(?<\\ud835>x)', '(?<a\\u200c>x)', '(?<\\u200c>x)',
  '(?<a\\x41>x)', '(?<\\u{110000}>x)', '(?<\\u{}>x)', '(?<\\u00e9>x)\\k<é>', '(?<ab>x)\\k<a\\u0020>', '(?<·>x)', '(?<a·>x)',
  // \k in a class of a pattern with named groups; duplicate names (ES2025: only in different alternatives)
  '(?<a>x)[\\k]', '[\\k](?<a>x)', '[a-\\k](?<a>x)', '(?<a>x)[\\k<a>]', '(?<a>x|(?<a>y))', '(?<a>x)|(?<a>y)', '(?:(?<a>x)|(?<a>y))(?<a>z)',
  '(?<a>(?:x|(?<a>y)))', '(?<b>(?<a>x)|(?<a>y))', '((?<a>x)|(?<a>y))|(?<a>z)', '(?<a>x)|(?:y|(?<a>z))', '(?<a>|(?<a>x))',
  // \N counts groups left to right, named or not (regexp2 numbers named groups last)
  '(?<n>a)(b)\\1', '(?<n>a)(b)\\2', '(b)(?<n>a)\\1', '(b)(?<n>a)\\2', '^(?<v>x)-(y)-\\1$', '^(?<v>a)(b)\\2\\1$', '^(a)(?<n>b)(a)\\3\\2$', '(?<n>a)(b)[\\1]', '(?<n>a)(b)\\k<n>',
  '^(?<n>a)(b)\\1\\x30$', '^(a)\\1\\x30$', '^(?i:(?<n>a)(b)\\1)$', '(?<a>x)|(?<a>y)|\\1', '^(?:(?<a>x)|(?<a>y))\\k<a>$',
  // V8 accepts these, the standard refuses them (a group and one inside it share a name): refused here
  '(?<a>(?<a>x)|)', '(?<a>(?<a>x)|y)', '(?<a>y|(?<a>x)|)',
  // V8 matches a class after a | in (?i:…) case-sensitively: refused here
  '(?i:x|[a])', '(?i:api|[w]orker)', '(?i:x|[^a])', '(?i:x|[a-c])', '(?i:(?:x|[a]))', '^(?i:|[a])$', '(?i:x|(?i:[a]))', '(?i:y|[a]x)',
  '(?i:(?<=x|[a])b)', '(?i:(?!x|[a]))', '^(?i:(?:x|[a]){1,2})$',
  '^(?i:(?:x|[a])+)$', // V8 gets this one right (a + loop), by how it walks the pattern: refused all the same
  // V8 folds a class (or one-character alternatives, which it makes a class) as the last (?…:…) group it walked left it,
  // having walked all that follows a | list after its first alternative: refused here
  '(?i:x|(?-i:a))|[k]', '(?i:x|(?m:a))|[k]', '(?i:y|(?-i:x))|[a-c]', '(?i:[x]|a|K)', '(?i:[k]x|a|b)', '(?i:(?-i:[a]|[x])+)', '(?:[k])(?i:(?s:x)??)|[a]',
  // and where its walk leaves the flags right
  '[k]|(?i:x|(?m:a))', '(?i:x|y|a)', '(?i:x|(?m:a))|k', '(?i:x|(?m:a))(?:[k])', '(?m:(?i:x)|y)|[k]', '^(?i:[a-z]+)$',
  // and what it gets right: a class first, before a |, in its own (?i:…) alternative, or one case folding leaves as it is
  '(?i:[a]|x)', '(?i:(?:y|z)[a])', '(?i:x)|(?i:[a])', 'x|(?i:[a])', '(?i:x|(?-i:[a]))', '(?i:x|(?-i:(?i:[a])))', '(?i:x|[0-9])', '(?i:x|[\\w])', '(?i:x|[aA])',
  // JavaScript clears a quantified part's groups at each repetition and drops a repetition that takes no text; regexp2
  // keeps both: a back-reference to such a group is refused here
  '^(?:(a)|b)+\\1$', '^(?:(a)|b)*\\1$', '^(?:(a)|b){2}\\1$', '^(?:b|(a))+\\1$', '^(?:(a)|(b))+\\1\\2$', '^(?:(a)b|b)+\\1$',
  '^(?:(?<n>a)|b)+\\k<n>$', '^((a)|b)+\\2$', '^(?:(a)?b)+\\1$', '^(?:(a)|b)+?\\1$', '^(z)((a+)?(b+)?(c))*\\4$', '^(z)((a+)?(b+)?(c))*\\3c$',
  '^r\\.io/(?:(api)|b)+:1\\1$', '^(a?)?\\1$', '^(?=(a))?a\\1$', '^(?:(?=(a)))?a\\1$', '^(?=((?:b?|a)+))\\1$', '^(?=(a)(?:b?|a)+)\\1$', '^(?:(?!(a))b)+\\1$',
  // and the groups whose text both read alike: set at every repetition, in a ? part that takes text, or no back-reference
  '^((a)|b)+\\1$', '^(?:([a-z]+)-)+\\1$', '^(a)?\\1$', '^(a)+\\1$', '^(?:(a)b)+\\1$', '^(?:(a)|b){1}\\1$', '^(a){0}\\1$',
  '^(?:(?=(a))a)+\\1$', '^(?:a|b)*(a)\\1$', '^(?=((?:b|a)+))\\1$', '^(?:(a)|b)+$', '^(?:(a)|b)+b$', '(?=(a+))a*b\\1', '(?<=(a+))b\\1',
  '^(?!(a)b)\\1a',
];

// Case-insensitive parts around each letter JavaScript folds its own way: alone, in a class, in a negated class.
for (const c of ['a', 'k', 'K', '\u212a', 's', 'S', 'ſ', 'ς', 'σ', 'Σ', 'İ', 'i', 'I', 'ı', '\u212b', 'å', 'Å', 'θ', 'ϑ', 'Θ', 'ϴ', 'µ', 'μ', 'Μ', 'ß', 'ẞ', 'ᾀ', 'ᾈ', 'ǅ', 'ǆ', 'Ǆ', 'ÿ', 'Ÿ']) {
  handPicked.push(`^(?i:${c})$`, `^(?i:[${c}])$`, `^(?i:[^${c}])$`);
}

// Generated: atoms × quantifiers × anchors.
const atoms = ['a', '.', '\\w', '\\d', '[a-c]', '[^a]', '(?:ab)', '(a)', 'é', '😀', '\\u00e9', '[é]', '\\b', '[\\s\\S]'];
const quants = ['', '*', '+', '?', '{2}', '{0,1}', '*?'];
const generated = [];
for (const a of atoms) for (const q of quants) for (const [pre, post] of [['', ''], ['^', '$']]) generated.push(pre + a + q + post);

// Generated: every pair of tricky tokens (escapes Annex B reads its own way,
// classes, groups, assertions, quantifiers, characters beyond the BMP).
const tokens = ['a', '.', '\\b', '\\B', '^', '$', '\\d', '\\w', '\\s', '[^]', '[]', '[a-]', '[\\d-z]', '\\k', '\\1', '\\0', '\\c', '\\x4', '\\u00',
  '{', '}', ']', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(a)', '(?:a|)', '(?<n>a)', '\\k<n>', '*', '+', '?', '{1,2}', '😀', 'é', '\\u{2}', '\\p', '|', '-'];
for (const a of tokens) for (const b of tokens) generated.push(a + b);

const patterns = [...new Set([...handPicked, ...generated])];
const cases = patterns.map((pattern) => {
  let re;
  try {
    re = new RegExp(pattern);
  } catch {
    return { pattern, valid: false };
  }
  return { pattern, valid: true, matches: inputs.map((s) => (re.test(s) ? '1' : '0')).join('') };
});
// ECMAScript's Canonicalize without the u flag, for every UTF-16 unit it
// changes: the unit's toUpperCase, unless that is more than one unit or maps
// a non-ASCII unit to ASCII. The Go tests compare their case folding with it.
const canonical = [];
for (let u = 0; u <= 0xffff; u++) {
  const upper = String.fromCharCode(u).toUpperCase();
  if (upper.length === 1 && upper.charCodeAt(0) !== u && !(u >= 128 && upper.charCodeAt(0) < 128)) canonical.push([u, upper.charCodeAt(0)]);
}
// One case a line: small, and a change shows as the lines it changes.
process.stdout.write(`{"node": ${JSON.stringify(process.version)},\n"inputs": ${JSON.stringify(inputs)},\n"canonical": ${JSON.stringify(canonical)},\n"cases": [\n` +
  cases.map((c) => JSON.stringify(c)).join(',\n') + '\n]}\n');
