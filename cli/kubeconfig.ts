// The kubeconfig found as kubectl finds it, after client-go's loading rules (kubernetes/client-go
// tools/clientcmd/loader.go at 32ce75a7, NewDefaultClientConfigLoadingRules, Load, ResolveLocalPaths):
// - --kubeconfig FILE: that file only, and it must exist;
// - else $KUBECONFIG, a list of files (":"-separated; ";" on Windows), duplicates dropped, missing files skipped; the
//   files are merged and the first file that sets a value wins: current-context, and each cluster, user and context
//   by name (a later file's entry of the same name is ignored whole);
// - else ~/.kube/config.
// Relative file references (certificate-authority, client-certificate, client-key, tokenFile, and an exec command
// with a path separator) are resolved against the directory of the file that holds them, as ResolveLocalPaths does.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { CliError, cliMsg } from "./messages";

export interface LoadedKubeconfig {
  /** The first file read (relative paths of the merged text are already absolute). */
  file: string;
  /** Every file merged, in precedence order. */
  files: string[];
  /** The merged kubeconfig as YAML text. */
  text: string;
}

type Named = { name?: unknown; [k: string]: unknown };
type Doc = Record<string, unknown>;

/** Where kubectl would look, in order: the flag's file alone, else $KUBECONFIG's list, else ~/.kube/config. */
export function kubeconfigPrecedence(flag: string | undefined, env: string | undefined, home: string): { explicit: boolean; files: string[] } {
  if (flag) return { explicit: true, files: [flag] };
  const list = (env ?? "").split(path.delimiter).filter((p) => p !== "");
  if (list.length) return { explicit: false, files: [...new Set(list)] };
  return { explicit: false, files: [path.join(home, ".kube", "config")] };
}

function resolveIn(base: string, obj: unknown, keys: readonly string[]): void {
  if (!obj || typeof obj !== "object") return;
  const o = obj as Record<string, unknown>;
  for (const k of keys) {
    const v = o[k];
    if (typeof v === "string" && v !== "" && !path.isAbsolute(v)) o[k] = path.join(base, v);
  }
}

/** Makes the file references of one file's document absolute (client-go ResolveLocalPaths). */
function resolveLocalPaths(doc: Doc, file: string): void {
  const base = path.dirname(path.resolve(file));
  for (const c of Array.isArray(doc.clusters) ? (doc.clusters as Named[]) : []) resolveIn(base, c?.cluster, ["certificate-authority"]);
  for (const u of Array.isArray(doc.users) ? (doc.users as Named[]) : []) {
    const user = u?.user as Record<string, unknown> | undefined;
    resolveIn(base, user, ["client-certificate", "client-key", "tokenFile"]);
    const exec = user?.exec as Record<string, unknown> | undefined;
    if (typeof exec?.command === "string" && exec.command.includes(path.sep)) resolveIn(base, exec, ["command"]);
  }
}

/** Merges documents, the first one that sets a value winning (client-go Load). */
export function mergeKubeconfigs(docs: readonly Doc[]): Doc {
  const out: Doc = { apiVersion: "v1", kind: "Config" };
  for (const list of ["clusters", "users", "contexts"] as const) {
    const seen = new Set<string>();
    const merged: Named[] = [];
    for (const d of docs) {
      for (const e of Array.isArray(d[list]) ? (d[list] as Named[]) : []) {
        if (!e || typeof e.name !== "string" || seen.has(e.name)) continue;
        seen.add(e.name);
        merged.push(e);
      }
    }
    out[list] = merged;
  }
  const current = docs.map((d) => d["current-context"]).find((c) => typeof c === "string" && c !== "");
  if (current !== undefined) out["current-context"] = current;
  const prefs = docs.map((d) => d.preferences).find((p) => p && typeof p === "object");
  if (prefs !== undefined) out.preferences = prefs;
  return out;
}

function readDoc(file: string): Doc {
  const text = fs.readFileSync(file, "utf8");
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new CliError(cliMsg.kubeconfigInvalid(`${file}: ${(err as Error).message.split("\n")[0]}`));
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new CliError(cliMsg.kubeconfigInvalid(`${file}: not a kubeconfig document`));
  return doc as Doc;
}

const reason = (err: unknown) => (err as Error).message.replace(/^[A-Z]+: /, "");

/** The kubeconfig as kubectl would load it; a CliError naming the files when there is none or one is unreadable. */
export function loadKubeconfig(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, home = os.homedir()): LoadedKubeconfig {
  const { explicit, files } = kubeconfigPrecedence(flag, env.KUBECONFIG, home);
  const docs: Doc[] = [];
  const read: string[] = [];
  let firstMissing: { file: string; err: unknown } | undefined;
  for (const file of files) {
    let doc: Doc;
    try {
      doc = readDoc(file);
    } catch (err) {
      if (err instanceof CliError) throw err;
      // A missing file in the list is skipped, as kubectl does; the file given with --kubeconfig must exist.
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && !explicit) {
        firstMissing ??= { file, err };
        continue;
      }
      throw new CliError(cliMsg.kubeconfigUnreadable(file, reason(err)));
    }
    resolveLocalPaths(doc, file);
    docs.push(doc);
    read.push(file);
  }
  if (docs.length === 0) {
    if (!flag && !env.KUBECONFIG) throw new CliError(cliMsg.noKubeconfig(files[0]));
    throw new CliError(cliMsg.kubeconfigUnreadable(firstMissing!.file, reason(firstMissing!.err)));
  }
  const text = YAML.stringify(docs.length === 1 ? docs[0] : mergeKubeconfigs(docs));
  return { file: read[0], files: read, text };
}
