// A CPU profile of a rollout, for finding what the provider spends its time on at 1,000 nodes (issue 23; the rollout
// bench's BENCH_CPU_PROF): with TALOS_GATE_CPU_PROFILE=<file>, the provider profiles itself from the start of a
// rollout to its end and writes the profile there (Chrome DevTools / speedscope format). `node --cpu-prof` cannot: the
// engine ends the provider process with a signal, and a profile is written only at a normal exit. Off by default.
import * as fs from "node:fs";
import { Session } from "node:inspector";

/** Starts profiling when asked; the returned function stops and writes the profile (never throws). */
export function profileCpu(): () => Promise<void> {
  const file = process.env.TALOS_GATE_CPU_PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => {
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result)));
  });
  let started: Promise<unknown> | undefined;
  try {
    session.connect();
    started = post("Profiler.enable").then(() => post("Profiler.start"));
  } catch {
    return async () => undefined;
  }
  return async () => {
    try {
      await started;
      const { profile } = await post("Profiler.stop");
      fs.writeFileSync(file, JSON.stringify(profile));
    } catch {
      // a diagnostic: never fails the rollout
    } finally {
      session.disconnect();
    }
  };
}
