#!/usr/bin/env node
// STAND-IN for the platform's toolkit (@olympeio/toolkit 1.2.3). It is not the
// vendor's tool: it answers the two commands the pipeline runs with the real
// toolkit's surface (the same commander.js, options, short aliases, defaults,
// environment names, unknown-option error and exit codes; CI compares its
// --help with the real one's, internal/devtools/realtoolkit), and does their
// work from local files, so the example needs no platform.
//
//   buildCodeAsData [--codeAsData.mode all|dependencies|project] [--codeAsData.workingDir ./dist/codeAsData] [--snapshot.dir ./snapshot]
//       Empties the working directory, then writes the code as data of the
//       dependencies that declare some ("codeAsData" in their package.json,
//       modes all and dependencies) and of the project (each <snapshot.dir>/<tag>/Home
//       merged into <working dir>/<package name made a folder name>, modes all
//       and project), import_order.json, and version.json (not in project mode).
//   snapshot [--snapshot.config ./snapshot/snapshot-config.json] [--orchestrator.host …]
//       For each entry of the configuration (a file, or every .json under a
//       folder), empties outputDir and writes one folder per root tag, read
//       from local fixtures ($SNAPSHOT_FIXTURES, else fixtures/snapshots)
//       instead of the orchestrator. An entry with a git section is cloned
//       (--depth 1, git.branch) under --snapshot.repositoriesDir/<name>,
//       written there, and committed and pushed when something changed.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Command, Option } from 'commander';

const env = process.env;
// What the real toolkit's options and defaults are; its descriptions are its own.
const globals = (cmd) => cmd
  .addOption(new Option('-l, --logLevel <level>', 'logging level').default(env.LOG_LEVEL ?? 'info'))
  .addOption(new Option('-sl, --saveLogs', 'save logs under logs/').default(env.SAVE_LOGS ?? false))
  .addOption(new Option('-rd, --runningInDocker', 'running inside a container').default(env.RUNNING_IN_DOCKER ?? false))
  .addOption(new Option('-cf, --jsonConfig <json>', 'the configuration as JSON'))
  .addOption(new Option('-df, --downloadFolder <path>', 'download folder').default(env.DOWNLOAD_FOLDER ?? '/tmp/toolkit'));

const dataOptions = (cmd) => cmd
  .addOption(new Option('-sbd, --snapshot.businessDataDir <path>', 'business data sub-folder').default(env.SNAPSHOT_BUSINESS_DATA_FOLDER ?? 'data'))
  .addOption(new Option('-seu, --snapshot.excludeUsers', 'leave users out of business data').default(env.SNAPSHOTER_EXCLUDE_USERS ?? false))
  .addOption(new Option('-sdb, --snapshot.dumpBinaries', 'dump binary files with business data').default(env.DUMP_BINARY_FILES ?? false))
  .addOption(new Option('-sdr, --snapshot.dataRootTag <tag>', 'data root tag').default('10000000000000000000'))
  .addOption(new Option('-sud, --snapshot.usersDataDir <path>', 'users sub-folder').default(env.SNAPSHOT_USER_DATA_FOLDER ?? 'users'))
  .addOption(new Option('-sd, --snapshot.dir <path>', "the project's snapshots").default(env.SNAPSHOT_DATA_FOLDER ?? './snapshot'));

const orchestratorOptions = (cmd) => cmd
  .addOption(new Option('-oh, --orchestrator.host <host>', 'orchestrator host').default(env.ORCHESTRATOR_HOST ?? 'localhost'))
  .addOption(new Option('-op, --orchestrator.port <number>', 'orchestrator port').default(env.ORCHESTRATOR_SERVICE_PORT ?? 8080))
  .addOption(new Option('-ou, --orchestrator.userName <name>', 'orchestrator user').default(env.DRAW_USERNAME ?? 'admin'))
  .addOption(new Option('-opw, --orchestrator.password <password>', "orchestrator user's password").default(env.DRAW_PASSWORD ?? 'admin'));

const busOptions = (cmd) => cmd
  .addOption(new Option('-bpr, --bus.protocol <number>', 'bus protocol').default('amqp'))
  .addOption(new Option('-bh, --bus.hostname <host>', 'bus host').default(env.RABBITMQ_HOST ?? 'localhost'))
  .addOption(new Option('-bp, --bus.port <number>', 'bus port').default(env.RABBITMQ_PORT ?? 5672))
  .addOption(new Option('-bu, --bus.username <name>', 'bus user').default(env.RABBITMQ_ORCHESTRATOR_USER ?? 'guest'))
  .addOption(new Option('-bpw, --bus.password <password>', "bus user's password").default(env.RABBITMQ_ORCHESTRATOR_PASSWORD ?? 'guest'))
  .addOption(new Option('-bv, --bus.vhost <vhost>', 'bus virtual host').default(env.RABBITMQ_ORCHESTRATOR_VHOST ?? '/'))
  .addOption(new Option('-bde, --bus.commandsExchange <exchange>', 'commands exchange').default(env.RABBITMQ_ORCHESTRATOR_COMMAND_EXCHANGE ?? 'REQUEST_EXCHANGE'))
  .addOption(new Option('-bcq, --bus.commandRoutingKey <queue>', 'commands routing key').default(env.RABBITMQ_ORCHESTRATOR_COMMAND_ROUTING_KEY ?? 'COMMAND_ROUTING_KEY'))
  .addOption(new Option('--bus.commandTimeout <timeout>', 'command timeout (ms)').default(env.RABBITMQ_ORCHESTRATOR_COMMAND_TIMEOUT ?? 600000))
  .addOption(new Option('-bdq, --bus.deploymentRoutingKey <queue>', 'deployment routing key').default(env.RABBITMQ_ORCHESTRATOR_DEPLOYMENT_ROUTING_KEY ?? 'SERVICE_DEPLOYMENT_ROUTING_KEY'));

function failed(command, reason) {
  console.error(`Failed to execute ${command} command, reason: ${reason}`);
  process.exit(1);
}

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const readJSON = (path) => JSON.parse(readFileSync(path, 'utf8'));
// @scope/name → scope.name, as the toolkit names a package's folder
const folderName = (name) => name.replace(/\//g, '.').replace(/@/g, '').toLowerCase();
const rootTag = '10000000000000000000';

function buildCodeAsData(opts) {
  const mode = opts['codeAsData.mode'];
  if (!['all', 'dependencies', 'project'].includes(mode)) failed('buildCodeAsData', `Error: Unknown option for codeAsData mode ${mode}`);
  const out = resolve(opts['codeAsData.workingDir']);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const manifest = readJSON('package.json');
  const order = [];
  if (mode !== 'project') {
    // dependencies that ship code as data, in the project's top-level node_modules
    const names = [...Object.keys(manifest.devDependencies ?? {}), ...Object.keys(manifest.dependencies ?? {})];
    for (const name of names) {
      const dir = join('node_modules', name);
      const pkg = existsSync(join(dir, 'package.json')) ? readJSON(join(dir, 'package.json')) : {};
      if (!pkg.codeAsData) continue;
      cpSync(join(dir, pkg.codeAsData), join(out, folderName(name)), { recursive: true });
      order.push({ name, rootTag, path: folderName(name) });
    }
  }
  if (mode !== 'dependencies') {
    const dir = opts['snapshot.dir'];
    // each root tag's Home folder (a folder named Home is one itself), merged
    const skip = [opts['snapshot.usersDataDir'], opts['snapshot.businessDataDir']];
    const tags = existsSync(dir) ? readdirSync(dir).filter((t) => !t.startsWith('.') && !skip.includes(t) && statSync(join(dir, t)).isDirectory()) : [];
    console.log(`Found ${tags.length} folder for project's code as data`);
    if (tags.length) {
      for (const tag of tags) {
        const home = join(dir, tag === 'Home' ? '' : tag, 'Home');
        if (!existsSync(home)) failed('buildCodeAsData', `Error: ENOENT: no such file or directory, lstat '${home}'`);
        cpSync(home, join(out, folderName(manifest.name)), { recursive: true });
      }
      order.push({ name: manifest.name, rootTag, path: folderName(manifest.name) });
    }
  }
  writeFileSync(join(out, opts['orchestrator.importOrderFile']), JSON.stringify(order));
  if (mode !== 'project') {
    const draw = join('node_modules', 'draw-standin', 'package.json');
    writeFileSync(join(out, opts.versionFileName), JSON.stringify({ drawVersion: existsSync(draw) ? readJSON(draw).version : 'N/A', runtimeVersion: 'N/A' }));
  }
  console.log(`buildCodeAsData: ${files(out).length} files written to ${relative('.', out)} (${mode})`);
}

function readSnapshotConfig(path) {
  const at = resolve(path);
  if (!existsSync(at)) failed('snapshot', `Error: Cannot find the snapshot config file on the path ${at}`);
  const found = statSync(at).isDirectory() ? files(at).filter((f) => f.endsWith('.json')) : [at];
  return found.flatMap((f) => {
    try {
      return readJSON(f);
    } catch (e) {
      failed('snapshot', `Error: An error occurred while parsing snapshot configuration file ${f}: ${e}`);
    }
  });
}

function writeSnapshot(entry, fixtures, into) {
  const { name, rootTags, exclude = [] } = entry.snapshooter;
  rmSync(into, { recursive: true, force: true }); // the toolkit empties outputDir first
  mkdirSync(into, { recursive: true });
  for (const tag of rootTags) {
    const src = join(fixtures, tag);
    if (!existsSync(src)) failed('snapshot', `Error: ${name}: no root ${tag} on this stand-in's orchestrator (no folder ${src})`);
    cpSync(src, join(into, tag), { recursive: true, filter: (p) => !exclude.some((id) => relative(src, p).split('/').includes(id)) });
  }
  return files(into).length;
}

// {date} and {folder} as the real toolkit renders them: the first of each,
// local time, only the month zero-padded.
function renderMessage(template, folder) {
  const d = new Date();
  const date = `${d.getFullYear()}.${String(d.getMonth() + 1).padStart(2, '0')}.${d.getDate()} ${d.getHours()}:${d.getMinutes()}:${d.getSeconds()}`;
  return template.replace('{date}', date).replace('{folder}', folder);
}

function gitSnapshot(entry, fixtures, opts) {
  const { repo, branch = 'develop', commitMessage } = entry.git;
  const clone = join(opts['snapshot.repositoriesDir'], entry.snapshooter.name);
  rmSync(clone, { recursive: true, force: true });
  mkdirSync(clone, { recursive: true });
  const git = (...a) => execFileSync('git', a, { cwd: clone, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  execFileSync('git', ['clone', '--quiet', '--depth', '1', '--branch', branch, repo, clone], { stdio: ['ignore', 'inherit', 'inherit'] });
  const count = writeSnapshot(entry, fixtures, join(clone, entry.snapshooter.outputDir));
  git('add', '--all');
  const changed = git('status', '--porcelain').trim() !== '';
  if (changed) {
    git('-c', 'user.name=platform-cli-standin', '-c', 'user.email=standin@example.invalid', 'commit', '--quiet', '-m',
      renderMessage(commitMessage ?? opts['snapshot.commitMessage'], entry.snapshooter.outputDir));
    git('push', '--quiet', 'origin', branch);
  }
  console.log(`snapshot ${entry.snapshooter.name}: ${count} files, ${changed ? 'pushed' : 'unchanged'} to ${branch}`);
}

function snapshot(opts) {
  const fixtures = env.SNAPSHOT_FIXTURES || 'fixtures/snapshots';
  const config = readSnapshotConfig(opts['snapshot.config']);
  if (config.length === 0) {
    console.log(`No snapshot config file provided on path ${opts['snapshot.config']}, nothing to do`);
    return;
  }
  for (const entry of config) {
    if (entry.git) {
      gitSnapshot(entry, fixtures, opts);
      continue;
    }
    console.log(`No git configuration for project ${entry.snapshooter.name}.`);
    const count = writeSnapshot(entry, fixtures, entry.snapshooter.outputDir);
    console.log(`snapshot ${entry.snapshooter.name}: ${count} files written to ${entry.snapshooter.outputDir}`);
  }
}

const program = new Command().name('platform-cli-standin');
// each command's options in the real toolkit's order
const cad = program.command('buildCodeAsData').description("STAND-IN: the project's code as data into the working directory")
  .addOption(new Option('-pwd, --codeAsData.workingDir <path>', 'where the code as data is written').default('./dist/codeAsData'))
  .addOption(new Option('-pmd, --codeAsData.mode <type>', '`dependencies`, `project` (a library) or `all` (a project to deploy)').default('all'));
dataOptions(cad)
  .addOption(new Option('-oif, --orchestrator.importOrderFile <name>', 'import order file').default('import_order.json'))
  .addOption(new Option('-vf, --versionFileName <name>', 'version file').default('version.json'));
globals(cad).action(buildCodeAsData);

const snap = orchestratorOptions(program.command('snapshot').description('STAND-IN: snapshot the projects of the configuration from local fixtures'))
  .addOption(new Option('-sc, --snapshot.config <path>', 'the configuration: a file, or a folder of .json files').default(env.SNAPSHOT_CONFIG ?? './snapshot/snapshot-config.json'));
busOptions(snap)
  .addOption(new Option('-scm, --snapshot.commitMessage <message>', 'commit message').default(env.SNAPSHOT_COMMIT_MESSAGE ?? 'Snapshot at {date} in {folder}'))
  .addOption(new Option('-srd, --snapshot.repositoriesDir <path>', 'where git sections are cloned').default(env.SNAPSHOT_REPOSITORIES ?? '/tmp/repositories'));
globals(snap).action(snapshot);
await program.parseAsync(process.argv);
