// One process per embedded database: an exclusive lock on CHAT_DATA_DIR/pglite.lock, held for the life of the
// process. Two processes on one PGlite directory would each hand out the same ids and overwrite each other's
// writes, so the second one must not start.
//
// The lock is the kernel's flock(2) on an open file description this process keeps open. Node has no flock of
// its own, so a short-lived helper (`flock`, else `perl`, else `python3`) takes it on a descriptor it inherits
// from this process, and exits: the lock belongs to the open file description, which this process still holds,
// so it stays taken until this process closes it or dies in any way (SIGKILL and power loss included: the kernel
// releases it, nothing stale is left behind). A restart after a crash takes it at once.
//
// Where no helper exists (a distroless image, Windows) or the filesystem does not keep such a lock (some network
// filesystems emulate flock with per-process locks), the lock file's pid is the only guard: a live process of
// that pid on this host refuses the start, a dead one does not. A warning says so.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const LOCK_FILE_NAME = 'pglite.lock';

/** What the holder writes into the lock file, for the message of a refused start. */
interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  readonly started_at: string;
}

/** A second process on a data directory: main.ts prints the message (one line) and exits with exitCode. */
export class DataDirLockedError extends Error {
  readonly exitCode = 1;
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | null,
  ) {
    const who = owner
      ? `another Parley process (pid ${owner.pid}${owner.hostname !== hostname() ? ` on ${owner.hostname}` : ''}, started ${owner.started_at})`
      : 'another Parley process';
    super(
      `The data directory ${dataDir} is in use by ${who}: the embedded database allows one process per directory. ` +
        `Stop that process first, or give this one another CHAT_DATA_DIR (several nodes need DATABASE_URL, PostgreSQL).`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly path: string;
  /** How the lock is held: the kernel's flock, or only the pid in the lock file (see the module comment). */
  readonly kind: 'flock' | 'pid';
  /** Releases the lock (closes the file); the file stays, so that no other process can lock an unlinked one. */
  release(): void;
}

type HelperResult = 'locked' | 'busy' | 'unavailable';

/** Helpers that flock(2) their descriptor 3 without blocking: exit 0 locked, 1 busy, anything else failed. */
const HELPERS: readonly (readonly [string, readonly string[]])[] = [
  // util-linux and BusyBox: exit 1, silently, when the lock is taken (and 1 with a message on other errors).
  ['flock', ['--exclusive', '--nonblock', '3']],
  ['perl', ['-MFcntl=:flock', '-e', 'open(my $fh, "<&=", 3) or exit 2; exit(flock($fh, LOCK_EX | LOCK_NB) ? 0 : ($!{EWOULDBLOCK} ? 1 : 2))']],
  [
    'python3',
    ['-c', 'import fcntl, sys\ntry:\n fcntl.flock(3, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n sys.exit(1)\nexcept OSError:\n sys.exit(2)'],
  ],
];

/** The first helper that works on this machine, remembered (its result on one descriptor otherwise). */
let workingHelper: (typeof HELPERS)[number] | null | undefined;

function runHelper(helper: (typeof HELPERS)[number], fd: number): HelperResult {
  const [command, args] = helper;
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe', fd], timeout: 10_000, encoding: 'utf8' });
  if (result.error) return 'unavailable'; // not installed (ENOENT), or could not run
  if (result.status === 0) return 'locked';
  // flock(1) says nothing when the lock is busy, and names the problem otherwise.
  if (result.status === 1 && (command !== 'flock' || result.stderr.trim() === '')) return 'busy';
  return 'unavailable';
}

/** Tries the helpers in order on fd; null when none can lock here. */
function flockWithHelper(fd: number): 'locked' | 'busy' | null {
  const candidates = workingHelper ? [workingHelper] : workingHelper === null ? [] : HELPERS;
  for (const helper of candidates) {
    const result = runHelper(helper, fd);
    if (result === 'unavailable') continue;
    workingHelper = helper;
    return result;
  }
  if (workingHelper === undefined) workingHelper = null;
  return null;
}

function readOwner(path: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof owner.pid !== 'number' || typeof owner.hostname !== 'string' || typeof owner.started_at !== 'string') return null;
    return owner as LockOwner;
  } catch {
    return null; // empty (the holder has not written it yet) or not ours
  }
}

function writeOwner(fd: number): void {
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), started_at: new Date().toISOString() };
  ftruncateSync(fd, 0);
  writeSync(fd, JSON.stringify(owner) + '\n', 0);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, but another user's
  }
}

/**
 * Takes the data directory's lock, or throws DataDirLockedError when another process holds it. onWarning hears
 * when only the pid guard is available.
 */
export function lockDataDir(dataDir: string, onWarning: (message: string) => void = () => {}): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE_NAME);
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    closeSync(fd);
  };
  try {
    const taken = flockWithHelper(fd);
    if (taken === 'busy') throw new DataDirLockedError(dataDir, readOwner(path));
    if (taken === 'locked' && holdsAgainstOthers(path)) {
      writeOwner(fd);
      return { path, kind: 'flock', release };
    }
    // No helper, or a filesystem where the lock did not outlive the helper: the pid is all there is.
    const owner = readOwner(path);
    if (owner && owner.pid !== process.pid && owner.hostname === hostname() && isAlive(owner.pid)) {
      throw new DataDirLockedError(dataDir, owner);
    }
    onWarning(
      taken === null
        ? `No flock, perl or python3 to lock ${path} with: only its pid guards the data directory against a second process.`
        : `The filesystem of ${path} does not keep flock locks: only its pid guards the data directory against a second process.`,
    );
    writeOwner(fd);
    return { path, kind: 'pid', release };
  } catch (err) {
    release();
    throw err;
  }
}

/** True when a second open of the file cannot take the lock: ours holds. */
function holdsAgainstOthers(path: string): boolean {
  const probe = openSync(path, constants.O_RDWR);
  try {
    return flockWithHelper(probe) === 'busy';
  } finally {
    closeSync(probe);
  }
}
