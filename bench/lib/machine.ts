// The machine a run measured: what docs/benchmarks.md names beside every figure.
import { cpus, totalmem, release } from 'node:os';
import { readFileSync } from 'node:fs';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
  readonly postgres?: string;
}

export function machine(): Machine {
  const list = cpus();
  let os = `Linux ${release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (pretty) os = `${pretty[1]} (kernel ${release()})`;
  } catch {
    /* not Linux-like: keep the kernel release */
  }
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os,
  };
}
