// A container run as a local process: its own process group (so `sh -c` children die with it), combined
// stdout/stderr kept to a log file and an in-memory tail, exit code as a container runtime reports it
// (128 + signal number when killed by a signal).
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";

export interface ExitInfo {
  exitCode: number;
  signal?: string;
  /** Set when the process could not be started (exec failure). */
  startError?: string;
  finishedAt: number;
}

const TAIL_BYTES = 64 * 1024;

export class LocalProcess {
  readonly startedAt = Date.now();
  readonly exited: Promise<ExitInfo>;
  private readonly child: ChildProcess;
  private tail: Buffer = Buffer.alloc(0);
  private done = false;
  private readonly log: fs.WriteStream;

  constructor(argv: string[], opts: { env: Record<string, string>; cwd: string; logFile: string }) {
    this.log = fs.createWriteStream(opts.logFile, { flags: "a" });
    // The log is opened in the background: a pod deleted meanwhile (its directory removed) must not end the whole sim
    // with an unhandled 'error' (a 1,000-node rollout bench lost its sim daemon so: ENOENT on check.log); the process
    // and its in-memory tail go on without the file.
    this.log.on("error", () => undefined);
    this.child = spawn(argv[0], argv.slice(1), { env: opts.env, cwd: opts.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const onData = (chunk: Buffer) => {
      this.log.write(chunk);
      this.tail = Buffer.concat([this.tail, chunk]);
      if (this.tail.length > TAIL_BYTES * 2) this.tail = this.tail.subarray(this.tail.length - TAIL_BYTES);
    };
    this.child.stdout!.on("data", onData);
    this.child.stderr!.on("data", onData);
    this.exited = new Promise<ExitInfo>((resolve) => {
      this.child.once("error", (err: NodeJS.ErrnoException) => {
        if (this.done) return;
        this.done = true;
        this.log.end();
        // What containerd/runc answer when the entrypoint cannot be executed.
        const why = err.code === "ENOENT" ? "executable file not found in $PATH" : err.code === "EACCES" ? "permission denied" : err.message;
        resolve({
          exitCode: 128,
          startError: `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "${argv[0]}": ${why}: unknown`,
          finishedAt: Date.now(),
        });
      });
      // When the main process exits the container is gone: kill what is left of its process group, then resolve
      // once stdio has drained ("close"), or shortly after if a stray child still holds the pipes.
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.done) return;
        this.done = true;
        this.log.end();
        const signo = signal ? os.constants.signals[signal] : undefined;
        resolve({ exitCode: code ?? (signo ? 128 + signo : 1), signal: signal ?? undefined, finishedAt: Date.now() });
      };
      this.child.once("exit", (code, signal) => {
        if (this.child.pid) {
          try {
            process.kill(-this.child.pid, "SIGKILL");
          } catch {
            // group already gone
          }
        }
        setTimeout(() => finish(code, signal), 200).unref();
      });
      this.child.once("close", (code, signal) => finish(code, signal));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** The combined stdout/stderr written so far (the last 64 KiB or more). */
  output(): Buffer {
    return this.tail;
  }

  private signal(sig: NodeJS.Signals): void {
    if (this.done || !this.child.pid) return;
    try {
      process.kill(-this.child.pid, sig);
    } catch {
      try {
        this.child.kill(sig);
      } catch {
        // already gone
      }
    }
  }

  /** SIGTERM to the process group, SIGKILL after the grace period (like a container stop). */
  async stop(graceMs: number): Promise<ExitInfo> {
    if (this.done) return this.exited;
    this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), Math.max(0, graceMs));
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Immediate SIGKILL of the process group (sim shutdown). */
  kill(): void {
    this.signal("SIGKILL");
  }
}
