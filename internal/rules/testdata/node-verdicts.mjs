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
];

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
// One case a line: small, and a change shows as the lines it changes.
process.stdout.write(`{"node": ${JSON.stringify(process.version)},\n"inputs": ${JSON.stringify(inputs)},\n"cases": [\n` +
  cases.map((c) => JSON.stringify(c)).join(',\n') + '\n]}\n');
