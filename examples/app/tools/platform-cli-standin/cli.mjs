#!/usr/bin/env node
// STAND-IN for the platform's CLI. It is not the vendor's tool: it mimics the
// two commands the pipeline runs, from local files, so the example needs no
// vendor account.
//
//   platform-cli-standin buildCodeAsData [--bricks] [--out dist/codeAsData]
//       Packs the patch files found in the snapshot output directories (or
//       codeasdata/) into dist/codeAsData with configuration files; with
//       --bricks, as a library of reusable bricks instead of a final project.
//   platform-cli-standin snapshot [--config res/snapshot-config.json] [--fixtures fixtures/snapshots]
//       For each entry, writes the patch files of its rootTags (less the
//       excluded folders) into its outputDir, read from local fixtures
//       ($SNAPSHOT_FIXTURES overrides the fixtures folder). Like a CLI that
//       only writes what it exports, it does not clear the folder first.
//       When the entry has a git section it does what the interface says:
//       clones git.repo (token in the URL) on git.branch, writes the snapshot
//       in outputDir of the clone, and commits and pushes when something
//       changed, with commitMessage ({date}, {folder} replaced).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const [command, ...args] = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};

function fail(message) {
  console.error(`platform-cli-standin: ${message}`);
  process.exit(1);
}

function readConfig(path) {
  if (!existsSync(path)) return [];
  const config = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(config)) fail(`${path}: the top level must be an array`);
  return config;
}

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

function buildCodeAsData() {
  const out = option('--out', 'dist/codeAsData');
  const bricks = flag('--bricks');
  const sources = readConfig('res/snapshot-config.json').map((e) => e.snapshooter.outputDir);
  const roots = sources.length ? sources : ['codeasdata'];
  const patches = roots.flatMap((root) => files(root).filter((f) => f.endsWith('.patch.json')).map((f) => ({ root, f })));
  if (patches.length === 0) fail(`no *.patch.json under ${roots.join(', ')}: run snapshot first`);

  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'config'), { recursive: true });
  const target = bricks ? 'bricks' : 'patches';
  const entries = patches.map(({ root, f }) => {
    const name = relative(root, f);
    const dest = join(out, target, bricks ? name.replace(/\.patch\.json$/, '.brick.json') : name);
    mkdirSync(join(dest, '..'), { recursive: true });
    cpSync(f, dest);
    return relative(out, dest);
  });
  const config = bricks
    ? { kind: 'library', format: 'bricks', bricks: entries }
    : { kind: 'project', format: 'patches', patches: entries };
  writeFileSync(join(out, 'config', bricks ? 'library.json' : 'project.json'), JSON.stringify(config, null, 2) + '\n');
  writeFileSync(join(out, 'config', 'build-info.json'), JSON.stringify({ builtBy: 'platform-cli-standin', entries: entries.length }, null, 2) + '\n');
  console.log(`buildCodeAsData: ${entries.length} ${target} written to ${out}${bricks ? ' (library of bricks)' : ''}`);
}

function writeSnapshot(entry, fixtures, into) {
  const { name, rootTags, exclude = [] } = entry.snapshooter;
  mkdirSync(into, { recursive: true });
  let count = 0;
  for (const tag of rootTags) {
    const src = join(fixtures, tag);
    if (!existsSync(src)) fail(`${name}: no root ${tag} (no fixture folder ${src})`);
    cpSync(src, join(into, tag), {
      recursive: true,
      filter: (p) => !exclude.some((id) => relative(src, p).split('/').includes(id)),
    });
    count += files(join(into, tag)).length;
  }
  return count;
}

const pad = (n) => String(n).padStart(2, '0');
function renderMessage(template, folder) {
  const d = new Date();
  const date = `${d.getUTCFullYear()}.${pad(d.getUTCMonth() + 1)}.${pad(d.getUTCDate())} ${pad(d.getUTCHours() % 12 || 12)}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return template.replaceAll('{date}', date).replaceAll('{folder}', folder);
}

// gitSnapshot is the interface's git mode: clone, write, commit and push when changed.
function gitSnapshot(entry, fixtures) {
  const { repo, branch, commitMessage } = entry.git;
  const { outputDir } = entry.snapshooter;
  const clone = mkdtempSync(join(tmpdir(), 'standin-'));
  const git = (...a) => execFileSync('git', a, { cwd: clone, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  try {
    execFileSync('git', ['clone', '--quiet', '--depth', '1', '--branch', branch, repo, clone], { stdio: ['ignore', 'inherit', 'inherit'] });
    rmSync(join(clone, outputDir), { recursive: true, force: true });
    const count = writeSnapshot(entry, fixtures, join(clone, outputDir));
    git('add', '--all', '--', outputDir);
    const changed = git('status', '--porcelain', '--', outputDir).trim() !== '';
    if (changed) {
      git('-c', 'user.name=platform-cli-standin', '-c', 'user.email=standin@example.invalid', 'commit', '--quiet', '-m', renderMessage(commitMessage, outputDir));
      git('push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`);
    }
    console.log(`snapshot ${entry.snapshooter.name}: ${count} patch files, ${changed ? 'pushed' : 'unchanged'} to ${branch}`);
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
}

function snapshot() {
  const configPath = option('--config', 'res/snapshot-config.json');
  const fixtures = process.env.SNAPSHOT_FIXTURES || option('--fixtures', 'fixtures/snapshots');
  const config = readConfig(configPath);
  if (config.length === 0) fail(`${configPath}: no snapshot entries`);
  for (const entry of config) {
    if (entry.git) {
      gitSnapshot(entry, fixtures);
      continue;
    }
    const count = writeSnapshot(entry, fixtures, entry.snapshooter.outputDir);
    console.log(`snapshot ${entry.snapshooter.name}: ${count} patch files written to ${entry.snapshooter.outputDir}`);
  }
}

switch (command) {
  case 'buildCodeAsData': buildCodeAsData(); break;
  case 'snapshot': snapshot(); break;
  default: fail(`unknown command ${JSON.stringify(command)}: use buildCodeAsData or snapshot`);
}
