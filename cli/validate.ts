// `talos-gate validate [--json] [--allowed-dir <dir>] <template.yaml>`: validates an Omni cluster template offline.
// Valid: prints "valid" and a one-line summary (or, with --json, the normalized model) and exits 0.
// Invalid: prints every error (file:line:column, document, field, message), then Omni's aggregated text as omnictl
// would print it, and exits 1.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseTemplate, DEFAULT_LIMITS, type ClusterTemplate, type TemplateError } from "../provider/template";
import { cli as msg } from "../provider/template/messages";

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function machinesOf(set: ClusterTemplate["controlPlane"]): string {
  if (set.machineClass) return `class ${JSON.stringify(set.machineClass.name)} (${set.machineClass.size})`;
  return String(set.machines.length);
}

export function summary(t: ClusterTemplate): string {
  const workers = t.workers.length === 0 ? "0" : t.workers.map((w) => `${w.name ? w.name + " " : ""}${machinesOf(w)}`).join(", ");
  return [
    `cluster ${JSON.stringify(t.cluster.name)}`,
    `kubernetes ${t.cluster.kubernetesVersion}`,
    `talos ${t.cluster.talosVersion}`,
    `machines: controlplane ${machinesOf(t.controlPlane)}, workers ${workers}`,
    plural(t.healthchecks.length, "healthcheck"),
    plural(t.manifests.length, "manifest"),
  ].join("; ");
}

function located(file: string, e: TemplateError): string {
  const where = e.line !== undefined ? `${file}:${e.line}:${e.column ?? 1}` : file;
  const field = e.path ? ` ${e.path}` : "";
  return `${where}: ${e.document}${field}: ${e.message}`;
}

export async function run(argv: string[]): Promise<number> {
  let json = false;
  let allowedDir: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--json") json = true;
    else if (a === "--allowed-dir") allowedDir = argv[++i];
    else if (a.startsWith("--allowed-dir=")) allowedDir = a.slice("--allowed-dir=".length);
    else if (a === "-h" || a === "--help") {
      process.stdout.write(msg.validUsage + "\n");
      return 0;
    } else files.push(a);
  }
  if (files.length !== 1 || (allowedDir !== undefined && allowedDir === "")) {
    process.stderr.write(msg.validUsage + "\n");
    return 2;
  }
  const file = files[0]!;
  const abs = path.resolve(file);
  let data: Buffer;
  try {
    const st = fs.statSync(abs);
    // refuse huge files before reading them
    if (st.size > DEFAULT_LIMITS.maxBytes) data = Buffer.alloc(st.size > 2 * DEFAULT_LIMITS.maxBytes ? DEFAULT_LIMITS.maxBytes + 1 : st.size);
    else data = fs.readFileSync(abs);
    if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  } catch (err) {
    process.stderr.write(`Error: ${msg.cannotRead(file, (err as Error).message)}\n`);
    return 1;
  }
  const baseDir = path.dirname(abs);
  const result = parseTemplate(data, {
    baseDir,
    allowedRoot: allowedDir === undefined ? baseDir : path.resolve(baseDir, allowedDir),
    readFile: (p) => fs.readFileSync(p),
    realPath: (p) => fs.realpathSync(p),
  });
  if (!result.ok) {
    for (const e of result.error.errors) process.stderr.write(located(file, e) + "\n");
    process.stderr.write(`\nError: ${result.error.message.trimEnd()}\n`);
    return 1;
  }
  if (json) process.stdout.write(JSON.stringify(result.template, null, 2) + "\n");
  else process.stdout.write(`${msg.valid}\n${summary(result.template)}\n`);
  return 0;
}
