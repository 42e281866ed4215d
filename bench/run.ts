// npm run bench -- <fanout|chat-e2e|ingest|connections|search|sync|threads|uploads|compliance|cluster|all> [--smoke]
//
// Runs the benchmarks named, prints their figures with the baselines measured in the same run, and after a
// full (not --smoke) run writes docs/bench/results/<name>.json, regenerates docs/benchmarks.md and the
// SVG charts under docs/bench/. See docs/benchmarks.md.
//
// Layout: bench/benchmarks/<name>.ts, one benchmark each, in three parts (setup, measure, report; see
// bench/lib/benchmark.ts); bench/lib/ what they share (servers to measure, client pools, loops, statistics, the
// report and the generated docs); bench/load/ the load generators' processes; bench/servers/ the baselines.
// Only this runner imports the benchmarks; they import bench/lib, never this file.
//
// Parley's public entry points, the only ways bench reaches src/ (test/layering.test.ts keeps this):
//   - the server process, src/main.ts, started with its configuration in the environment (bench/lib/targets.ts,
//     through testkit/parley-node.ts), and its documented HTTP API and Pusher protocol (docs/api.md, docs/events.md);
//   - as modules, only src/main.ts, src/app/index.ts (createApp), src/config and src/contract: nothing inside a layer
//     (a benchmark that needs a rule of the server, such as search folding accents, states it as data or asks the API).
import { parseArgs } from 'node:util';
import { chatE2e } from './benchmarks/chat-e2e.js';
import { cluster } from './benchmarks/cluster.js';
import { compliance } from './benchmarks/compliance.js';
import { connections } from './benchmarks/connections.js';
import { fanout } from './benchmarks/fanout.js';
import { ingest } from './benchmarks/ingest.js';
import { search } from './benchmarks/search.js';
import { sync } from './benchmarks/sync.js';
import { threads } from './benchmarks/threads.js';
import { uploads } from './benchmarks/uploads.js';
import { writeDocs } from './lib/docs.js';
import { machine } from './lib/machine.js';
import { log, openFiles } from './lib/procs.js';
import { BENCHMARKS, printResult, saveResult, type BenchmarkName, type Result } from './lib/report.js';
import { BENCH_ADMIN_DATABASE_URL } from './lib/targets.js';
import type { Benchmark } from './lib/benchmark.js';
import { postgresVersion } from '../testkit/postgres.js';

const RUNNERS: Record<BenchmarkName, Benchmark> = {
  fanout,
  'chat-e2e': chatE2e,
  ingest,
  connections,
  search,
  sync,
  threads,
  uploads,
  compliance,
  cluster,
};

const usage = `usage: npm run bench -- <${BENCHMARKS.join('|')}|all> [--smoke] [--no-docs] [--setup S]
       npm run bench -- --docs   (regenerate docs/benchmarks.md and the charts from the stored results)
  --smoke    a tiny variant (a few clients, a second or two): checks that the benchmark works, measures nothing
  --no-docs  do not write docs/benchmarks.md and docs/bench/ after a full run
  --setup S  only the setups whose names contain S (repeatable; e.g. --setup parley --setup soketi); implies --no-docs`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { docs: { type: 'boolean', default: false }, smoke: { type: 'boolean', default: false }, setup: { type: 'string', multiple: true, default: [] }, 'no-docs': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.docs && positionals.length === 0) {
    log(`wrote ${writeDocs().join(', ')}`);
    return;
  }
  if (values.help || positionals.length === 0) {
    log(usage);
    process.exit(values.help ? 0 : 2);
  }
  const names = positionals.includes('all') ? [...BENCHMARKS] : positionals;
  for (const name of names) {
    if (!(BENCHMARKS as readonly string[]).includes(name)) {
      log(`unknown benchmark "${name}"\n${usage}`);
      process.exit(2);
    }
  }
  const smoke = values.smoke === true;
  const m = { ...machine(), postgres: await postgresVersion(BENCH_ADMIN_DATABASE_URL).catch(() => 'PostgreSQL (version unknown)') };
  const files = openFiles(process.pid);
  log(`Parley benchmarks${smoke ? ' (smoke)' : ''}: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.postgres}; open files limit ${files.limit}`);

  let failed = 0;
  for (const name of names as BenchmarkName[]) {
    log(`\n# ${name}`);
    const started = performance.now();
    try {
      const partial = await RUNNERS[name]({ smoke, setups: values.setup ?? [] });
      const result: Result = { ...partial, machine: m, finishedAt: new Date().toISOString(), seconds: Math.round((performance.now() - started) / 1000) };
      printResult(result);
      if (!smoke && (values.setup ?? []).length === 0) {
        saveResult(result);
        if (!values['no-docs'] && (values.setup ?? []).length === 0) log(`wrote ${writeDocs().join(', ')}`);
      }
    } catch (err) {
      failed++;
      log(`${name} failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
  // A closing line CI's log readers know: how many benchmarks ran to the end.
  log(`\nbenchmarks: ${names.length - failed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}

void main();
