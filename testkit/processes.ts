// Child processes of a test or benchmark run. Every child started here is killed when this process exits,
// however it exits (the test runner ends a file's process after its tests, a runner's timeout, Ctrl-C), and
// the synchronous clean-ups registered with atExit run then too, so a failed run never leaves servers behind.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { sleep } from './wait.js';

const children = new Set<ChildProcess>();
const exitHooks = new Set<() => void>();

function cleanUp(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const hook of exitHooks) hook();
  exitHooks.clear();
}
process.once('exit', cleanUp);
// Killed by a signal, 'exit' does not come: clean up, then die of the signal.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.kill(process.pid, signal);
  });
}

/** Kills child (SIGKILL) when this process exits, if it still runs then. */
export function track<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs hook when this process exits (synchronous: nothing asynchronous runs then); the result unregisters it. */
export function atExit(hook: () => void): () => void {
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}

/** Keeps the last `limit` characters a child wrote, for failure messages. */
export class Tail {
  private text = '';
  constructor(private readonly limit = 20_000) {}
  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text || '(no output)';
  }
}

/** Spawns a tracked child whose stdout and stderr go to a Tail. */
export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions = {}, tailLimit?: number): { child: ChildProcess; output: Tail } {
  const output = new Tail(tailLimit);
  const child = track(spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
  return { child, output };
}

/** Waits for a child's exit, at most timeoutMs; resolves with the code (or signal name), null on timeout. */
export function exited(child: ChildProcess, timeoutMs: number): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(null), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolveExit(code ?? signal);
    });
  });
}

/** Runs a program to its end (killed after timeoutMs); rejects with what it wrote when it fails. */
export function runProgram(command: string, args: readonly string[], timeoutMs: number): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const { child, output } = spawnTracked(command, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, 5_000);
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolveRun() : reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal}):\n${output}`)),
    );
  });
}

export interface ServerOptions {
  readonly cwd?: string;
  /** The process's whole environment: nothing of this process's is passed on unless it is in here. */
  readonly env: NodeJS.ProcessEnv;
  /** Polled every 100 ms until true: the server serves. */
  readonly ready: () => Promise<boolean>;
  /** Default 60 s (a loaded 2-core machine starts a server slowly). */
  readonly readyTimeoutMs?: number;
  /** Characters of output kept for failure messages (default 20,000). */
  readonly tailLimit?: number;
}

/** A server as a child process on a port of its own: started, waited for until it serves, stopped. */
export class ServerProcess {
  readonly child: ChildProcess;
  private readonly output: Tail;

  protected constructor(
    readonly name: string,
    readonly port: number,
    command: string,
    args: readonly string[],
    options: Pick<ServerOptions, 'cwd' | 'env' | 'tailLimit'>,
  ) {
    ({ child: this.child, output: this.output } = spawnTracked(command, args, { cwd: options.cwd, env: options.env }, options.tailLimit));
    // A server left running (a failed hook that never got to stop it) must not keep this process alive: it
    // ends when its own work is done, and its exit kills the server.
    this.child.unref();
    for (const pipe of [this.child.stdout, this.child.stderr]) (pipe as { unref?: () => void } | null)?.unref?.();
  }

  /** Spawns `command args` and waits until options.ready() is true; killed again if it never is. */
  static async launch(name: string, port: number, command: string, args: readonly string[], options: ServerOptions): Promise<ServerProcess> {
    return new ServerProcess(name, port, command, args, options).whenReady(options.ready, options.readyTimeoutMs);
  }

  /** Waits until ready() is true (at most timeoutMs); throws with the process's output if it exits or times out first. */
  protected async whenReady(ready: () => Promise<boolean>, timeoutMs = 60_000): Promise<this> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) {
        this.kill();
        throw new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before it was ready:\n${this.logs()}`);
      }
      if (await ready().catch(() => false)) return this;
      if (Date.now() > deadline) {
        this.kill();
        throw new Error(`${this.name} on port ${this.port} was not ready within ${timeoutMs} ms:\n${this.logs()}`);
      }
      await sleep(100);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the process wrote to stdout and stderr (the last part of it). */
  logs(): string {
    return this.output.toString();
  }

  /** Sends signal and waits for the exit (at most timeoutMs, then SIGKILL and an error); resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<number | string> {
    if (!this.running) return this.child.exitCode ?? this.child.signalCode ?? 'exited';
    this.child.kill(signal);
    const code = await exited(this.child, timeoutMs);
    if (code === null) {
      this.kill();
      await exited(this.child, 5_000);
      throw new Error(`${this.name} did not exit within ${timeoutMs} ms of ${signal}:\n${this.logs()}`);
    }
    return code;
  }

  /** SIGKILL if still running. Safe to call twice. */
  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }
}
